"""The device panel as an MCP App through the bridge (the MCP Apps extension, npm
@modelcontextprotocol/ext-apps): a simulated device behind a bridge over streamable HTTP;
the SDK client sees the `ui://umcp/panel` resource and the tools pointing at it, and the
HTML it reads is built from the web console's own panel.js; then headless Chromium hosts
that HTML the way a client does, with ext-apps' own host side (AppBridge and
PostMessageTransport, bundled from node_modules for the test): the panel lists the
device's tools, and letting go of the volume slider produces a tools/call that sets the
simulated device's volume. Screenshots: build/artifacts/mcp-app/."""

import json
import os
import re
import subprocess
import sys

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.bridge.test_bridge import free_port, modern_request, post, wait_for_line
from tools.bridge import app as panel_app
from tests.support import ROOT
from tools.childprocess import stop_process
from tools.sim.board import SimBoard, config_for
from tests.support.webharness import browser_page

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
TOKEN = "app-token"
KITCHEN = "aa:aa:aa:aa:aa:07"
VOLUME = "self.audio_speaker.set_volume"
ARTIFACTS = os.path.join(ROOT, "build", "artifacts", "mcp-app")
EXT_APPS = os.path.join(ROOT, "node_modules", "@modelcontextprotocol", "ext-apps")
ROLLDOWN = os.path.join(ROOT, "node_modules", ".bin", "rolldown")
NODE = os.path.join(ROOT, "node_modules", ".bin", "node")


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    """One bridge over HTTP (--user-tools, the device as `kitchen`) with a simulated device."""
    tmp = tmp_path_factory.mktemp("bridge-app")
    port, http_port = free_port(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.bridge", "--port", str(port), "--token", TOKEN, "--host", "127.0.0.1",
         "--alias", KITCHEN + "=kitchen", "--user-tools", "--http", str(http_port)],
        cwd=ROOT, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_line(process.stderr, "MCP clients connect to http://127.0.0.1:%d/mcp" % http_port)
        with open(tmp / "device.log", "w") as log, \
                SimBoard(config_for(url="ws://127.0.0.1:%d/xiaozhi/v1/" % port, token=TOKEN, device_id=KITCHEN),
                         root=str(tmp / "state"), log=log):
            yield "http://127.0.0.1:%d/mcp" % http_port
    finally:
        stop_process(process)


async def online(client):
    with anyio.fail_after(30):
        while True:
            result = await client.call_tool("bridge__list_devices", {})
            if any(d["online"] for d in result.structured_content["devices"]):
                return
            await anyio.sleep(0.1)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_the_client_sees_the_panel_resource_and_the_tools_that_show_it(bridge, mode):
    async with Client(bridge, mode=mode, read_timeout_seconds=30) as client:
        await online(client)
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        show = tools["bridge__show_panel"].model_dump(by_alias=True, exclude_none=True)
        assert show["_meta"] == {"ui": {"resourceUri": "ui://umcp/panel"}, "ui/resourceUri": "ui://umcp/panel"}
        listing = tools["bridge__device_tools"].model_dump(by_alias=True, exclude_none=True)
        assert listing["_meta"]["ui"] == {"resourceUri": "ui://umcp/panel", "visibility": ["app"]}
        assert "_meta" not in tools["kitchen__audio_speaker_set_volume"].model_dump(by_alias=True, exclude_none=True)

        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert resources["ui://umcp/panel"].mime_type == "text/html;profile=mcp-app"
        contents = (await client.read_resource("ui://umcp/panel")).contents
        assert len(contents) == 1 and contents[0].mime_type == "text/html;profile=mcp-app"
        html = contents[0].text
        # Not a copy: the console's files as they are now (panel.js with only its import
        # and `export` keywords taken out by the bundler), the view adapter, ext-apps' App.
        panel = read(os.path.join(ROOT, "tools", "backend", "static", "panel.js"))
        body = panel[panel.index("const MAX_FEED"):panel.index("export { validate }")]
        assert "export function showResult" in body
        assert re.sub(r"^export (?=function )", "", body, flags=re.M) in html
        form = read(os.path.join(ROOT, "tools", "backend", "static", "form.js"))
        assert re.sub(r"^export (?=function )", "", form, flags=re.M) in html
        assert read(os.path.join(ROOT, "tools", "backend", "static", "style.css")) in html
        adapter = read(os.path.join(ROOT, "tools", "bridge", "static", "mcp-app.js"))
        assert adapter[adapter.index("function failure"):adapter.index("export function bridgeHost")] in html
        assert html.count("<script") == 1 and html.count("</script>") == 1 and "<script src" not in html

        shown = await client.call_tool("bridge__show_panel", {"device": "kitchen"})
        assert shown.structured_content["device"] == "kitchen" and not shown.is_error
        assert (await client.call_tool("bridge__show_panel", {})).structured_content["device"] == "kitchen"
        missing = await client.call_tool("bridge__show_panel", {"device": "attic"})
        assert missing.is_error and "no device 'attic'" in missing.content[0].text
        plain = (await client.call_tool("bridge__device_tools", {"device": "kitchen"})).structured_content["tools"]
        every = (await client.call_tool("bridge__device_tools", {"device": "kitchen", "withUserTools": True}))
        names = {t["name"] for t in plain}
        assert VOLUME in names and "self.reboot" not in names
        # each with the name the bridge lists it by, the one the panel calls it by
        assert all(t["bridgeName"] in tools for t in plain) and len(plain) > 5
        owner = {t["name"] for t in every.structured_content["tools"] if t.get("userOnly")}
        assert {"self.reboot", "self.camera.get_photo"} <= owner and not owner & names


