# McpServer inside MicroPython: calls one at a time, a slow tool beside ping and tools/list,
# cancellation, progress, log lines, list_changed, notifications.
# Plain test functions with bare asserts: they run under pytest and on the device runners.

import asyncio
import json

from umcp import McpServer
from umcp.compat import join_pieces
from portable_support import Gate, Wire, call, settle


async def test_a_slow_tool_does_not_stop_ping_or_tools_list():
    wire = Wire()
    gate = Gate()
    wire.server.add_tool("slow", "d", None, gate)
    await wire.initialize()
    assert await wire.feed(call("slow", id=1)) == []  # handle() returns before the tool has run
    await settle(gate.entered.is_set)
    assert (await wire.request("ping", id=2))["result"] == {}
    assert [t["name"] for t in (await wire.request("tools/list", id=3))["result"]["tools"]] == ["slow"]
    assert wire.find(1) is None
    gate.release.set()
    assert (await wire.response(1))["result"]["content"][0]["text"] == "done"


async def test_cancellation_sends_no_response():
    wire = Wire()
    running, queued, last = Gate(), Gate(), Gate("last")
    last.release.set()
    wire.server.add_tool("running", "d", None, running)
    wire.server.add_tool("queued", "d", None, queued)
    wire.server.add_tool("last", "d", None, last)
    await wire.feed(call("running", id=1))
    await wire.feed(call("queued", id=2))
    await wire.feed(call("last", id=3))
    await settle(running.entered.is_set)
    assert await wire.feed({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}) == []
    await wire.feed({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    await wire.response(3)
    assert running.cancelled and not queued.entered.is_set()
    assert [m["id"] for m in wire.messages()] == [3]


async def test_a_call_cancelled_while_it_writes_a_log_line_finishes_the_line_first():
    # A transport writes a message in several awaited pieces (a WebSocket frame in chunks):
    # cut there, the client would read the next message as this one's rest. The
    # cancellation waits until the line is out; then the call ends with no response.
    server = McpServer(name="dev", version="9")
    written, writing, release = [], asyncio.Event(), asyncio.Event()

    async def slow_send(pieces):
        text = join_pieces(pieces)
        if "notifications/message" in text:
            writing.set()
            await release.wait()  # half of it is out
        written.append(json.loads(text))

    server.set_sender(slow_send)
    after_log = []

    async def chatty(args):
        await server.log("info", "x" * 3000)
        after_log.append(True)  # never: the cancellation comes with the log line's end
        return "done"

    server.add_tool("chatty", "d", None, chatty)
    await server.default.handle(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                            "params": {"protocolVersion": "2025-06-18"}}))
    await server.default.handle(json.dumps(call("chatty", id=1)))
    await settle(writing.is_set)
    await server.default.handle(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                            "params": {"requestId": 1}}))
    for _ in range(5):
        await asyncio.sleep(0)
    release.set()
    await settle(lambda: server.running is None)
    assert written[-1]["params"]["data"] == "x" * 3000  # the line went out whole
    assert after_log == []  # and the call stopped there, unanswered
    await server.default.handle(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert [m.get("id") for m in written[1:]] == [None, 2]  # the log line, then the ping's answer


async def test_cancel_calls_drops_every_owed_response_and_counts_them():
    # What a transport does when its session ends: nobody is left to answer.
    wire = Wire()
    running, queued = Gate(), Gate()
    wire.server.add_tool("running", "d", None, running)
    wire.server.add_tool("queued", "d", None, queued)
    await wire.feed(call("running", id=1))
    await wire.feed(call("queued", id=2))
    await wire.feed(call("queued", id=3))
    await settle(running.entered.is_set)
    assert wire.server.cancel_calls() == 3
    await settle(lambda: running.cancelled)
    assert wire.server.cancel_calls() == 0  # nothing is owed any more
    later = Gate("later")
    later.release.set()
    wire.server.add_tool("later", "d", None, later)
    await wire.feed(call("later", id=4))  # the next session's calls run as usual
    assert (await wire.response(4))["result"]["content"][0]["text"] == "later"
    assert not queued.entered.is_set()
    assert [m["id"] for m in wire.messages()] == [4]


async def test_progress_requested_only_for_a_call_with_a_token():
    wire = Wire()
    server = wire.server
    asked = []
    server.add_tool("t", "d", None, lambda args: asked.append(server.progress_requested()))
    assert server.progress_requested() is False  # no call running
    for number, meta in enumerate(({"progressToken": "p-1"}, {"progressToken": 0}, None, {"progressToken": None})):
        await wire.feed(call("t", id=number, meta=meta))  # 0: a falsy token is a token; None is none
        await wire.response(number)
    assert asked == [True, True, False, False]
    assert server.progress_requested() is False  # the calls are over


async def test_calls_run_one_at_a_time_in_arrival_order():
    wire = Wire()
    log = []

    def tool(tag):
        async def run(args):
            log.append(("start", tag))
            for _ in range(3):
                await asyncio.sleep(0)
            log.append(("end", tag))
            return tag
        return run

    for tag in "abc":
        wire.server.add_tool(tag, "d", None, tool(tag))
    for number, tag in enumerate("cab"):
        await wire.feed(call(tag, id=number))
    for number in range(3):
        await wire.response(number)
    assert log == [("start", "c"), ("end", "c"), ("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]
    assert [m["result"]["content"][0]["text"] for m in wire.messages()] == ["c", "a", "b"]


def cancelled(request_id):
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


async def test_cancellation_matches_the_id_type():
    wire = Wire()
    gate = Gate()
    wire.server.add_tool("slow", "d", None, gate)
    await wire.feed(call("slow", id=7))
    await settle(gate.entered.is_set)
    await wire.feed(cancelled("7"))
    await wire.feed(cancelled(8))
    gate.release.set()
    assert (await wire.response(7))["result"]["isError"] is False
    assert not gate.cancelled


async def test_a_call_cancelled_before_it_starts_is_skipped():
    wire = Wire()
    seen = []
    wire.server.add_tool("t", "d", None, seen.append)
    wire.server.add_tool("u", "d", None, lambda args: "u")
    await wire.feed(call("t", id=1))  # its task exists but has not run yet
    await wire.feed(cancelled(1))
    await wire.feed(call("u", id=2))
    await wire.response(2)
    assert seen == [] and [m["id"] for m in wire.messages()] == [2]


async def test_a_tool_that_swallows_cancellation_still_sends_nothing():
    wire = Wire()
    entered = asyncio.Event()

    async def stubborn(args):
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "finished anyway"

    wire.server.add_tool("stubborn", "d", None, stubborn)
    wire.server.add_tool("next", "d", None, lambda args: "next")
    await wire.feed(call("stubborn", id=1))
    await settle(entered.is_set)
    await wire.feed(cancelled(1))
    await wire.feed(call("next", id=2))
    await wire.response(2)
    assert [m["id"] for m in wire.messages()] == [2]


async def test_progress_goes_to_a_call_with_a_progress_token():
    wire = Wire()
    server = wire.server
    outcomes = []

    async def upgrade(args):
        outcomes.append(await server.progress(10, 100, "downloading"))
        outcomes.append(await server.progress(10, 100))  # not increasing: dropped
        outcomes.append(await server.progress(55.5))
        return True

    server.add_tool("self.upgrade_firmware", "d", None, upgrade)
    await wire.initialize("2025-06-18")
    await wire.feed(call("self.upgrade_firmware", id=3, meta={"progressToken": "up-1"}))
    await wire.response(3)
    progress = [m["params"] for m in wire.messages() if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": "up-1", "progress": 10, "total": 100, "message": "downloading"},
                        {"progressToken": "up-1", "progress": 55.5}]
    assert outcomes == [True, False, True]
    assert await server.progress(99) is False  # no call running any more


async def test_no_progress_without_a_token_and_a_token_keeps_its_type():
    wire = Wire()
    outcomes = []

    async def tool(args):
        outcomes.append(await wire.server.progress(1))
        return True

    wire.server.add_tool("t", "d", None, tool)
    await wire.feed(call("t", id=5, meta={"other": 1}))
    await wire.response(5)
    assert outcomes == [False]
    assert [m for m in wire.messages() if "method" in m] == []
    await wire.feed(call("t", id=6, meta={"progressToken": 42}))
    await wire.response(6)
    sent = [m for m in wire.messages() if m.get("method") == "notifications/progress"]
    assert sent[0]["params"]["progressToken"] == 42 and type(sent[0]["params"]["progressToken"]) is int


async def test_log_messages_and_set_level():
    wire = Wire()
    await wire.initialize()
    await wire.server.log("info", {"free_heap": 81234}, logger="device")
    assert wire.messages()[-1] == {"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"level": "info", "data": {"free_heap": 81234}, "logger": "device"}}
    assert (await wire.request("logging/setLevel", {"level": "error"}, id=4))["result"] == {}
    count = len(wire.frames)
    await wire.server.log("warning", "dropped")
    assert len(wire.frames) == count
    await wire.server.log("critical", "kept")
    assert wire.messages()[-1]["params"] == {"level": "critical", "data": "kept"}
    assert (await wire.request("logging/setLevel", {"level": "loud"}, id=5))["error"]["code"] == -32602
    try:
        await wire.server.log("loud", "x")
    except ValueError:
        pass
    else:
        assert False, "an unknown level was logged"


async def test_notify_sends_any_notification():
    wire = Wire()
    await wire.server.notify("notifications/state_changed", {"newState": "idle", "oldState": "connecting"})
    assert wire.messages() == [{"jsonrpc": "2.0", "method": "notifications/state_changed",
                                "params": {"newState": "idle", "oldState": "connecting"}}]


async def test_list_changed_only_after_initialize_and_once_per_burst():
    wire = Wire()
    server = wire.server

    def changes():
        return len([m for m in wire.messages() if m.get("method") == "notifications/tools/list_changed"])

    server.add_tool("before", "d", None, bool)
    await asyncio.sleep(0)
    assert wire.frames == []
    await wire.initialize()
    for name in ("a", "b", "c"):
        server.add_tool(name, "d", None, bool)
    server.remove_tool("before")
    await settle(lambda: changes() == 1)
    changed = [m for m in wire.messages() if m.get("method") == "notifications/tools/list_changed"][0]
    assert "params" not in changed
    await wire.request("ping", id=99)
    assert changes() == 1
    server.remove_tool("a")
    await settle(lambda: changes() == 2)
    names = [t["name"] for t in (await wire.request("tools/list", id=100))["result"]["tools"]]
    assert names == ["b", "c"]


async def test_a_callback_refusing_its_arguments_gets_invalid_params_as_the_schema_would():
    # What a schema cannot say (a time that has passed, a text too long): the callback raises
    # InvalidParams. Before 2025-11-25 that is -32602 with the reason, from it an isError
    # result the model reads (SEP-1303), as the schema's own check answers; any other
    # exception stays an isError result on every revision.
    from umcp import INTEGER, InvalidParams, Property, PropertyList

    def pick(args):
        if args["n"] > 3:
            raise InvalidParams("n: at most 3 today")
        if args["n"] < 0:
            raise ValueError("negative")
        return args["n"]

    for version, as_result in (("2024-11-05", False), ("2025-06-18", False), ("2025-11-25", True)):
        wire = Wire()
        wire.server.add_tool("pick", "d", PropertyList([Property("n", INTEGER)]), pick)
        await wire.initialize(version)
        await wire.feed(call("pick", {"n": 5}, id=1))
        refused = await wire.response(1)
        if as_result:
            assert refused["result"]["isError"] is True
            assert refused["result"]["content"][0]["text"] == "n: at most 3 today"
        else:
            assert refused["error"] == {"code": -32602, "message": "n: at most 3 today"}
        await wire.feed(call("pick", {"n": -1}, id=2))
        failed = await wire.response(2)
        assert failed["result"]["isError"] is True and "negative" in failed["result"]["content"][0]["text"]
        await wire.feed(call("pick", {"n": 2}, id=3))
        assert (await wire.response(3))["result"]["content"][0]["text"] == "2"


async def test_a_transport_that_waits_has_a_call_run_in_its_own_task():
    # Session.waits (an HTTP request's): a call with none ahead of it runs in the task that
    # handed the request over, answered before handle() returns; a coroutine tool goes on
    # in a task of its own (handle() returns at once), and a call behind a running one
    # waits its turn in the queue as every other.
    from umcp.server import Session

    class Waiting(Session):
        waits = True

    server = McpServer(name="dev", version="9")
    sent = []
    seen = []

    def quick(args):
        seen.append((asyncio.current_task(), server.current_call() is not None))
        return "quick"

    gate = Gate()
    server.add_tool("quick", "d", None, quick)
    server.add_tool("slow", "d", None, gate)
    session = Waiting(server, lambda pieces: sent.append(json.loads(join_pieces(pieces))))
    here = asyncio.current_task()
    await server.handle(call("quick", id=1), session)
    assert seen == [(here, True)] and [m["id"] for m in sent] == [1]
    await server.handle(call("slow", id=2), session)  # returns while the tool waits
    await settle(gate.entered.is_set)
    assert server.current_call() is None and [m["id"] for m in sent] == [1]
    await server.handle(call("quick", id=3), session)  # behind the slow one: queued
    assert len(seen) == 1 and [m["id"] for m in sent] == [1]
    gate.release.set()
    await settle(lambda: len(sent) == 3)
    assert [m["id"] for m in sent] == [1, 2, 3] and seen[1][0] is not here
    assert sent[1]["result"]["content"][0]["text"] == "done" and server.running is None
