"""lib/mcplink/endpoint.py: the board's MCP endpoint link (MCP 接入点), with a real
umcp.McpServer, against a real `websockets` server playing the assistant's side
(tests/support/endpointharness.py); on CPython and under the MicroPython unix port
(tests/support/mpyclients/endpointclient.py)."""

import asyncio
import contextlib
import logging

import pytest

import xiaozhi.link
from mcplink.endpoint import EndpointLink, masked
from tests.support.endpointharness import EndpointServer, Mute
from tests.support.firmwareharness import WAIT_S, Backend, run, server_tls
from tests.support.mpyclients import run_script
from umcp import STRING, McpServer, Property, PropertyList
from unet.conn import Trust

pytestmark = pytest.mark.timeout(60)

TOKEN = "T0KEN-secret"
FAST = {"connect_timeout": 2, "idle_timeout": 5, "ping_interval": 1,
        "backoff_min": 0.01, "backoff_max": 0.08}


def make_server(page_limit=8000, tools=0):
    server = McpServer(name="umcp-test", version="9.9", page_limit=page_limit)
    server.add_tool("self.echo", "Echo the text back", PropertyList([Property("text", STRING)]),
                    lambda args: "echo: " + args["text"])
    server.add_user_only_tool("self.reboot", "Reboot the system", PropertyList([]), lambda args: True)
    for i in range(tools):
        server.add_tool("self.tool_%02d" % i, "Tool number %d " % i + "\u4e2d" * 20,
                        PropertyList([]), lambda args: True)
    return server


class Slow:
    """A tool that reports progress once (so the caller knows it runs), then waits until
    cancelled; records the cancellations."""

    def __init__(self, server):
        self.server = server
        self.outcome = []

    async def __call__(self, args):
        await self.server.progress(1)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.outcome.append("cancelled")
            raise


def add_slow(server):
    slow = Slow(server)
    server.add_tool("self.slow", "Takes its time", PropertyList([]), slow)
    return slow


async def start_slow(provider):
    """Call self.slow with a progress token; returns its id once it runs (its progress came)."""
    request_id = await provider.send_request("tools/call", {"name": "self.slow", "arguments": {},
                                                            "_meta": {"progressToken": "p"}})
    progress = await provider.next_message()
    assert progress["method"] == "notifications/progress", progress
    return request_id


async def cancel(provider, request_id):
    await provider.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": request_id}})


@contextlib.asynccontextmanager
async def running_link(url, server=None, **options):
    """An EndpointLink running in a task; checks it never ended by itself."""
    link = EndpointLink(server or make_server(), url, **dict(FAST, **options))
    task = asyncio.create_task(link.run())
    try:
        yield link
    finally:
        assert not task.done(), "run() returned or raised: %r" % (task,)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.fixture
def logs(caplog):
    """Every log line of the run; no line may carry the token."""
    caplog.set_level(logging.INFO)
    yield caplog
    for record in caplog.records:
        assert TOKEN not in record.getMessage(), record.getMessage()


def lines(caplog, logger="endpoint"):
    return [r.getMessage() for r in caplog.records if r.name == logger]


# -- a whole session, as the assistant's side runs it


async def _assistant_session(provider):
    """initialize, paged tools/list, calls, an argument error, cancellation: what a
    xiaozhi assistant's server does through the relay, with its string ids."""
    init = await provider.initialize()
    tools, frames = await provider.list_tools()
    call = await provider.call("self.echo", {"text": "\u4f60\u597d"})
    wrong = await provider.call("self.echo", {"text": 5})
    hidden = await provider.call("self.reboot")
    await cancel(provider, await start_slow(provider))
    ping = await provider.request("ping")  # the very next message: nothing for the cancelled call
    return init, tools, frames, call, wrong, hidden, ping