def test_the_bridge_declares_the_extension(bridge):
    """SEP-2133 extensions are a 2026-07-28 field: server/discover carries ours."""
    status, body = post(bridge, modern_request("server/discover"))
    assert status == 200, body
    assert body["result"]["capabilities"]["extensions"] == {"io.modelcontextprotocol/ui": {}}


def test_the_vendored_app_class_is_the_pinned_package():
    """static/ext-apps-app.js is ext-apps' app-with-deps.js at the version package.json pins."""
    with open(os.path.join(ROOT, "package.json")) as f:
        pinned = json.load(f)["dependencies"]["@modelcontextprotocol/ext-apps"]
    with open(os.path.join(EXT_APPS, "package.json")) as f:
        assert json.load(f)["version"] == pinned
    assert read(os.path.join(EXT_APPS, "dist", "src", "app-with-deps.js")) == \
        read(os.path.join(ROOT, "tools", "bridge", "static", "ext-apps-app.js"))
    assert read(os.path.join(EXT_APPS, "LICENSE")) == read(os.path.join(ROOT, "tools", "bridge", "static", "ext-apps-LICENSE"))


def test_the_bundler_keeps_modules_apart():
    sources = {
        "main.js": 'import { twice, NAME as label } from "./lib.js";\nexport const out = twice(2) + label;\n',
        "lib.js": 'const hidden = 2;\nexport function twice(x) { return x * hidden; }\nconst NAME = "</script>";\nexport { NAME };\n',
    }
    code = panel_app.bundle("main.js", sources.__getitem__)
    assert "</script" not in code and code.index("__umcp_lib_js = ") < code.index("__umcp_main_js = ")
    assert "const { twice, NAME: label } = __umcp_lib_js;" in code
    checked = subprocess.run([NODE, "--input-type=module", "-e", code + "\nconsole.log(__umcp_main_js.out);"],
                             capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert checked.stdout.strip() == "4</script>", checked.stderr


# The host page's script: ext-apps' AppBridge, as an MCP Apps client runs it. It reads the
# tool's UI resource, loads it into a sandboxed iframe, answers the view's requests (its
# tools/call go to the bridge through window.relay, which the test implements with the
# SDK client) and sends the tool's input and result, as a client does after the call.
HOST_SCRIPT = """async () => {
  const { AppBridge, PostMessageTransport } = window.ExtAppsHost;
  const tools = await window.relay("tools/list", {});
  const show = tools.tools.find((t) => t.name === "bridge__show_panel");
  const uri = show._meta.ui.resourceUri;
  const read = await window.relay("resources/read", { uri });
  const content = read.contents[0];
  if (content.mimeType !== "text/html;profile=mcp-app") throw new Error(`not an app: ${content.mimeType}`);
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = uri;
  document.getElementById("conversation").append(iframe);
  const bridge = new AppBridge(null, { name: "umcp test host", version: "1.0.0" },
    { serverTools: {}, serverResources: {} });
  bridge.oncalltool = async (params) => {
    const answer = await window.relay("tools/call", params);
    if (answer.jsonrpcError) throw Object.assign(new Error(answer.jsonrpcError.message), { code: answer.jsonrpcError.code });
    return answer;
  };
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = `${height}px`; };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = content.text;
  await initialized;
  const args = { device: "kitchen" };
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(await window.relay("tools/call", { name: "bridge__show_panel", arguments: args }));
  window.appBridge = bridge;
  return { app: bridge.getAppVersion() };
}"""

SLIDE = """(value) => {
  const slider = document.querySelector('details[data-tool="self.audio_speaker.set_volume"] input[type=range]');
  slider.value = String(value);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  slider.dispatchEvent(new Event("change", { bubbles: true }));
}"""


async def shot(page, name):
    # The iframe repaints a moment after the host resizes it to the view's reported size.
    await page.wait_for_timeout(400)
    await page.screenshot(path=os.path.join(ARTIFACTS, name + ".png"), full_page=True)


def host_bundle(folder):
    """ext-apps' host side (app-bridge) as one browser script, window.ExtAppsHost."""
    entry = os.path.join(ROOT, "build", "mcp-app-host-entry.mjs")
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    with open(entry, "w") as f:
        f.write('export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";\n')
    out = os.path.join(str(folder), "ext-apps-host.js")
    if not os.access(ROLLDOWN, os.X_OK):
        pytest.fail("no rolldown in node_modules: run `make setup` (npm ci, package.json pins it)")
    subprocess.run([ROLLDOWN, entry, "--format", "iife", "--name", "ExtAppsHost", "--file", out],
                   check=True, cwd=ROOT, capture_output=True, timeout=120)
    return read(out)


async def test_an_apps_host_shows_the_panel_and_its_slider_calls_the_device(bridge, tmp_path):
    os.makedirs(ARTIFACTS, exist_ok=True)
    host_code = host_bundle(tmp_path)
    calls = []
    # Tall enough for the whole panel: full-page shots do not paint a sandboxed (out of
    # process) iframe beyond the viewport.
    async with Client(bridge, read_timeout_seconds=30) as client, \
            browser_page(tmp_path, viewport={"width": 1100, "height": 1900}) as page:
        await online(client)

        async def relay(method, params):
            if method == "tools/list":
                result = await client.list_tools()
            elif method == "resources/read":
                result = await client.read_resource(params["uri"])
            elif method == "tools/call":
                calls.append((params["name"], params.get("arguments")))
                try:
                    result = await client.call_tool(params["name"], params.get("arguments") or {})
                except MCPError as error:  # the host answers the view with the same error
                    return {"jsonrpcError": {"code": error.code, "message": error.message}}
            else:
                raise ValueError("the test host relays no %s" % method)
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")

        await page.expose_function("relay", relay)
        await page.set_content('<!doctype html><title>a conversation</title><style>iframe{width:100%;'
                               'border:1px solid #888;height:600px}</style><main id="conversation">'
                               '<p>user: show me the kitchen speaker</p></main>')
        await page.add_script_tag(content=host_code)
        hosted = await page.evaluate(HOST_SCRIPT)
        assert hosted["app"]["name"] == "umcp device panel"

        frame = await (await page.query_selector("iframe")).content_frame()
        await frame.wait_for_selector('#panel[data-ready="true"] details[data-tool="%s"]' % VOLUME, timeout=30000)
        shown = await frame.eval_on_selector_all("#panel details.tool[data-tool]", "ds => ds.map(d => d.dataset.tool)")
        listed = (await client.call_tool("bridge__device_tools", {"device": "kitchen"})).structured_content["tools"]
        assert shown == [t["name"] for t in listed] and len(shown) > 5
        assert await frame.text_content("#panel h2") == "kitchen: tools"
        assert calls[:3] == [("bridge__show_panel", {"device": "kitchen"}),
                             ("bridge__device_tools", {"device": "kitchen", "withUserTools": False}),
                             ("kitchen__get_device_status", {})]
        # The slider starts where the device is (the settings' default), as in the console.
        await frame.wait_for_function(
            "document.querySelector('details[data-tool=\"%s\"] input[type=range]').value === '70'" % VOLUME)
        await shot(page, "01-panel-in-host")

        # The slider is the control, in the app as in the console: let go at 42.
        await frame.evaluate(SLIDE, 42)
        volume = frame.locator('details[data-tool="%s"] .result[data-state=ok]' % VOLUME)
        await volume.wait_for(timeout=15000)
        assert (await volume.text_content()).startswith("true")
        assert ("kitchen__audio_speaker_set_volume", {"volume": 42}) in calls  # VOLUME, as the bridge names it
        status = await client.call_tool("kitchen__get_device_status", {})
        assert json.loads(status.content[0].text)["audio_speaker"]["volume"] == 42
        await shot(page, "02-volume-42")

        # Any tool by name: the bridge's JSON-RPC error reaches the panel with its code. (The
        # iframe has no allow-forms: the panel's Call buttons work on the click.)
        raw = frame.locator("details.raw-call")
        await raw.locator("summary").click()
        await raw.locator("input[name=raw-name]").fill("self.no_such_tool")
        await raw.locator("button[type=submit]").click()
        refused = raw.locator(".result[data-state=error]")
        await refused.wait_for()
        text = await refused.text_content()
        # (a name the device does not list goes as ALIAS__name, for the bridge to refuse)
        assert text.startswith("error -32602: ") and "kitchen__self.no_such_tool" in text, text
        assert calls[-1] == ("kitchen__self.no_such_tool", {})

        # The owner's tools behind the switch, as in the console (the bridge has --user-tools).
        await frame.check(".panel-head input.switch")
        await frame.wait_for_selector('details[data-tool="self.reboot"] .badge.user')
        assert ("bridge__device_tools", {"device": "kitchen", "withUserTools": True}) in calls[-2:]
        # Relisted, the forms start from the status read again: the slider stays at 42.
        await frame.wait_for_function(
            "document.querySelector('details[data-tool=\"%s\"] input[type=range]').value === '42'" % VOLUME)
        await shot(page, "03-user-only-tools")
        assert not page.problems, page.problems
