"""tools.bridge as a real subprocess with THREE devices behind it (two simulated umcp
devices running the real firmware, with a page limit that forces several tools/list
pages, and an in-process fake with MCP resources, tests/support/fakedevice.py), and the official
MCP SDK client on the other side: default mode (2026-07-28, server/discover) and
mode="legacy" (initialize, 2025-11-25), over stdio and over streamable HTTP.

The devices stay up for the whole module and reconnect to each new bridge on the same
port (short backoff), as boards do. Over stdio the bridge runs behind tests/support/wiretap.py,
and every line it wrote is checked against the SDK's types for the revision in use."""

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import warnings

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from tests.support.fakedevice import FakeDevice
from tests.support.mcphttp import HttpTap, check_messages, server_methods
from tests.support.toolnames import check_tool_names
from tests.backend.test_backend import simulated_photo
from tests.support import ROOT
from tools.childprocess import stop_process
from tools.sim.board import SimBoard, config_for

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
TOKEN = "bridge-token"
PAGE_LIMIT = 1200  # several tools/list pages from each simulated device
READ_TIMEOUT = 30
KITCHEN, SECOND, FAKE = "aa:aa:aa:aa:aa:01", "bb:bb:bb:bb:bb:02", "fa:ce:00:00:00:03"
ALIASES = ("--alias", KITCHEN + "=kitchen", "--alias", FAKE + "=lab")  # SECOND keeps its default
SECOND_ALIAS = "dev-bbbb02"
USER_ONLY = {"reboot", "camera_get_photo"}  # self.reboot, self.camera.get_photo, as the bridge names them
STATUS = "umcp://lab/device/status"  # the fake's device://status, as the bridge names it
FAST_RECONNECT = {"backoff_min": 0.1, "backoff_max": 0.3, "stable_after": 1}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    """The ws port the bridges listen on, and the three devices that keep connecting to it."""
    tmp = tmp_path_factory.mktemp("bridge")
    port = free_port()
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % port
    fake = FakeDevice(url, TOKEN, FAKE).start()
    with open(tmp / "devices.log", "w") as log, \
            SimBoard(config_for(url=url, token=TOKEN, device_id=KITCHEN, max_payload=PAGE_LIMIT, **FAST_RECONNECT),
                     root=str(tmp / "a"), log=log), \
            SimBoard(config_for(url=url, token=TOKEN, device_id=SECOND, max_payload=PAGE_LIMIT, **FAST_RECONNECT),
                     root=str(tmp / "b"), log=log):
        yield {"port": port, "url": url, "fake": fake, "tmp": tmp}
    fake.stop()


def bridge_args(port, *extra):
    return ["-m", "tools.bridge", "--port", str(port), "--token", TOKEN, "--host", "127.0.0.1",
            *ALIASES, *extra]


def stdio_bridge(rig, wire_log, *extra):
    return StdioServerParameters(command=sys.executable, cwd=ROOT, args=[
        os.path.join(ROOT, "tests", "support", "wiretap.py"), str(wire_log), sys.executable,
        *bridge_args(rig["port"], "--user-tools", *extra)])