def _assert_assistant_session(results, page_limit, extra=()):
    init, tools, frames, call, wrong, hidden, ping = results
    assert init["result"]["protocolVersion"] == "2024-11-05"
    assert init["result"]["serverInfo"] == {"name": "umcp-test", "version": "9.9"}
    assert init["id"].endswith("_n_1")  # the relay's string id, echoed as it came
    names = [tool["name"] for tool in tools]
    assert names == ["self.echo"] + ["self.tool_%02d" % i for i in range(12)] + ["self.slow"] + list(extra)
    assert "self.reboot" not in names  # user-only: the owner's console only
    assert len(frames) > 2 and all(len(frame.encode()) <= page_limit for frame in frames)
    assert call["result"]["content"] == [{"type": "text", "text": "echo: \u4f60\u597d"}]
    assert wrong["error"]["code"] == -32602  # 2024-11-05: argument errors are protocol errors
    assert hidden["error"]["code"] == -32602 and "unknown tool self.reboot" in hidden["error"]["message"]
    assert ping["result"] == {}


def test_a_whole_assistant_session_the_server_going_and_coming_back_and_a_dead_link(logs):
    async def main():
        endpoint = await EndpointServer().start()
        server = make_server(page_limit=700, tools=12)
        slow = add_slow(server)
        async with running_link(endpoint.url(TOKEN), server, device_id="aa:bb:cc:dd:ee:ff",
                                user_agent="umcp/9.9 (test)", ping_interval=0.05,
                                idle_timeout=0.4) as link:
            first = await endpoint.next_provider()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            results = await _assistant_session(first)
            # The relay crashes and comes back: a new connection, a new initialize.
            await endpoint.kill()
            await endpoint.start()
            second = await endpoint.next_provider()
            again = await second.initialize()
            # Then the TCP link dies silently (no pongs, nothing read): found within the
            # keepalive, and the board connects again.
            second.ws.transport.pause_reading()
            third = await endpoint.next_provider()
            second.ws.transport.resume_reading()
            pong = await third.request("ping")
            return first, results, again, pong, link.attempts, slow.outcome

    first, results, again, pong, attempts, outcome = run(main())
    _assert_assistant_session(results, 700)
    assert first.token == TOKEN and first.upgrade.path == "/mcp_endpoint/mcp/?token=" + TOKEN
    assert first.headers["Device-Id"] == "aa:bb:cc:dd:ee:ff"
    assert first.headers["User-Agent"] == "umcp/9.9 (test)"
    assert "Authorization" not in first.headers  # the token is the URL's
    assert outcome == ["cancelled"]
    assert again["result"]["protocolVersion"] == "2024-11-05" and pong["result"] == {}
    assert attempts >= 3  # and more if it came back before the relay did
    said = lines(logs)
    assert [line for line in said if "nothing received for 400 ms" in line] == [
        "ws://127.0.0.1:%d/mcp_endpoint/mcp/?token=***: link lost: ConnectionClosed WebSocket closed: 1006 "
        "nothing received for 400 ms"
        % first.ws.local_address[1]]
    assert sum(line.endswith(": connected") for line in said) == 3


def test_two_endpoint_urls_at_once_each_with_its_own_session(logs):
    async def main():
        kitchen, office = await EndpointServer().start(), await EndpointServer().start()
        server = make_server()
        async with running_link(kitchen.url(TOKEN), server) as a, \
                running_link(office.url(TOKEN + "-2"), server) as b:
            one, two = await kitchen.next_provider(), await office.next_provider()
            await one.initialize()
            # The same ids on both: each connection gets its own answers.
            call_one = await one.request("tools/call", {"name": "self.echo", "arguments": {"text": "a"}},
                                         request_id="x_n_5")
            call_two = await two.request("tools/call", {"name": "self.echo", "arguments": {"text": "b"}},
                                         request_id="x_n_5")
            list_two = await two.request("tools/list")
            server.add_tool("self.later", "Added later", PropertyList([]), lambda args: True)
            changed = await one.next_message()  # it initialized: it hears of the change
            pong_two = await two.request("ping")  # it never initialized: nothing came first
            return call_one, call_two, list_two, changed, pong_two, a.attempts, b.attempts, two.token

    call_one, call_two, list_two, changed, pong_two, a, b, token_two = run(main())
    assert call_one["result"]["content"][0]["text"] == "echo: a"
    assert call_two["result"]["content"][0]["text"] == "echo: b"
    assert [tool["name"] for tool in list_two["result"]["tools"]] == ["self.echo"]
    assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert pong_two["result"] == {} and (a, b) == (1, 1) and token_two == TOKEN + "-2"


