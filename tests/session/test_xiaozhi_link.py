"""lib/xiaozhi/link.py: the device's link, with a real umcp.McpServer, against a real `websockets`
server playing the xiaozhi backend; on CPython and under the MicroPython unix port
(tests/support/mpyclients/xiaozhiclient.py)."""

import asyncio
import contextlib
import logging

import pytest
from websockets.exceptions import ConnectionClosedError

import xiaozhi.link
from tests.support.firmwareharness import AUDIO_PARAMS, WAIT_S, Backend, run
from tests.support.mpyclients import run_script
from umcp import STRING, McpServer, Property, PropertyList

pytestmark = pytest.mark.timeout(60)

DEVICE_HELLO = {"type": "hello", "version": 1, "features": {"mcp": True},
                "transport": "websocket", "audio_params": AUDIO_PARAMS}
FAST = {"hello_timeout": 2, "idle_timeout": 5, "ping_interval": 1,
        "backoff_min": 0.01, "backoff_max": 0.08}


class DelayRecordingBackend(Backend):
    """The scripted backend, recording the link's last backoff delay as each connection
    attempt reaches it (once `link` is set)."""

    def __init__(self):
        super().__init__()
        self.link = None
        self.attempt_delays = []

    def process_request(self, connection, request):
        if self.link is not None:
            self.attempt_delays.append(self.link.last_delay)
        return super().process_request(connection, request)


def make_server(page_limit=8000):
    server = McpServer(name="umcp-test", version="9.9", page_limit=page_limit)

    def echo(args):
        return "echo: " + args["text"]

    server.add_tool("self.echo", "Echo the text back", PropertyList([Property("text", STRING)]),
                    echo)
    return server


@contextlib.asynccontextmanager
async def running_link(backend, server=None, token="test-token", **options):
    """A XiaozhiLink running in a task against the backend; checks it never ended by itself."""
    settings = dict(FAST, **options)
    link = xiaozhi.link.XiaozhiLink(server or make_server(), backend.url, token,
                               "aa:bb:cc:dd:ee:ff", "0b5a4c2e-1111-4c6e-9a3e-123456789abc",
                               **settings)
    task = asyncio.create_task(link.run())
    try:
        yield link
    finally:
        assert not task.done(), "run() returned or raised: %r" % (task,)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


# -- CPython