@pytest.fixture(scope="module")
def http_bridge(rig):
    """One bridge over streamable HTTP (no --user-tools) for the HTTP tests; started after
    the stdio tests (it takes the devices' port)."""
    http_port = free_port()
    bridge = subprocess.Popen([sys.executable, *bridge_args(rig["port"], "--http", str(http_port))], cwd=ROOT,
                              text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    wait_for_line(bridge.stderr, "MCP clients connect to http://127.0.0.1:%d/mcp" % http_port)
    yield {"url": "http://127.0.0.1:%d/mcp" % http_port, "process": bridge}
    stop_process(bridge)


def wait_for_line(stream, text):
    """Read `stream` up to a line containing `text`, then drain the rest on a thread."""
    for line in stream:
        if text in line:
            threading.Thread(target=stream.read, daemon=True).start()
            return
    raise AssertionError("the bridge ended without saying %r" % text)


async def devices_online(client, count=3):
    """Until `count` devices are online (they reconnect to each new bridge)."""
    with anyio.fail_after(READ_TIMEOUT):
        while True:
            result = await client.call_tool("bridge__list_devices", {})
            devices = result.structured_content["devices"]
            if sum(d["online"] for d in devices) >= count:
                return {d["alias"]: d for d in devices}
            await anyio.sleep(0.1)


async def exercise(client, rig, user_tools):
    """Tools of every device, calls on each, errors, photos, resources."""
    devices = await devices_online(client)
    assert devices["kitchen"]["device_id"] == KITCHEN and devices[SECOND_ALIAS]["device_id"] == SECOND
    assert devices["lab"]["server_info"]["name"] == "fake-umcp"

    listing = await client.list_tools()
    assert listing.next_cursor is None  # the bridge followed every device's pages itself
    names = [tool.name for tool in listing.tools]
    assert len(names) == len(set(names)) and "bridge__list_devices" in names
    for alias in ("kitchen", SECOND_ALIAS):
        mine = [tool for tool in listing.tools if tool.name.startswith(alias + "__")]
        wire = sum(len(json.dumps(tool.model_dump(by_alias=True, exclude_none=True))) for tool in mine)
        assert wire > 2 * PAGE_LIMIT  # so each device had to page, and every page arrived
        short = {tool.name[len(alias) + 2:] for tool in mine}
        assert {"get_device_status", "audio_speaker_set_volume", "camera_take_photo"} <= short
        assert bool(USER_ONLY & short) == user_tools
    assert {"lab__chatty", "lab__audio_speaker_set_volume"} <= set(names)
    check_tool_names(names)  # what Claude Desktop, Codex, Copilot CLI and OpenAI accept
    volume = next(tool for tool in listing.tools if tool.name == "kitchen__audio_speaker_set_volume")
    assert volume.input_schema["properties"]["volume"] == {"type": "integer", "minimum": 0, "maximum": 100}

    # A call on each device lands on that device only.
    for alias, value in (("kitchen", 42), (SECOND_ALIAS, 17)):
        result = await client.call_tool(alias + "__audio_speaker_set_volume", {"volume": value})
        assert not result.is_error and result.content[0].text == "true"
    for alias, value in (("kitchen", 42), (SECOND_ALIAS, 17)):
        status = await client.call_tool(alias + "__get_device_status", {})
        assert json.loads(status.content[0].text)["audio_speaker"]["volume"] == value

    # Errors: an unknown tool, device or argument, named.
    for name in ("kitchen__no_such_tool", "attic__get_device_status", "nodot"):
        with pytest.raises(MCPError) as unknown:
            await client.call_tool(name, {})
        assert unknown.value.code == -32602 and name in unknown.value.message
    # From 2025-11-25 an argument error is a tool result the model can read.
    bad = await client.call_tool("kitchen__audio_speaker_set_volume", {"volume": 101})
    assert bad.is_error and "volume" in bad.content[0].text

    # take_photo: the JPEG the device uploaded to the bridge's vision endpoint, as an image.
    photo = await client.call_tool(SECOND_ALIAS + "__camera_take_photo", {"question": "Anyone there?"})
    assert not photo.is_error and photo.content[0].type == "image"
    assert photo.content[0].mime_type == "image/jpeg"
    assert base64.b64decode(photo.content[0].data, validate=True) == simulated_photo()
    if user_tools:  # the device's own image block passes through unchanged
        photo = await client.call_tool("kitchen__camera_get_photo", {})
        assert (photo.content[0].type, photo.content[0].mime_type) == ("image", "image/jpeg")
        assert base64.b64decode(photo.content[0].data, validate=True) == simulated_photo()

    # Resources: the bridge's own and the fake device's (its list came in two pages).
    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert {"bridge://devices", STATUS, "umcp://lab/device/system", "umcp://lab/device/log"} <= resources
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["umcp://lab/device/log/{line}"]
    read = await client.read_resource(STATUS)
    assert str(read.contents[0].uri) == STATUS and "volume" in json.loads(read.contents[0].text)
    line = await client.read_resource("umcp://lab/device/log/7")
    assert line.contents[0].text == "ok"
    online = json.loads((await client.read_resource("bridge://devices")).contents[0].text)
    assert {d["alias"] for d in online if d["online"]} == {"kitchen", SECOND_ALIAS, "lab"}
    for uri in ("umcp://lab/device/nothing", "umcp://attic/device/status", "device://status"):
        with pytest.raises(MCPError) as missing:
            await client.read_resource(uri)
        assert missing.value.code in (-32602, -32002) and uri in missing.value.message


async def hang_up_while_watching(client, rig, changed):
    """The fake drops its link mid-call: the call fails at once naming the device, the
    client hears that the lists changed, and the same names work once it is back."""
    with anyio.fail_after(5):  # far below the 30 s request timeout: nothing waits for it
        with pytest.raises(MCPError) as gone:
            await client.call_tool("lab__hang_up", {})
    assert "lab" in gone.value.message and FAKE in gone.value.message
    with anyio.fail_after(READ_TIMEOUT):
        await changed.wait()
    await devices_online(client)  # it reconnected: same alias, same tool names
    result = await client.call_tool("lab__audio_speaker_set_volume", {"volume": 5})
    assert result.content[0].text == "true"


async def run_modern(target, rig, user_tools):
    logs = []

    async def on_log(params):
        logs.append((params.level, params.data))

    async with Client(target, read_timeout_seconds=READ_TIMEOUT, logging_callback=on_log,
                      log_level="warning") as client:
        assert client.protocol_version == "2026-07-28"
        caps = client.server_capabilities
        assert caps.tools.list_changed and caps.resources.subscribe and caps.resources.list_changed
        await exercise(client, rig, user_tools)
        listing = await client.list_tools()
        assert listing.cache_scope == "private" and listing.ttl_ms >= 0

        # A log message during a call that asked for warnings (per-request _meta logLevel);
        # the level went on to the device.
        result = await client.call_tool("lab__chatty", {})
        assert result.content[0].text == "said something"
        assert ("warning", "chatty: warning") in logs and ("info", "chatty: info") not in logs
        assert rig["fake"].methods("logging/setLevel")[-1]["params"] == {"level": "warning"}

        # A subscription (subscriptions/listen) receives the update after set_volume.
        async with client.listen(resource_subscriptions=[STATUS], tools_list_changed=True) as sub:
            assert sub.honored.resource_subscriptions == [STATUS]
            await client.call_tool("lab__audio_speaker_set_volume", {"volume": 64})
            with anyio.fail_after(10):
                event = await sub.__anext__()
            assert event == ResourceUpdated(uri=STATUS)
            assert json.loads((await client.read_resource(STATUS)).contents[0].text) == {"volume": 64}

            changed = anyio.Event()

            async def watch():
                async for event in sub:
                    if event == ToolsListChanged():
                        changed.set()

            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                await hang_up_while_watching(client, rig, changed)
                group.cancel_scope.cancel()
        await cancel_mid_call(client, rig)


async def run_legacy(target, rig, user_tools):
    logs, updated, changed = [], anyio.Event(), anyio.Event()

    async def on_log(params):
        logs.append((params.level, params.data))

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == STATUS:
            updated.set()
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with Client(target, mode="legacy", read_timeout_seconds=READ_TIMEOUT, logging_callback=on_log,
                          message_handler=on_message) as client:
            assert client.protocol_version == "2025-11-25"
            caps = client.server_capabilities
            assert caps.tools.list_changed and caps.resources.subscribe and caps.logging is not None
            await client.send_ping()
            await exercise(client, rig, user_tools)

            # logging/setLevel is kept for this session and forwarded to the devices.
            await client.set_logging_level("warning")
            assert rig["fake"].methods("logging/setLevel")[-1]["params"] == {"level": "warning"}
            await client.call_tool("lab__chatty", {})
            with anyio.fail_after(5):
                while ("warning", "chatty: warning") not in logs:
                    await anyio.sleep(0.02)
            assert ("info", "chatty: info") not in logs
            if user_tools:
                # The real firmware's own log: an upgrade from nowhere fails after the answer,
                # and the device says so in a notifications/message (error).
                port = free_port()
                started = await client.call_tool("kitchen__upgrade_firmware", {
                    "url": "http://127.0.0.1:%d/app.bin" % port, "sha256": "0" * 64})
                assert "upgrade started" in started.content[0].text
                with anyio.fail_after(15):
                    while not any(level == "error" and "127.0.0.1:%d" % port in str(data) for level, data in logs):
                        await anyio.sleep(0.05)

            await client.subscribe_resource(STATUS)
            await client.call_tool("lab__audio_speaker_set_volume", {"volume": 33})
            with anyio.fail_after(10):
                await updated.wait()
            await client.unsubscribe_resource(STATUS)

            changed = anyio.Event()
            await hang_up_while_watching(client, rig, changed)
            await cancel_mid_call(client, rig)


def check_wire(path):
    """Every line the bridge wrote to stdout (tests/support/wiretap.py's log), checked."""
    with open(path) as log:
        return check_messages([json.loads(line) for line in log])


async def test_default_mode_over_stdio(rig, tmp_path):
    wire = tmp_path / "wire.jsonl"
    await run_modern(stdio_bridge(rig, wire), rig, user_tools=True)
    assert check_wire(wire) > 30


async def test_legacy_mode_over_stdio(rig, tmp_path):
    wire = tmp_path / "wire.jsonl"
    await run_legacy(stdio_bridge(rig, wire), rig, user_tools=True)
    assert check_wire(wire) > 30


async def test_default_mode_over_streamable_http(rig, http_bridge):
    tap = HttpTap()
    await run_modern(tap.transport(http_bridge["url"]), rig, user_tools=False)
    assert check_messages(tap.lines()) > 30
    assert {"notifications/subscriptions/acknowledged", "notifications/resources/updated",
            "notifications/tools/list_changed", "notifications/message"} <= server_methods(tap.lines())


async def test_legacy_mode_over_streamable_http(rig, http_bridge):
    tap = HttpTap()
    await run_legacy(tap.transport(http_bridge["url"]), rig, user_tools=False)
    assert check_messages(tap.lines()) > 30
    assert {"notifications/resources/updated", "notifications/tools/list_changed",
            "notifications/message"} <= server_methods(tap.lines())


async def cancel_mid_call(client, rig):
    """The client gives up on a call (stdio: notifications/cancelled; HTTP 2026: it hangs
    up the request's stream): the device is told (notifications/cancelled)."""
    fake = rig["fake"]
    await devices_online(client)
    before = len(fake.methods("notifications/cancelled"))
    calls = len(fake.methods("tools/call"))
    with anyio.move_on_after(READ_TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "lab__slow", {})
            while len(fake.methods("tools/call")) == calls:  # it reached the device
                await anyio.sleep(0.02)
            group.cancel_scope.cancel()
    request_id = fake.methods("tools/call")[-1]["id"]
    with anyio.fail_after(10):
        while len(fake.methods("notifications/cancelled")) == before:
            await anyio.sleep(0.02)
    assert fake.methods("notifications/cancelled")[-1]["params"]["requestId"] == request_id


async def test_progress_reaches_the_client_that_asked(rig, http_bridge):
    for mode in ("auto", "legacy"):
        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            async with Client(http_bridge["url"], mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
                await devices_online(client)
                result = await client.call_tool("lab__steps", {}, progress_callback=on_progress)
        assert result.content[0].text == "stepped"
        assert progress == [(1, 2), (2, 2)], mode


MODERN = "2026-07-28"


def modern_request(method, params=None, request_id=1, version=MODERN):
    params = dict(params or {})
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": version,
                       "io.modelcontextprotocol/clientCapabilities": {},
                       "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def post(url, body, version=MODERN, method=None, name=None, raw=None):
    import httpx2 as httpx

    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": version}
    if method or isinstance(body, dict):
        headers["Mcp-Method"] = method or body["method"]
    if name:
        headers["Mcp-Name"] = name
    response = httpx.post(url, content=raw if raw is not None else json.dumps(body), headers=headers, timeout=10)
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    return response.status_code, json.loads(text)


def test_bad_input_gets_the_spec_error_and_everything_stays_up(rig, http_bridge):
    url = http_bridge["url"]
    call = modern_request("tools/call", {"name": "kitchen__get_device_status", "arguments": {}})
    # the Mcp-Name header disagrees with the body: HeaderMismatch
    status, body = post(url, call, name="kitchen__reboot")
    assert status == 400 and body["error"]["code"] == -32020
    # a required header missing
    status, body = post(url, call)
    assert status == 400 and body["error"]["code"] == -32020
    # an unsupported revision: UnsupportedProtocolVersionError, naming what is supported
    status, body = post(url, modern_request("tools/list", version="2099-01-01"), version="2099-01-01")
    assert status == 400 and body["error"]["code"] == -32022
    assert MODERN in body["error"]["data"]["supported"]
    # not JSON at all
    status, body = post(url, None, method="tools/list", raw="{not json")
    assert status == 400 and body["error"]["code"] == -32700
    # JSON, but not a request this revision accepts: no _meta envelope; not JSON-RPC 2.0
    bare = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}
    status, body = post(url, bare)
    assert status == 400 and body["error"]["code"] == -32602
    status, body = post(url, dict(modern_request("tools/list"), jsonrpc="1.0"))
    assert status == 400 and body["error"]["code"] in (-32600, -32602)
    # an unknown method: 404 and -32601
    status, body = post(url, modern_request("tools/destroy"))
    assert status == 404 and body["error"]["code"] == -32601
    # an unknown tool and an unknown resource: -32602 with the name in it
    unknown = modern_request("tools/call", {"name": "attic__x", "arguments": {}})
    status, body = post(url, unknown, name="attic__x")
    assert body["error"]["code"] == -32602 and "attic__x" in body["error"]["message"]
    read = modern_request("resources/read", {"uri": "umcp://attic/device/status"})
    status, body = post(url, read, name="umcp://attic/device/status")
    assert body["error"]["code"] == -32602 and "umcp://attic/device/status" in body["error"]["message"]
    # a good request still works: the bridge and its devices are up
    status, body = post(url, call, name="kitchen__get_device_status")
    assert status == 200 and body["result"]["resultType"] == "complete"
    assert json.loads(body["result"]["content"][0]["text"])["audio_speaker"]
    assert http_bridge["process"].poll() is None


async def test_a_simulated_device_leaving_while_clients_watch(rig, http_bridge, tmp_path):
    """A fourth simulated device (the real firmware) comes and goes while a 2026 client
    listens and a 2025 session is open: both hear it, and its tools then fail at once,
    naming it."""
    alias, device_id = "dev-cccc04", "cc:cc:cc:cc:cc:04"
    legacy_changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            legacy_changed.set()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with Client(http_bridge["url"], read_timeout_seconds=READ_TIMEOUT) as modern, \
                Client(http_bridge["url"], mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                       message_handler=on_message) as legacy:
            await legacy.subscribe_resource("bridge://devices")
            with open(tmp_path / "device.log", "w") as log, \
                    SimBoard(config_for(url=rig["url"], token=TOKEN, device_id=device_id),
                             root=str(tmp_path / "d"), log=log) as sim:
                devices = await devices_online(modern, 4)
                assert devices[alias]["device_id"] == device_id
                assert not (await legacy.call_tool(alias + "__get_device_status", {})).is_error
                async with modern.listen(tools_list_changed=True, resource_subscriptions=["bridge://devices"]) as sub:
                    legacy_changed = anyio.Event()
                    await anyio.to_thread.run_sync(sim.stop)  # it goes while they watch
                    seen = set()
                    with anyio.fail_after(READ_TIMEOUT):
                        while not {ToolsListChanged(), ResourceUpdated(uri="bridge://devices")} <= seen:
                            seen.add(await sub.__anext__())
                        await legacy_changed.wait()
            online = json.loads((await modern.read_resource("bridge://devices")).contents[0].text)
            assert [d["online"] for d in online if d["alias"] == alias] == [False]
            for client in (modern, legacy):
                with anyio.fail_after(2), pytest.raises(MCPError) as gone:
                    await client.call_tool(alias + "__get_device_status", {})
                assert gone.value.code == -32602 and alias in gone.value.message and "offline" in gone.value.message


async def test_the_real_firmwares_resources_through_the_bridge(rig, http_bridge):
    """The simulated devices' own resources (device://status, system, log), per device."""
    async with Client(http_bridge["url"], read_timeout_seconds=READ_TIMEOUT) as client:
        await devices_online(client)
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        for alias in ("kitchen", SECOND_ALIAS):
            assert {"umcp://%s/device/status" % alias, "umcp://%s/device/system" % alias,
                    "umcp://%s/device/log" % alias} <= uris
        status = "umcp://kitchen/device/status"
        async with client.listen(resource_subscriptions=[status]) as sub:
            await client.call_tool("kitchen__audio_speaker_set_volume", {"volume": 21})
            with anyio.fail_after(10):
                assert await sub.__anext__() == ResourceUpdated(uri=status)
        read = await client.read_resource(status)
        assert json.loads(read.contents[0].text)["audio_speaker"]["volume"] == 21
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        updated = anyio.Event()

        async def on_message(message):
            if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == status:
                updated.set()

        async with Client(http_bridge["url"], mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                          message_handler=on_message) as client:
            await client.subscribe_resource(status)
            await client.call_tool("kitchen__audio_speaker_set_volume", {"volume": 22})
            with anyio.fail_after(10):
                await updated.wait()


async def test_a_photo_with_a_vision_model_comes_with_its_answer():
    """With a vision model configured, take_photo gives the image and the model's answer
    beside it (in-process bridge, the SDK client on the Server object, the fake device)."""
    from tests.support.fakedevice import JPEG
    from tools.bridge.bridge import Bridge

    asked = []

    class Model:
        async def explain(self, question, data, mime_type):
            asked.append((question, data, mime_type))
            return "a cat on a sofa"

    bridge = Bridge(TOKEN, "127.0.0.1", 0, vision_model=Model(), aliases={FAKE: "lab"}, expect=1)
    await bridge.start()
    fake = FakeDevice("ws://127.0.0.1:%d/xiaozhi/v1/" % bridge.port, TOKEN, FAKE).start()
    try:
        async with Client(bridge.mcp, read_timeout_seconds=READ_TIMEOUT) as client:
            await devices_online(client, 1)
            photo = await client.call_tool("lab__camera_take_photo", {"question": "What is there?"})
    finally:
        await anyio.to_thread.run_sync(fake.stop)  # the bridge shares this loop: keep it running
        await bridge.close()
    assert [block.type for block in photo.content] == ["image", "text"]
    assert base64.b64decode(photo.content[0].data) == JPEG and photo.content[0].mime_type == "image/jpeg"
    assert photo.content[1].text == "a cat on a sofa"
    assert asked == [("What is there?", JPEG, "image/jpeg")]


def test_bad_input_over_stdio_gets_an_error_and_the_bridge_answers_on(rig):
    """Not JSON, a request without the 2026 envelope, an unknown revision: each answered
    with its JSON-RPC error on stdout; then a good request still works."""
    port = free_port()  # a bridge of its own: no device needed
    process = subprocess.Popen([sys.executable, *bridge_args(port)], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        def exchange(line):
            process.stdin.write(line + "\n")
            process.stdin.flush()
            return json.loads(process.stdout.readline())

        for line, code in (("{not json", -32700), ("[1, 2]", -32600), ('{"jsonrpc": "2.0", "id": 1}', -32600)):
            error = exchange(line)
            assert error["id"] is None and error["error"]["code"] == code, line
        unknown = exchange(json.dumps(modern_request("tools/list", request_id=2, version="2099-01-01")))
        assert unknown["id"] == 2 and unknown["error"]["code"] == -32022
        assert MODERN in unknown["error"]["data"]["supported"]
        missing = exchange(json.dumps(modern_request("tools/call", {"name": "attic__x", "arguments": {}}, 3)))
        assert missing["id"] == 3 and missing["error"]["code"] == -32602 and "attic__x" in missing["error"]["message"]
        good = exchange(json.dumps(modern_request("tools/list", request_id=4)))
        assert good["id"] == 4 and good["result"]["resultType"] == "complete"
        assert good["result"]["tools"][0]["name"] == "bridge__list_devices"
    finally:
        process.stdin.close()
        stop_process(process)