def test_logs_reach_the_endpoint_only_after_it_asks(logs):
    async def main():
        endpoint = await EndpointServer().start()
        server = make_server()
        async with running_link(endpoint.url(TOKEN), server):
            provider = await endpoint.next_provider()
            await provider.initialize()
            await server.log("warning", "not asked for")
            quiet = await provider.request("ping")  # the next message: no log came first
            assert (await provider.request("logging/setLevel", {"level": "info"}))["result"] == {}
            await server.log("warning", "asked for")
            return quiet, await provider.next_message()

    quiet, log = run(main())
    assert quiet["result"] == {}
    assert log["method"] == "notifications/message" and log["params"]["data"] == "asked for"


def test_chosen_tools_and_user_only_ones_when_configured(logs):
    async def main():
        endpoint = await EndpointServer().start()
        async with running_link(endpoint.url(TOKEN), tools=["self.reboot", "self.tool_"]) as narrow, \
                running_link(endpoint.url(TOKEN), tools=["self.reboot", "self."]):
            providers = [await endpoint.next_provider(), await endpoint.next_provider()]
            listed = [[tool["name"] for tool in (await p.request("tools/list"))["result"]["tools"]]
                      for p in providers]
            reboot = [await p.call("self.reboot") for p in providers]
            return sorted(listed), reboot, narrow

    listed, reboot, _ = run(main())
    # "self.tool_" is no prefix (it does not end in "."): only an exact name would match.
    assert listed == [["self.echo", "self.reboot"], ["self.reboot"]]
    assert [r["result"]["content"][0]["text"] for r in reboot] == ["true", "true"]


# -- refusals and a server that does not answer


def test_refusals_are_logged_once_each_slow_the_retries_and_the_link_comes_back(logs):
    async def main():
        endpoint = await EndpointServer().start()
        endpoint.refuse = 1  # HTTP 401 to the first upgrade
        endpoint.policy_close = 1  # then accepted and closed with 1008, as mcp-endpoint-server does
        async with running_link(endpoint.url(TOKEN), backoff_min=0.01, backoff_max=0.2,
                                stable_after=0) as link:
            provider = await endpoint.next_provider()
            refused_before = link.refused
            pong = await provider.request("ping")
            return link, refused_before, pong, list(endpoint.close_codes)

    link, refused_before, pong, codes = run(main())
    assert pong["result"] == {} and link.attempts == 3
    assert refused_before == "WebSocket closed: 1008 token解密失败"  # the last refusal, until it talks to us
    assert link.refused is None
    assert 0.1 <= link.last_delay <= 0.2  # the pause after a refusal: the longest at once
    errors = [r.getMessage() for r in logs.records if r.levelno >= logging.ERROR]
    name = masked(link.url)
    assert errors == [name + ": refused: HTTP 401 Unauthorized (check the URL and its token)",
                      name + ": refused: WebSocket closed: 1008 token解密失败 (check the URL and its token)"]


def test_wss_is_verified_against_the_shipped_roots_and_config_ca(certs, logs):
    async def main():
        endpoint = await EndpointServer(tls=server_tls(certs)).start()
        # The test CA is no public root: refused (and retried) without config.json's ca.
        async with running_link(endpoint.url(TOKEN)) as untrusting:
            while untrusting.attempts < 2:
                await asyncio.sleep(0.02)
            refused = untrusting.connected.is_set()
        async with running_link(endpoint.url(TOKEN), ca=Trust(str(certs / "ca.pem"))):
            pong = await (await endpoint.next_provider()).request("ping")
        return refused, pong

    refused, pong = run(main())
    assert not refused and pong["result"] == {}
    failures = [line for line in lines(logs) if "link lost" in line and "certificate verify failed" in line]
    assert failures and all("wss://127.0.0.1:" in line and "token=***" in line for line in failures)


