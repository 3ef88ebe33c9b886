"""The board's own MCP endpoint (config.json's mcp_http, lib/mcplink/http.py on lib/unet/httpd.py)
on the simulated board, under CPython and under MicroPython (the unix port), reached
directly, nothing in between: the official SDK `Client` in its default (2026-07-28) and
legacy (initialize, 2025-11-25) modes with every message it received checked against the
SDK's types for its revision and every structuredContent against its tool's outputSchema,
every listed name against the clients' pattern; the MCP Inspector CLI; the conformance
suite's server scenarios (its requests carry the token through tests/support/
bearerpreload.mjs); then every kind of bad input, each answered and freed while the
board's xiaozhi link and heap carry on."""

import asyncio
import glob
import json
import os
import re
import socket
import subprocess
import warnings

import anyio
import httpx2 as httpx
import jsonschema
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from portable_support import esp_image
from tests.support import ROOT
from tests.support.firmwareharness import (RUNTIMES, WAIT_S, Backend, ImageServer, Sim, assert_alive, run)
from tests.support.mcphttp import HttpTap, check_messages, server_methods
from tests.support.toolnames import check_tool_names
from tools.sim.calls import GENERIC_PARTS

pytestmark = pytest.mark.timeout(300)
BEARER = "board-secret-7"
BIN = os.path.join(ROOT, "node_modules", ".bin")
PRELOAD = os.path.join(ROOT, "tests", "support", "bearerpreload.mjs")
# The link has no backend in the module's board: it retries now and then, quietly.
SLOW_LINK = {"backoff_min": 5, "backoff_max": 30}
JSON_TOOLS = ("self_get_device_status", "self_led_strip_get_state", "self_host_get_temperature")
# Conformance scenarios that need none of the suite's own fixtures (test_simple_text,
# test://watched-resource, prompts, the diagnostic tools of server-stateless), for the
# revisions the board serves: each must pass, but for the checks UNTESTABLE names.
SCENARIOS = {
    "2026-07-28": ["server-stateless", "tools-list", "resources-list", "sep-2164-resource-not-found",
                   "dns-rebinding-protection", "caching", "server-sse-multiple-streams", "http-header-validation",
                   "input-required-result-unsupported-methods", "input-required-result-validate-input"],
    "2025-11-25": ["server-initialize", "server-session-lifecycle", "logging-set-level", "ping", "tools-list",
                   "resources-list", "server-sse-multiple-streams", "dns-rebinding-protection"],
}
# "Not testable" checks probe the suite's diagnostic tools; the board declares no prompts,
# so caching's prompts/list check cannot pass (it gets -32601, as it should).
UNTESTABLE = ("Not testable",)
NO_PROMPTS = "sep-2549-prompts-list-caching-hints"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_config(port, **options):
    config = {"port": port, "token": BEARER, "bind": "127.0.0.1"}
    config.update(options)
    return {"mcp_http": config}


def wait_serving(url, sim):
    """Until the endpoint answers (a request without a token: 401)."""
    for _ in range(WAIT_S * 10):
        assert sim.running, "the simulator ended"
        try:
            if httpx.post(url, content=b"{}", timeout=1).status_code == 401:
                return
        except httpx.TransportError:
            pass
        import time

        time.sleep(0.1)
    raise AssertionError("the board's MCP endpoint never answered")


@pytest.fixture(scope="module", params=RUNTIMES)
def board(request, tmp_path_factory):
    """A simulated board serving MCP over HTTP (its xiaozhi link has no backend here)."""
    port = free_port()
    extra = dict(SLOW_LINK, **http_config(port))
    sim = Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path_factory.mktemp("board"), micropython=request.param,
              extra_config=extra).start()
    url = "http://127.0.0.1:%d/mcp" % port
    try:
        wait_serving(url, sim)
        yield {"url": url, "sim": sim, "port": port, "micropython": request.param}
    finally:
        sim.stop()


def tap():
    """An HttpTap whose client sends the board's token."""
    recorder = HttpTap()
    recorder.client.headers["Authorization"] = "Bearer " + BEARER
    return recorder


def post(url, body, headers=None, token=BEARER, raw=None):
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        sent["Authorization"] = "Bearer " + token
    sent.update(headers or {})
    return httpx.post(url, content=raw if raw is not None else json.dumps(body), headers=sent, timeout=10)


def modern(method, params=None, request_id=1):
    params = dict(params or {})
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def modern_headers(message):
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": message["method"]}
    name = message["params"].get("name") or message["params"].get("uri")
    if name:
        headers["Mcp-Name"] = name
    return headers