def test_headers_hello_and_mcp_through_a_real_mcp_server():
    async def main():
        backend = await Backend().start()
        async with running_link(backend) as link:
            device = await backend.next_device()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            assert link.session_id == device.session_id
            init = await device.request("initialize", {
                "protocolVersion": "2024-11-05",
                "capabilities": {"vision": {"url": "http://127.0.0.1:1/v", "token": "t"}},
                "clientInfo": {"name": "xiaozhi-mcp-client", "version": "1.0"}}, next_frame=True)
            await device.send_mcp({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools = await device.request("tools/list", next_frame=True)
            ping = await device.request("ping", request_id="p-1", next_frame=True)
            call = await device.request("tools/call",
                                        {"name": "self.echo", "arguments": {"text": "hi"}},
                                        next_frame=True)
        return device, init, tools, ping, call

    device, init, tools, ping, call = run(main())
    assert device.headers["Authorization"] == "Bearer test-token"
    assert device.headers["Protocol-Version"] == "1"
    assert device.headers["Device-Id"] == "aa:bb:cc:dd:ee:ff"
    assert device.headers["Client-Id"] == "0b5a4c2e-1111-4c6e-9a3e-123456789abc"
    assert device.hello == DEVICE_HELLO
    assert init["result"]["protocolVersion"] == "2024-11-05"
    assert init["result"]["serverInfo"] == {"name": "umcp-test", "version": "9.9"}
    assert [tool["name"] for tool in tools["result"]["tools"]] == ["self.echo"]
    assert ping == {"jsonrpc": "2.0", "id": "p-1", "result": {}}
    assert call["result"]["content"] == [{"type": "text", "text": "echo: hi"}]


def test_token_with_a_scheme_is_sent_as_is():
    async def main():
        backend = await Backend().start()
        async with running_link(backend, token="Basic abc"):
            return await backend.next_device()

    assert run(main()).headers["Authorization"] == "Basic abc"


def test_tools_list_frames_respect_the_page_limit_with_the_envelope():
    async def main():
        server = make_server(page_limit=700)
        for i in range(12):
            server.add_tool("self.tool_%02d" % i, "Tool number %d " % i + "\u4e2d" * 20,
                            PropertyList([]), lambda args: True)
        backend = await Backend().start()
        async with running_link(backend, server):
            device = await backend.next_device()
            tools, frames = await device.list_tools()
            return device, tools, frames

    device, tools, frames = run(main())
    assert [tool["name"] for tool in tools] == ["self.echo"] + ["self.tool_%02d" % i
                                                               for i in range(12)]
    assert device.frames == frames  # the device sent nothing but the pages
    assert len(frames) > 2
    assert all(len(frame.encode()) <= 700 for frame in frames)


def test_system_alert_other_types_and_garbage_are_routed_or_survived():
    async def main():
        systems, alerts = [], []

        def on_alert(message):
            alerts.append(message)
            raise RuntimeError("a broken alert handler")

        async def on_system(message):
            systems.append(message)

        backend = await Backend().start()
        async with running_link(backend, on_system=on_system, on_alert=on_alert) as link:
            device = await backend.next_device()
            for frame in ('{"type":"system","command":"reboot"}',
                          '{"type":"alert","status":"Warning","message":"low","emotion":"sad"}',
                          '{"type":"stt","text":"hello"}', '{"type":"tts","state":"start"}',
                          '{"type":"llm","emotion":"happy"}', '{"type":"hello"}', "not json",
                          "[1, 2]", '"text"', "{}", b"\x01\x02 opus audio", "\ud7ff\ue000"):
                await device.send_raw(frame)
            await device.send_mcp([1, 2])  # a payload that is not one JSON-RPC object
            _, bad = await device.next_envelope()
            pong = await device.request("ping", next_frame=True)
            attempts = link.attempts
        return systems, alerts, bad, pong, attempts

    systems, alerts, bad, pong, attempts = run(main())
    assert systems == [{"type": "system", "command": "reboot"}]
    assert alerts == [{"type": "alert", "status": "Warning", "message": "low", "emotion": "sad"}]
    assert bad["payload"]["error"]["code"] == -32600
    assert pong["result"] == {}
    assert attempts == 1  # all of that on one connection


def test_hello_timeout_leads_to_a_fresh_connection_and_hello():
    async def main():
        backend = await Backend().start()
        backend.silent = 1
        async with running_link(backend, hello_timeout=0.3) as link:
            device = await backend.next_device()
            pong = await device.request("ping", next_frame=True)
            return backend, link, device, pong

    backend, link, device, pong = run(main())
    assert backend.hellos == [DEVICE_HELLO, DEVICE_HELLO]
    assert link.attempts == 2
    assert device.session_id == "session-2"
    assert pong["result"] == {}


def test_backend_killed_and_restarted_gets_a_fresh_session():
    async def main():
        backend = await Backend().start()
        async with running_link(backend) as link:
            first = await backend.next_device()
            await first.request("ping", next_frame=True)
            await backend.kill()
            await backend.start()
            second = await backend.next_device()
            pong = await second.request("ping", next_frame=True)
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            return backend, link, second, pong

    backend, link, second, pong = run(main())
    assert len(backend.hellos) == 2
    assert second.hello == DEVICE_HELLO
    assert link.session_id == second.session_id == "session-2"
    assert pong["result"] == {}


def test_reconnect_backoff_grows_and_resets_after_a_session():
    async def main():
        backend = await DelayRecordingBackend().start()
        backend.refuse = 6
        # stable_after=0: every session counts as good, however short.
        async with running_link(backend, backoff_min=0.01, backoff_max=0.08,
                                stable_after=0) as link:
            backend.link = link
            device = await backend.next_device()
            await device.ws.close()  # a session ends: the next wait starts from the minimum again
            await backend.next_device()
            return backend, link

    backend, link = run(main())
    delays = backend.attempt_delays
    assert link.attempts == len(delays) == 8  # 6 refused, 1 served, 1 after it closed
    refused = delays[1:7]  # delays[0] may predate recording; the first retry waits on
    assert all(a <= b for a, b in zip(refused[:4], refused[1:4]))  # doubling with jitter
    assert all(0.005 <= d <= 0.08 for d in delays[1:])
    assert refused[-1] >= 0.04  # at the ceiling
    assert delays[7] <= 0.01  # reset after the successful session


def test_sessions_dropped_at_once_do_not_reset_the_backoff():
    async def main():
        backend = await DelayRecordingBackend().start()
        async with running_link(backend, backoff_min=0.01, backoff_max=0.08,
                                stable_after=3600) as link:
            backend.link = link
            for _ in range(4):  # a server that answers hello, then hangs up
                device = await backend.next_device()
                await device.ws.close()
            await backend.next_device()
            return backend, link

    backend, link = run(main())
    delays = backend.attempt_delays
    assert link.attempts == len(delays) == 5
    assert all(a <= b for a, b in zip(delays[1:3], delays[2:4]))  # still doubling, with jitter
    assert delays[4] >= 0.04  # at the ceiling, not back at the minimum


def test_refused_tcp_connections_never_stop_run():
    async def main():
        backend = await Backend().start()
        await backend.kill()  # nothing listens on the port any more
        async with running_link(backend) as link:
            while link.attempts < 4:
                await asyncio.sleep(0.01)
            assert not link.connected.is_set()

    run(main())


def test_silent_channel_is_declared_dead_and_replaced():
    async def main():
        backend = await Backend().start()
        async with running_link(backend, ping_interval=0.05, idle_timeout=0.3) as link:
            first = await backend.next_device()
            first.ws.transport.pause_reading()  # no pongs, no answers: a dead channel
            second = await backend.next_device()
            first.ws.transport.resume_reading()  # lets the server see the device hung up
            pong = await second.request("ping", next_frame=True)
            return link, pong

    link, pong = run(main())
    assert link.attempts == 2
    assert pong["result"] == {}


def test_a_send_stuck_on_a_dead_peer_does_not_stall_the_watchdog():
    async def main():
        server = make_server()
        # Far more than the loopback buffers hold while the backend reads nothing.
        server.add_tool("self.big", "A huge answer", PropertyList([]), lambda args: "x" * (16 << 20))
        # No frame size limit: the whole answer would be read if it ever got through.
        backend = await Backend(max_size=None).start()
        async with running_link(backend, server, ping_interval=0.05, idle_timeout=0.5) as link:
            first = await backend.next_device()
            await first.send_request("tools/call", {"name": "self.big", "arguments": {}})
            first.ws.transport.pause_reading()  # the answer fills the buffers and sticks
            second = await backend.next_device()
            pong = await second.request("ping", next_frame=True)
            attempts = link.attempts
            # Only now does the first connection get read (nothing competes with the second
            # session's watchdog): it holds part of the answer and ends without a close frame.
            first.ws.transport.resume_reading()
            await asyncio.wait_for(first.ws.wait_closed(), WAIT_S)
            with pytest.raises(ConnectionClosedError):
                await first.ws.recv()  # the answer never got through whole: it was stuck
        return attempts, pong

    attempts, pong = run(main())
    assert attempts == 2
    assert pong["result"] == {}


def test_pings_keep_a_quiet_channel_alive():
    async def main():
        backend = await Backend().start()
        async with running_link(backend, ping_interval=0.05, idle_timeout=0.3) as link:
            device = await backend.next_device()
            await asyncio.sleep(1.0)  # > 3 idle timeouts with nothing but pongs coming in
            pong = await device.request("ping", next_frame=True)
            return link, pong

    link, pong = run(main())
    assert link.attempts == 1
    assert pong["result"] == {}


@pytest.mark.parametrize("frame, code", [("x" * 5000, 1009), (b"\x81\x81abcd\x00", 1002)])
def test_bad_frames_close_the_session_and_it_reconnects(frame, code):
    async def main():
        backend = await Backend().start()
        async with running_link(backend, max_message=4096):
            first = await backend.next_device()
            if isinstance(frame, bytes):
                first.ws.transport.write(frame)  # a masked frame from the server
            else:
                await first.send_raw(frame)
            second = await backend.next_device()
            pong = await second.request("ping", next_frame=True)
            return backend, pong

    backend, pong = run(main())
    assert backend.close_codes[0] == code
    assert pong["result"] == {}


def test_stop_closes_normally_and_run_returns():
    async def main():
        backend = await Backend().start()
        server = make_server()
        link = xiaozhi.link.XiaozhiLink(server, backend.url, "t", "d", "c", **FAST)
        task = asyncio.create_task(link.run())
        await backend.next_device()
        assert link.mcp in server.sessions
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        await asyncio.wait_for(backend.connection_ended.wait(), WAIT_S)
        return backend, link, server

    backend, link, server = run(main())
    assert backend.close_codes == [1000]
    assert not link.connected.is_set()
    # The stopped link's session has left the server: a link built again for new settings
    # (the application's) does not leave one behind each time, nor counts drops for it.
    assert link.mcp not in server.sessions


def test_messages_while_disconnected_are_dropped_not_raised_and_counted_once(caplog):
    async def main():
        server = make_server()
        backend = await Backend().start()
        await backend.kill()
        async with running_link(backend, server) as link:
            for _ in range(3):
                await server.notify("notifications/message", {"level": "info", "data": "x"})
            dropped = link.dropped
            await backend.start()
            device = await backend.next_device()
            await device.request("ping", next_frame=True)
            return dropped, link.dropped

    with caplog.at_level(logging.INFO, logger="xiaozhi"):
        dropped, after = run(main())
    assert (dropped, after) == (3, 0)
    lines = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert lines == ["link down: MCP messages are dropped until the next session",
                     "3 MCP message(s) were dropped while the link was down"]


def test_replies_owed_when_the_session_drops_are_cancelled_and_counted_once(caplog):
    async def main():
        server = make_server()
        started, release = asyncio.Event(), asyncio.Event()
        outcome = []

        async def slow(args):
            started.set()
            try:
                await release.wait()
            except asyncio.CancelledError:
                outcome.append("cancelled")
                raise
            outcome.append("finished")
            return "too late"

        server.add_tool("self.slow", "Takes its time", PropertyList([]), slow)
        backend = await Backend().start()
        async with running_link(backend, server) as link:
            first = await backend.next_device()
            for _ in range(3):  # one runs, two wait behind it
                await first.send_request("tools/call", {"name": "self.slow", "arguments": {}})
            await asyncio.wait_for(started.wait(), WAIT_S)
            await backend.kill()
            await backend.start()
            second = await backend.next_device()
            release.set()
            await asyncio.sleep(0.1)
            # Nothing owed to the first session comes out on the second one.
            pong = await second.request("ping", next_frame=True)
            return outcome, pong, link.dropped

    with caplog.at_level(logging.INFO, logger="xiaozhi"):
        outcome, pong, dropped = run(main())
    assert outcome == ["cancelled"] and pong["result"] == {} and dropped == 0
    messages = [r.getMessage() for r in caplog.records]
    assert [m for m in messages if "owed" in m] == [
        "session ended: cancelled 3 tool call(s) it was owed a reply for"]
    assert not [m for m in messages if "dropped" in m]


def test_a_server_url_that_cannot_work_is_refused_at_construction():
    for url in ("ws://h/xiaozhi/v1/\r\nX-Evil: 1", "ws://h/xiaozhi v1/", "http://h/xiaozhi/v1/",
                "wss://h\t/"):
        with pytest.raises(ValueError, match="control character|not a WebSocket URL"):
            xiaozhi.link.XiaozhiLink(make_server(), url, "t", "aa:bb:cc:dd:ee:ff", "c")


def test_bearer():
    assert xiaozhi.link.bearer("abc") == "Bearer abc"
    assert xiaozhi.link.bearer("Bearer abc") == "Bearer abc"


# -- the same link under MicroPython


# The 64-bit interpreter compiles the link and the server from source here, which needs
# contiguous room a deployed .mpy never asks for (umcp.server's compile failed at 256K once
# the module grew): the board's heap figures come from make bench (32-bit, .mpy) instead.
CLIENT_HEAP = "384K"


def test_micropython_link():
    async def main():
        backend = await Backend().start()
        script = asyncio.create_task(run_script("xiaozhiclient.py", backend.url, heapsize=CLIENT_HEAP))
        first = await backend.next_device()
        init = await first.request("initialize", {"protocolVersion": "2025-06-18",
                                                  "capabilities": {}}, next_frame=True)
        tools = await first.request("tools/list", next_frame=True)
        call = await first.request("tools/call",
                                   {"name": "self.echo", "arguments": {"text": "\u4f60\u597d"}},
                                   next_frame=True)
        for frame in ("garbage", b"\x00\x01", '{"type":"tts","state":"stop"}',
                      '{"type":"alert","status":"s","message":"m","emotion":"e"}'):
            await first.send_raw(frame)
        pong = await first.request("ping", next_frame=True)
        await backend.kill()  # the backend restarts
        await backend.start()
        second = await backend.next_device()
        await second.request("ping", next_frame=True)
        second.ws.transport.pause_reading()  # then goes silent: the device hangs up
        third = await backend.next_device()
        second.ws.transport.resume_reading()
        await third.send_raw('{"type":"system","command":"reboot"}')  # the script stops on it
        report = (await asyncio.wait_for(script, WAIT_S))[-1]
        return backend, first, init, tools, call, pong, report

    backend, first, init, tools, call, pong, report = run(main())
    assert first.headers["Authorization"] == "Bearer mpy-token"
    assert first.headers["Device-Id"] == "11:22:33:44:55:66"
    assert backend.hellos == [DEVICE_HELLO] * 3
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert [tool["name"] for tool in tools["result"]["tools"]] == ["self.echo"]
    assert call["result"]["content"] == [{"type": "text", "text": "echo: \u4f60\u597d"}]
    assert pong["result"] == {}
    assert report == {"attempts": 3, "session_id": "session-3", "alerts": ["m"],
                      "system": ["reboot"]}
    assert backend.close_codes[-1] == 1000  # stop() closed the last session normally


# -- hostile input, on both runtimes

EMOJI = "\U0001F600"


async def _hostile_session(device):
    """Input that used to drop the link or poison replies; then a ping. Returns what came
    back, as raw frames and parsed replies."""
    # json.dumps escapes an emoji as a surrogate pair: the reply must carry it as one
    # character, in valid UTF-8 (a `websockets` peer closes with 1007 otherwise).
    emoji_ping = await device.request("ping", request_id="id-" + EMOJI, next_frame=True)
    emoji_frame = device.frames[-1]
    lone = await device.request("tools/call", {"name": "self.echo", "arguments": {"text": "a\ud83db"}},
                                next_frame=True)
    # Nested 1000 deep: past any sane depth, and CPython's json would recurse out.
    await device.send_raw('{"session_id":"%s","type":"mcp","payload":%s}'
                          % (device.session_id, "[" * 1000 + "]" * 1000))
    _, deep = await device.next_envelope()
    await device.send_raw('{"type":"mcp","payload":{"jsonrpc":"2.0","id":5,"method":')  # truncated
    _, truncated = await device.next_envelope()
    # Too deep, but its id sits at the top of the payload, before the nesting: answered with it.
    await device.send_raw('{"session_id":"%s","type":"mcp","payload":{"jsonrpc":"2.0","id":"deep-1",'
                          '"method":"ping","params":{"x":%s}}}' % (device.session_id, "[" * 40 + "]" * 40))
    _, deep_with_id = await device.next_envelope()
    # A lone surrogate in the id (valid JSON): the reply carries it as the client wrote it.
    await device.send_raw('{"session_id":"%s","type":"mcp","payload":{"jsonrpc":"2.0",'
                          '"id":"id-1909-\\ud800lone","method":"ping"}}' % device.session_id)
    lone_id_frame, lone_id = await device.next_envelope()
    pong = await device.request("ping", next_frame=True)
    return (emoji_ping, emoji_frame, lone, deep["payload"], truncated["payload"], deep_with_id["payload"],
            lone_id["payload"], lone_id_frame, pong)


def _assert_hostile_session(results):
    (emoji_ping, emoji_frame, lone, deep, truncated, deep_with_id, lone_id, lone_id_frame,
     pong) = results
    assert emoji_ping == {"jsonrpc": "2.0", "id": "id-" + EMOJI, "result": {}}
    assert EMOJI.encode() in emoji_frame.encode("utf-8") or "\\ud83d\\ude00" in emoji_frame
    assert lone["result"]["content"] == [{"type": "text", "text": "echo: a\ufffdb"}]
    assert deep["id"] is None and deep["error"]["code"] == -32700  # no id to read in it
    assert "nesting deeper than" in deep["error"]["message"]
    # Cut short after its id: not JSON, so no id is read out of it (JSON-RPC 2.0: null).
    assert truncated["id"] is None and truncated["error"]["code"] == -32700
    assert deep_with_id["id"] == "deep-1" and deep_with_id["error"]["code"] == -32700
    assert "nesting deeper than" in deep_with_id["error"]["message"]
    # The very string the client sent (json.loads reads the escape back), in valid UTF-8.
    assert lone_id == {"jsonrpc": "2.0", "id": "id-1909-\ud800lone", "result": {}}
    lone_id_frame.encode("utf-8")
    assert pong["result"] == {}


def test_hostile_input_is_answered_and_the_link_stays_up():
    async def main():
        backend = await Backend().start()
        async with running_link(backend) as link:
            device = await backend.next_device()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            results = await _hostile_session(device)
            return results, link.attempts, list(backend.close_codes)

    results, attempts, closed = run(main())
    _assert_hostile_session(results)
    assert attempts == 1 and closed == []  # one connection, never closed


def test_hostile_input_is_answered_and_the_link_stays_up_under_micropython():
    async def main():
        backend = await Backend().start()
        script = asyncio.create_task(run_script("xiaozhiclient.py", backend.url, heapsize=CLIENT_HEAP))
        device = await backend.next_device()
        results = await _hostile_session(device)
        await device.send_raw('{"type":"system","command":"reboot"}')  # the script stops on it
        report = (await asyncio.wait_for(script, WAIT_S))[-1]
        return results, report

    results, report = run(main())
    _assert_hostile_session(results)
    assert report["attempts"] == 1