def test_an_upgrade_never_answered_times_out_and_is_tried_again(logs):
    async def main():
        mute = await Mute().start()
        try:
            async with running_link(mute.url(TOKEN), connect_timeout=0.2) as link:
                while link.attempts < 3:
                    await asyncio.sleep(0.02)
                return mute.accepted, link.connected.is_set()
        finally:
            await mute.stop()

    accepted, connected = run(main())
    assert accepted >= 2 and not connected
    timeouts = [line for line in lines(logs) if "no answer to the upgrade within 0.2 s" in line]
    assert len(timeouts) >= 2 and all("token=***" in line for line in timeouts)


def test_a_url_that_cannot_work_is_refused_with_the_token_masked():
    for url in ("http://h/mcp/?token=" + TOKEN, "ws://h/mcp/?token=%s\r\nX: 1" % TOKEN,
                "wss://h:99999/mcp/?token=" + TOKEN):
        with pytest.raises(ValueError) as refused:
            EndpointLink(make_server(), url)
        assert TOKEN not in str(refused.value) and "token=***" in str(refused.value)


def test_masked_hides_every_query_value():
    assert masked("wss://api.xiaozhi.me/mcp/?token=abc.def") == "wss://api.xiaozhi.me/mcp/?token=***"
    assert masked("ws://h:8004/mcp_endpoint/mcp/?token=a%2Bb&agent=7") == \
        "ws://h:8004/mcp_endpoint/mcp/?token=***&agent=***"
    assert masked("ws://h/mcp/?secret") == "ws://h/mcp/?***"
    assert masked("ws://h/mcp/") == "ws://h/mcp/"


def test_stop_closes_normally_and_run_returns(logs):
    async def main():
        endpoint = await EndpointServer().start()
        link = EndpointLink(make_server(), endpoint.url(TOKEN), **FAST)
        task = asyncio.create_task(link.run())
        await endpoint.next_provider()
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        await asyncio.wait_for(endpoint.connection_ended.wait(), WAIT_S)
        return endpoint.close_codes, link

    codes, link = run(main())
    assert codes == [1000] and not link.connected.is_set()
    assert link.status() == {"url": masked(link.url), "connected": False, "attempts": 1}


# -- bad input: answered as JSON-RPC or RFC 6455 says, and the xiaozhi link beside it
# never disturbed


async def _bad_input(endpoint, provider):
    """Every kind of bad input on one connection, then the ones that end it; returns
    what came back."""
    answers = {}
    await provider.send_raw("not json at all")
    answers["garbage"] = await provider.next_message()
    for name, request_id in (("null", None), ("float", 1.5), ("true", True), ("object", {"a": 1}),
                             ("array", [1]), ("string", "s_n_1"), ("zero", 0), ("negative", -7)):
        await provider.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        answers[name] = await provider.next_message()
    # A flood of calls: 8 wait behind the running one, the rest are refused at once.
    running = await start_slow(provider)
    flood = [await provider.send_request("tools/call", {"name": "self.echo", "arguments": {"text": str(n)}})
             for n in range(12)]
    refusals = [await provider.next_message() for _ in range(4)]
    await cancel(provider, running)
    answered = [await provider.next_message() for _ in range(8)]
    answers["flood"] = (flood, refusals, answered)
    # Then the ones that end the connection: a binary frame (1003), a message over the
    # limit (1009); each time the board comes back.
    await provider.send_raw(b"\x00\x01binary")
    second = await endpoint.next_provider()
    await second.send_raw("x" * 5000)
    third = await endpoint.next_provider()
    answers["after"] = await third.request("ping")
    return answers


def _assert_bad_input(answers, close_codes):
    garbage = answers["garbage"]
    assert garbage["id"] is None and garbage["error"]["code"] == -32700
    for name in ("null", "float", "true", "object", "array"):
        assert answers[name]["id"] is None and answers[name]["error"]["code"] == -32600, name
    assert answers["string"] == {"jsonrpc": "2.0", "id": "s_n_1", "result": {}}
    assert answers["zero"]["id"] == 0 and answers["negative"]["id"] == -7
    flood, refusals, answered = answers["flood"]
    assert [r["id"] for r in refusals] == flood[8:]
    assert {r["error"]["code"] for r in refusals} == {-32000}
    assert [a["id"] for a in answered] == flood[:8]  # and nothing for the cancelled one
    assert [a["result"]["content"][0]["text"] for a in answered] == ["echo: %d" % n for n in range(8)]
    assert answers["after"]["result"] == {}
    assert close_codes[:2] == [1003, 1009]