async def exercise(client):
    """What both eras must see: portable names, structured results that fit their schema."""
    listing = await client.list_tools()
    tools = {tool.name: tool for tool in listing.tools}
    check_tool_names(tools)
    assert {"self_get_device_status", "self_audio_speaker_set_volume", "self_screen_set_theme"} <= set(tools)
    theme = tools["self_screen_set_theme"].input_schema["properties"]["theme"]
    assert theme == {"type": "string", "enum": ["light", "dark"]}
    for name in JSON_TOOLS:
        result = await client.call_tool(name, {})
        assert not result.is_error and tools[name].output_schema["type"] == "object"
        jsonschema.validate(result.structured_content, tools[name].output_schema)
        assert json.loads(result.content[0].text) == result.structured_content  # text for older clients
    assert (await client.call_tool("self_audio_speaker_set_volume", {"volume": 31})).content[0].text == "true"
    # the device's own name works as well (calls take either form)
    status = await client.call_tool("self.get_device_status", {})
    assert status.structured_content["audio_speaker"]["volume"] == 31
    refused = await client.call_tool("self_screen_set_theme", {"theme": "sepia"})
    assert refused.is_error and "sepia" in refused.content[0].text
    with pytest.raises(MCPError) as unknown:
        await client.call_tool("self_no_such_tool", {})
    assert unknown.value.code == -32602
    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert {"device://status", "device://system", "device://log"} <= resources
    read = await client.read_resource("device://status")
    assert json.loads(read.contents[0].text)["audio_speaker"]["volume"] == 31


@pytest.mark.anyio
async def test_the_sdk_client_in_both_modes_straight_to_the_board(board):
    modern_tap = tap()
    async with Client(modern_tap.transport(board["url"]), read_timeout_seconds=WAIT_S) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.server_capabilities.tools is not None
        await exercise(client)
    assert check_messages(modern_tap.lines()) >= 12

    legacy_tap = tap()
    logs = []

    async def on_log(params):
        logs.append((params.level, params.data))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with Client(legacy_tap.transport(board["url"]), mode="legacy", read_timeout_seconds=WAIT_S,
                          logging_callback=on_log) as client:
            assert client.protocol_version == "2025-11-25"
            await client.send_ping()
            await exercise(client)
            await client.set_logging_level("info")
            # An upgrade from nowhere answers at once and fails on its own task: its log
            # message, outside any request, reaches this session on its GET stream.
            port = free_port()
            started = await client.call_tool("self_upgrade_firmware", {"url": "http://127.0.0.1:%d/a.bin" % port})
            assert "upgrade started" in started.content[0].text
            with anyio.fail_after(WAIT_S):
                while not any(level == "error" and str(port) in str(data) for level, data in logs):
                    await anyio.sleep(0.05)
    assert check_messages(legacy_tap.lines()) >= 12
    assert "notifications/message" in server_methods(legacy_tap.lines())


@pytest.mark.anyio
async def test_progress_comes_on_the_request_s_stream_and_a_cancelled_call_frees_the_queue(board):
    """A call that reports progress answers as text/event-stream, the progress first; a
    call its client gives up on (2026-07-28: it hangs up; legacy: notifications/cancelled)
    is cancelled on the board, so the next call does not wait behind it."""
    image = esp_image(160 * 1024)  # progress comes every 64 KiB

    async def ignore_progress(value, total, message):
        pass

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        with ImageServer(image, cut_at=100 * 1024) as broken:  # the download breaks after 100 KiB
            for mode in ("auto", "legacy"):
                progress, recorder = [], tap()

                async def on_progress(value, total, message):
                    progress.append((value, total))

                async with Client(recorder.transport(board["url"]), mode=mode, read_timeout_seconds=WAIT_S) as client:
                    failed = await client.call_tool("self_upgrade_firmware", {"url": broken.url},
                                                    progress_callback=on_progress)
                assert failed.is_error, failed
                assert progress and all(total == len(image) for _, total in progress), (mode, progress)
                assert [value for value, _ in progress] == sorted(value for value, _ in progress)
                assert any(kind.startswith("text/event-stream") and b"notifications/progress" in b"".join(chunks)
                           for _, kind, chunks in recorder.exchanges), mode
                assert check_messages(recorder.lines()) >= 3  # discover or initialize, progress, result
        with ImageServer(image, hold=True) as held:
            for mode in ("auto", "legacy"):
                held.received.clear()
                async with Client(tap().transport(board["url"]), mode=mode, read_timeout_seconds=WAIT_S) as client:
                    async with anyio.create_task_group() as group:
                        # with a progress token the call lasts as long as the upgrade
                        group.start_soon(client.call_tool, "self_upgrade_firmware", {"url": held.url}, None,
                                         ignore_progress)
                        await anyio.to_thread.run_sync(held.received.wait, WAIT_S)
                        assert held.received.is_set()
                        group.cancel_scope.cancel()
                    with anyio.fail_after(WAIT_S / 2):  # the upgrade is still held: not behind it
                        status = await client.call_tool("self_get_device_status", {})
                    assert not status.is_error and status.structured_content["board"] == "host", mode
            held.release()