def test_bad_input_is_refused_logged_once_and_the_xiaozhi_link_beside_is_undisturbed(logs):
    async def main():
        endpoint, backend = await EndpointServer().start(), await Backend().start()
        server = make_server()
        slow = add_slow(server)
        link = xiaozhi.link.XiaozhiLink(server, backend.url, "t", "aa:bb:cc:dd:ee:ff", "c",
                                        hello_timeout=2, idle_timeout=5, ping_interval=1,
                                        backoff_min=0.01, backoff_max=0.08)
        beside = asyncio.create_task(link.run())
        try:
            device = await backend.next_device()
            async with running_link(endpoint.url(TOKEN), server, max_message=4096) as endpoint_link:
                provider = await endpoint.next_provider()
                answers = await _bad_input(endpoint, provider)
                pong = await device.request("ping", next_frame=True)
                attempts = endpoint_link.attempts
        finally:
            beside.cancel()
        return answers, list(endpoint.close_codes), pong, link.attempts, attempts, device, slow

    answers, codes, pong, xiaozhi_attempts, attempts, device, slow = run(main())
    _assert_bad_input(answers, codes)
    assert slow.outcome == ["cancelled"]
    assert pong["result"] == {} and xiaozhi_attempts == 1 and attempts == 3
    assert device.frames == [device.frames[-1]]  # it heard nothing of it all but its own pong
    said = lines(logs)
    assert len([line for line in said if "a binary frame of 8 bytes, not MCP: closing 1003" in line]) == 1
    assert len([line for line in said if "link lost: ConnectionClosed WebSocket closed: 1009 message too big"
                in line]) == 1
    umcp = lines(logs, "umcp")
    # The garbage, and the message over the limit (answered before the 1009 close): one line each.
    assert len([line for line in umcp if "unreadable message (id null): invalid JSON" in line]) == 1
    assert len([line for line in umcp if "unreadable message (id null): message too big" in line]) == 1
    assert len([line for line in umcp if "more than 8 tool calls queued" in line]) == 1


# -- the same link under MicroPython


def test_micropython_endpoint_link_two_urls_a_whole_session_and_bad_input():
    async def main():
        kitchen, office = await EndpointServer().start(), await EndpointServer().start()
        # The script's sources are compiled in this heap (64-bit port): 256K sat at the edge
        # where compiling umcp.server found no 4.6 KB block, passing or not with the URLs'
        # lengths; nothing below depends on the heap's size (the 4 KB limit is the link's).
        script = asyncio.create_task(run_script("endpointclient.py", kitchen.url(TOKEN),
                                                office.url(TOKEN + "-2"), heapsize="320K"))
        first = await kitchen.next_provider()
        other = await office.next_provider()
        results = await _assistant_session(first)
        other_call = await other.call("self.echo", {"text": "office"})
        await kitchen.kill()  # the relay restarts
        await kitchen.start()
        second = await kitchen.next_provider()
        await second.initialize()
        second.ws.transport.pause_reading()  # then goes silent: the board hangs up
        third = await kitchen.next_provider()
        second.ws.transport.resume_reading()
        answers = await _bad_input(kitchen, third)
        await other.call("self.stop")  # the script stops both links and reports
        report = (await asyncio.wait_for(script, WAIT_S))[-1]
        return results, other_call, answers, list(kitchen.close_codes), report, first

    results, other_call, answers, codes, report, first = run(main(), timeout=120)
    _assert_assistant_session(results, 700, ["self.stop"])
    assert first.headers["Device-Id"] == "11:22:33:44:55:66"
    assert other_call["result"]["content"][0]["text"] == "echo: office"
    _assert_bad_input(answers, [code for code in codes if code in (1003, 1009)])
    kitchen_attempts, office_attempts = report["attempts"]
    assert kitchen_attempts >= 5 and office_attempts == 1  # killed, dead, binary, too big
    assert report["cancelled"] == 2
    assert report["dead"] == 1 and TOKEN not in report["log"] and "token=***" in report["log"]