def test_the_names_a_raw_client_gets_are_portable_too(board):
    """With withUserTools (as the xiaozhi console asks): the owner's tools as well."""
    for params in ({}, {"withUserTools": True}):
        message = modern("tools/list", params)
        reply = post(board["url"], message, modern_headers(message))
        assert reply.status_code == 200, reply.text
        names = check_tool_names(tool["name"] for tool in reply.json()["result"]["tools"])
        assert ("self_reboot" in names) == bool(params)


def node_env():
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], MCP_INSPECTOR_SECRET_STORE="memory",
               NO_COLOR="1")
    return env


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_the_conformance_suite_straight_to_the_board(board, revision, tmp_path):
    env = dict(node_env(), UMCP_BEARER=BEARER, NODE_OPTIONS="--import " + PRELOAD)
    out = tmp_path / "out"
    done = subprocess.run([os.path.join(BIN, "conformance"), "server", "--url", board["url"], "--requirements",
                           revision, "-o", str(out)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    results, failures = {}, []
    for checks_file in glob.glob(str(out / "*" / "checks.json")):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", os.path.basename(os.path.dirname(checks_file)))[7:]
        results[name] = json.load(open(checks_file))
    passed = 0
    for scenario in SCENARIOS[revision]:
        assert scenario in results, "scenario %s did not run:\n%s" % (scenario, done.stdout[-3000:])
        for check in results[scenario]:
            message = check.get("errorMessage") or ""
            if check["status"] == "FAILURE" and not message.startswith(UNTESTABLE) and check["id"] != NO_PROMPTS:
                failures.append("%s/%s: %s" % (scenario, check["id"], message))
            passed += check["status"] == "SUCCESS"
    print("conformance %s on %s: %d checks passed" % (revision, "micropython" if board["micropython"] else "cpython",
                                                      passed))
    assert not failures, "\n".join(failures)
    assert passed >= (40 if revision == "2026-07-28" else 15)
    assert board["sim"].running


def test_the_inspector_cli_straight_to_the_board(board, tmp_path):
    config = tmp_path / "inspector.json"
    config.write_text(json.dumps({"mcpServers": {"board": {
        "type": "streamable-http", "url": board["url"], "headers": {"Authorization": "Bearer " + BEARER},
        "protocolEra": "modern"}}}))

    def run_cli(*args, modern_era=False):
        target = ["--config", str(config), "--server", "board"] if modern_era else \
            [board["url"], "--transport", "http", "--header", "Authorization: Bearer " + BEARER]
        done = subprocess.run([os.path.join(BIN, "mcp-inspector"), "--cli", *target, *args, "--format", "json"],
                              env=node_env(), cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)["result"]

    for modern_era in (False, True):
        # --strict: the Inspector's schema portability lint, inputSchema and outputSchema
        listing = run_cli("--method", "tools/list", "--strict", modern_era=modern_era)
        names = check_tool_names(tool["name"] for tool in listing["tools"])
        assert "self_get_device_status" in names
        volume = 12 if modern_era else 11
        result = run_cli("--method", "tools/call", "--tool-name", "self_audio_speaker_set_volume",
                         "--tool-arg", "volume=%d" % volume, modern_era=modern_era)
        assert result["content"][0]["text"] == "true"
        status = run_cli("--method", "tools/call", "--tool-name", "self_get_device_status", modern_era=modern_era)
        assert status["structuredContent"]["audio_speaker"]["volume"] == volume


def test_a_wrong_token_or_a_foreign_origin_is_refused(board):
    url = board["url"]
    message = modern("server/discover")
    headers = modern_headers(message)
    for token, extra in ((None, {}), ("wrong", {}), (BEARER + "x", {}), (None, {"Authorization": "Basic " + BEARER})):
        refused = post(url, message, dict(headers, **extra), token=token)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        assert refused.json()["error"]["code"] == -32600
    for origin, host in (("http://evil.example", None), ("http://evil.example", "evil.example"),
                         ("http://127.0.0.1:1", None)):
        extra = dict(headers, Origin=origin)
        if host:
            extra["Host"] = host
        forbidden = post(url, message, extra)
        assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == -32600, origin
    # a browser on the board's own page (same origin) and a program (no Origin) get in
    same = post(url, message, dict(headers, Origin="http://127.0.0.1:%d" % board["port"]))
    assert same.status_code == 200 and same.json()["result"]["supportedVersions"][0] == "2026-07-28"
    assert post(url, message, headers).status_code == 200

    async def sdk_with_the_wrong_token():
        wrong = HttpTap()
        wrong.client.headers["Authorization"] = "Bearer wrong"
        with pytest.raises(Exception):
            async with Client(wrong.transport(url), read_timeout_seconds=WAIT_S) as client:
                await client.list_tools()
        assert all(b"401" not in body for body, _, _ in wrong.exchanges)  # refused before any message

    run(sdk_with_the_wrong_token())


def raw_exchange(port, data, close_after=False, read=True):
    """Send raw bytes on a new connection; the whole answer (until the board closes it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as s:
        s.sendall(data)
        if close_after:
            return b""
        chunks = []
        while read:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def status_of(answer):
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def bad_inputs(port, max_body):
    """Every kind of bad input once; each answered with its HTTP or JSON-RPC error."""
    auth = b"Authorization: Bearer " + BEARER.encode() + b"\r\n"
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"

    def request(body, extra=b"", authorization=auth, start=head):
        return start + authorization + extra + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body

    discover = json.dumps(modern("server/discover")).encode()
    modern_head = b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n"
    legacy_list = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}'
    cases = [
        (b"NONSENSE\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nX-Long: " + b"y" * 4000 + b"\r\n\r\n", 431),
        (request(b"x" * (max_body + 1)), 413),
        (request(b"", start=b"PUT /mcp HTTP/1.1\r\n"), 405),
        (request(b"", start=b"GET /other HTTP/1.1\r\n"), 404),
        (request(discover, modern_head, b""), 401),
        (request(discover, modern_head, b"Authorization: Bearer nope\r\n"), 401),
        (request(json.dumps(dict(modern("server/discover"), params={"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}
        )).encode(), b"MCP-Protocol-Version: 2099-01-01\r\nMcp-Method: server/discover\r\n"), 400),
        (request(discover, b"MCP-Protocol-Version: 2026-07-28\r\n"), 400),  # no Mcp-Method: -32020
        (request(b"{not json", modern_head), 400),
        (request(b"[1, 2]", modern_head), 400),
        (request(legacy_list), 400),  # no session
        (request(legacy_list, b"Mcp-Session-Id: 0123\r\n"), 404),
        (request(legacy_list, b"MCP-Protocol-Version: 1999-01-01\r\n"), 400),
        (request(discover, modern_head + b"Accept: text/html\r\n"), 406),
        (head.replace(b"application/json", b"text/plain") + auth + b"Connection: close\r\nContent-Length: 2\r\n"
         b"\r\n{}", 415),
        (request(b"{}", b"Transfer-Encoding: chunked\r\n"), 411),
    ]
    for data, expected in cases:
        answer = raw_exchange(port, data)
        assert status_of(answer) == expected, (data[:80], answer[:200])
        if expected == 400 and b"application/json" in answer:
            body = json.loads(answer.partition(b"\r\n\r\n")[2])
            assert body["error"]["code"] in (-32700, -32600, -32602, -32020, -32022), body
    # clients that leave mid-request: in the head, in the body
    raw_exchange(port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth, close_after=True)
    raw_exchange(port, request(discover, modern_head)[:-10], close_after=True)


async def system_info(url):
    message = modern("tools/call", {"name": "self_get_system_info", "arguments": {}})

    def ask():
        return post(url, message, modern_headers(message))

    reply = await asyncio.to_thread(ask)
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]["structuredContent"]


async def stream_post(url, message, read_events=0):
    """POST `message` and keep the connection; returns (reader, writer, status line)."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    body = json.dumps(message).encode()
    headers = modern_headers(message)
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nConnection: close\r\nAuthorization: Bearer %s\r\n%s"
            "Content-Length: %d\r\n\r\n"
            % (BEARER, "".join("%s: %s\r\n" % kv for kv in headers.items()), len(body))).encode()
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head + body)
    await writer.drain()
    return reader, writer


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_bad_input_is_answered_and_the_board_and_its_link_carry_on(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/mcp" % port
    max_body = 4096

    async def scenario():
        backend = await Backend().start()
        # No mDNS responder: it starts once the board has an address, whenever that falls
        # (inside the measured rounds, its socket and names would count as what bad input
        # left), and it retries where another board holds UDP 5353 (make test runs two at a
        # time). Its own tests are test_firmware_mdns.py's.
        sim = Sim(backend.url, tmp_path, micropython=micropython,
                  extra_config=dict(http_config(port, max_requests=2, mdns=False), max_message=max_body)).start()
        try:
            device = await backend.next_device()
            await device.initialize()
            await asyncio.to_thread(wait_serving, url, sim)
            await asyncio.to_thread(bad_inputs, port, max_body)  # once: whatever loads on first use
            before = await system_info(url)
            for _ in range(3):
                await asyncio.to_thread(bad_inputs, port, max_body)
            after = await system_info(url)
            if after.get("heap_used", 0) - before.get("heap_used", 0) > 2048:
                # 0 to 4 KB here from run to run (this 64-bit port), with the same modules
                # loaded and the same interned names before and after: objects that a finished
                # coroutine or a stale task-queue link keeps (MicroPython keeps a finished
                # generator's frame), level over later rounds. A leak grows with every round:
                # measured again over three more, from there.
                before = after
                for _ in range(3):
                    await asyncio.to_thread(bad_inputs, port, max_body)
                after = await system_info(url)
            print("heap used before and after 3 rounds of bad input:", before.get("heap_used"), after.get("heap_used"))
            if "heap_used" in before:  # MicroPython: what the bad requests left behind
                assert after["heap_used"] - before["heap_used"] <= 2048, (before["heap_used"], after["heap_used"])
            await assert_alive(device)  # the xiaozhi link carries on

            with ImageServer(esp_image(64 * 1024), hold=True) as images:
                # A 2026-07-28 call whose client hangs up is cancelled: the next call does not
                # wait behind it (calls run one at a time).
                upgrade = modern("tools/call", {"name": "self_upgrade_firmware", "arguments": {
                    "url": images.url}}, request_id=7)
                upgrade["params"]["_meta"]["progressToken"] = "up"  # so the call waits for the end
                reader, writer = await stream_post(url, upgrade)
                await asyncio.to_thread(images.received.wait, WAIT_S)
                # Two requests in the handler (the call, and one queued behind it): the third
                # gets 503, max_requests being 2.
                queued = await stream_post(url, modern("tools/call", {"name": "self_get_device_status"}, 8))
                await asyncio.sleep(0.5)
                busy = await asyncio.to_thread(raw_exchange, port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                               b"Content-Length: 0\r\n\r\n")
                assert status_of(busy) == 503 and b"Retry-After: 1" in busy
                writer.close()  # hang up on the upgrade: cancelled, and the queued call runs
                answer = await asyncio.wait_for(queued[0].read(), WAIT_S)
                assert b"HTTP/1.1 200" in answer and b'"structuredContent"' in answer, answer[:300]
                queued[1].close()
                images.release()
            await assert_alive(device)
            status = await system_info(url)
            assert status["mcp_url"] == "http://umcp-123456.local:%d/mcp" % port
        finally:
            stopped = sim.stop()  # before its backend (docs/testing.md)
            await backend.stop()
        assert stopped == 0
        record = sim.records()[-1]
        assert record["hostname"] == "umcp-123456"  # mDNS: http://umcp-123456.local/mcp

    run(scenario(), timeout=180)


def listed_names(url):
    """The tool names a 2026-07-28 tools/list at `url` gives, each held against the clients'
    rule (check_tool_names)."""
    message = modern("tools/list")
    listed = post(url, message, modern_headers(message))
    assert listed.status_code == 200, listed.text
    return check_tool_names(tool["name"] for tool in listed.json()["result"]["tools"])


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_board_with_only_mcp_http_serves_its_tools(tmp_path, micropython):
    """No xiaozhi server and no MCP endpoint: Cursor or the Inspector on the LAN is enough."""
    port = free_port()
    sim = Sim(None, tmp_path, micropython=micropython, extra_config=http_config(port)).start()
    url = "http://127.0.0.1:%d/mcp" % port
    try:
        wait_serving(url, sim)
        names = listed_names(url)
        assert "self_audio_speaker_set_volume" in names
        message = modern("tools/call", {"name": "self_audio_speaker_set_volume", "arguments": {"volume": 23}}, 2)
        called = post(url, message, modern_headers(message))
        assert called.status_code == 200, called.text
        assert called.json()["result"].get("isError") is not True, called.text
        message = modern("tools/call", {"name": "self_get_device_status", "arguments": {}}, 3)
        status = post(url, message, modern_headers(message)).json()["result"]
        assert status["structuredContent"]["audio_speaker"]["volume"] == 23
    finally:
        sim.stop()


def test_every_part_type_s_tools_reach_an_http_client_with_portable_names(tmp_path):
    """The generic board with one part of every type, the SPI LCD among them: every name it
    lists over HTTP passes the clients' rule, and a part's tool is called by that name."""
    port = free_port()
    lcd = {"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "cs": 14, "rst": 17,
           "width": 240, "height": 320}
    config = dict(http_config(port), board="generic", parts=GENERIC_PARTS + [lcd])
    sim = Sim(None, tmp_path, extra_config=config).start()
    url = "http://127.0.0.1:%d/mcp" % port
    try:
        wait_serving(url, sim)
        names = listed_names(url)
        for part in GENERIC_PARTS + [lcd]:
            if part["type"] != "button":  # a button has a resource, no tool
                assert any(name.startswith("self_%s_" % part["name"]) for name in names), part
        message = modern("tools/call", {"name": "self_tft_show_text", "arguments": {"text": "hi"}}, 2)
        called = post(url, message, modern_headers(message))
        result = called.json()["result"]
        assert json.loads(result["content"][0]["text"]) == {"lines": ["hi"]}, called.text
    finally:
        sim.stop()


async def _heap_used(device):
    """heap_used of self.get_system_info over the xiaozhi link (None on CPython)."""
    answer = await device.request("tools/call", {"name": "self.get_system_info", "arguments": {}})
    return json.loads(answer["result"]["content"][0]["text"]).get("heap_used")


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_idle_endpoint_leaves_the_heap_and_the_next_request_brings_it_back(tmp_path, micropython):
    """Once its client is gone (no connection, no legacy session) the endpoint is dropped
    and its code forgotten: the heap it took is free again for the board's session, each
    time. (An endpoint's ended tasks may stay linked from the board's own tasks: before
    umcp.compat.await_then_drop, one kept the code of an earlier endpoint, 9.5 KB of the
    v1.28.0 board's heap after every drop but the first, and 13 KB here.)"""
    port = free_port()
    url = "http://127.0.0.1:%d/mcp" % port

    def call(request_id):
        message = modern("tools/call", {"name": "self_get_device_status", "arguments": {}}, request_id)
        answer = post(url, message, modern_headers(message))  # its connection closes after
        assert answer.status_code == 200 and "structuredContent" in answer.json()["result"], answer.text

    async def dropped(sim, device, loaded, times):
        """Until the endpoint was dropped `times` times: MicroPython, the heap in use fell
        10 KB below `loaded` (its code left); CPython (modules stay), its log line."""
        for _ in range(WAIT_S * 10):
            if loaded is not None:
                heap = await _heap_used(device)
                if loaded - heap >= 10 * 1024:
                    return heap
            else:
                with open(sim.log_path, errors="replace") as log:
                    if log.read().count("its code unloaded") >= times:
                        return None
            await asyncio.sleep(0.1)
        raise AssertionError("the idle endpoint was not dropped (heap in use with it loaded: %s)" % loaded)

    async def scenario():
        backend = await Backend().start()
        sim = Sim(backend.url, tmp_path, micropython=micropython, extra_config=http_config(port)).start()
        try:
            device = await backend.next_device()
            await device.initialize()
            await asyncio.to_thread(wait_serving, url, sim)
            levels = []  # the heap in use after each drop
            for round in (1, 2, 3):  # the next request after a drop loads it again
                await asyncio.to_thread(call, round)
                loaded = await _heap_used(device)  # well within IDLE_S of the request
                levels.append(await dropped(sim, device, loaded, round))
                print("heap in use with the endpoint loaded:", loaded, "dropped:", levels[-1])
            if micropython:  # the same after each: no earlier endpoint's code left behind
                assert max(levels) - min(levels) < 8 * 1024, levels
            await assert_alive(device)
        finally:
            status = sim.stop()  # before its backend (docs/testing.md)
            await backend.stop()
        assert status == 0

    run(scenario(), timeout=120)
