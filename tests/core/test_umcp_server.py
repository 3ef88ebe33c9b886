"""McpServer: lifecycle, JSON-RPC rules, tools/call, concurrency, cancellation, notifications.

Every message the server emits goes through McpWire (tests/support/mcpwire.py), which
validates it against the official MCP SDK's types for the negotiated version.
"""

import asyncio
import json
import logging

import pytest

from umcp import INTEGER, McpServer, Property
from umcp.compat import join_pieces
from umcp.listing import entry_json

from portable_support import Gate  # noqa: I001 (tests/portable, on the path by conftest)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(10)]

VOLUME = [Property("volume", INTEGER, minimum=0, maximum=100)]


def call(name, arguments=None, id=1, meta=None):
    params = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def error_of(message):
    return message["error"]["code"], message["error"]["message"]


# -- lifecycle ----------------------------------------------------------------

async def test_initialize_announces_the_transport_message_limit_when_set(wire):
    assert "experimental" not in (await wire.initialize())["result"]["capabilities"]
    wire.server.max_message = 6144
    result = (await wire.initialize())["result"]
    assert result["capabilities"]["experimental"] == {"messageLimit": {"maxBytes": 6144}}


async def test_initialize_without_version_answers_the_xiaozhi_version(wire):
    # The xiaozhi protocol document's initialize carries only capabilities.
    response = await wire.request("initialize", {"capabilities": {}})
    assert response["result"]["protocolVersion"] == "2024-11-05"


async def test_initialize_with_a_non_string_version_is_invalid_params(wire):
    response = await wire.request("initialize", {"protocolVersion": 20241105})
    assert error_of(response)[0] == -32602


async def test_vision_callback_may_be_async_or_fail(wire, caplog):
    seen = []

    async def remember(url, token):
        seen.append(url)

    wire.server.on_vision(remember)
    await wire.initialize(capabilities={"vision": {"url": "http://a"}})
    assert seen == ["http://a"]

    def broken(url, token):
        raise RuntimeError("no camera")

    wire.server.on_vision(broken)
    response = await wire.request("initialize", {"capabilities": {"vision": {"url": "http://b"}}}, id=2)
    assert response["result"]["protocolVersion"] == "2024-11-05"
    assert "no camera" in caplog.text


# -- JSON-RPC -------------------------------------------------------------------

@pytest.mark.parametrize("payload, echoed", [
    (b'{"jsonrpc": "2.0", "id": 1,', 1),  # cut short after the id
    ('{"jsonrpc":"2.0","id":"a-\\ud800","method":"ping","params":{"x":NaN}}', "a-\ud800"),
    ('{"id":7,"jsonrpc":"2.0","method":"ping","params":' + "[" * 40 + "]" * 40 + "}", 7),  # too deep
    ('{"params":{"id":3},"id":"top","method":', "top"),  # the top-level id, not a nested one
])
async def test_unreadable_requests_are_answered_with_their_id_where_it_can_be_read(wire, payload, echoed):
    sent = await wire.feed(payload)
    assert len(sent) == 1 and error_of(sent[0])[0] == -32700 and sent[0]["id"] == echoed
    assert (await wire.request("ping", id="after"))["result"] == {}


@pytest.mark.parametrize("payload", ["[]", "42", '"text"', "null", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
                                     None, 42, object()])
async def test_non_objects_get_32600_with_null_id(wire, payload):
    sent = await wire.feed(payload)
    assert len(sent) == 1 and error_of(sent[0])[0] == -32600 and sent[0]["id"] is None


async def test_text_and_bytes_payloads_are_served(wire):
    assert (await wire.feed('{"jsonrpc":"2.0","id":1,"method":"ping"}'))[0]["result"] == {}
    assert (await wire.feed(b'{"jsonrpc":"2.0","id":2,"method":"ping"}'))[0]["result"] == {}
    assert (await wire.feed(bytearray(b'{"jsonrpc":"2.0","id":3,"method":"ping"}')))[0]["id"] == 3


async def test_internal_errors_get_32603(wire):
    wire.server.name = object()  # cannot be serialized: initialize fails inside the server
    code, message = error_of(await wire.request("initialize", {"protocolVersion": "2025-06-18"}, id=3))
    assert code == -32603 and message.startswith("internal error")


async def test_a_failing_sender_is_logged_and_the_server_goes_on(wire, caplog):
    sent = []

    async def flaky(pieces):
        sent.append(join_pieces(pieces))
        if len(sent) == 1:
            raise OSError("link down")

    wire.server.set_sender(flaky)
    with caplog.at_level(logging.ERROR, logger="umcp"):
        await wire.server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        await wire.server.handle({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert "link down" in caplog.text
    assert [json.loads(text)["id"] for text in sent] == [1, 2]


async def test_no_sender_drops_without_raising():
    server = McpServer()
    await server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    await server.notify("notifications/tools/list_changed")


async def test_a_plain_sender_works_too():
    server = McpServer()
    sent = []
    server.set_sender(sent.append)
    await server.handle('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert json.loads(join_pieces(sent[0])) == {"jsonrpc": "2.0", "id": 1, "result": {}}


# -- registration ---------------------------------------------------------------

def test_remove_unknown_tool_raises_key_error():
    with pytest.raises(KeyError):
        McpServer().remove_tool("nope")


def test_add_tool_passes_hints_and_returns_the_tool():
    tool = McpServer().add_tool("t", "d", None, bool, read_only=True, title="T")
    assert json.loads(entry_json(tool))["annotations"] == {"readOnlyHint": True, "title": "T"}


# -- tools/call -----------------------------------------------------------------

async def test_a_result_json_cannot_carry_is_an_error_result(wire):
    # CPython only: MicroPython's json.dumps writes such an object's repr ("<object>") and
    # the board answers it as a text with isError false (the portable cases leave it out).
    wire.server.add_tool("odd", "d", None, lambda args: object())
    assert (await wire.request("tools/call", {"name": "odd"}, id=3))["result"]["isError"] is True
    assert (await wire.request("ping", id=4))["result"] == {}


async def test_handle_returns_before_a_slow_tool_and_ping_list_are_answered_meanwhile(wire):
    gate = Gate()
    wire.server.add_tool("slow", "d", None, gate)
    await wire.initialize()
    assert await wire.feed(call("slow", id=10)) == []
    await asyncio.wait_for(gate.entered.wait(), 5)
    assert (await wire.request("ping", id=11))["result"] == {}
    assert [t["name"] for t in (await wire.request("tools/list", id=12))["result"]["tools"]] == ["slow"]
    assert not any(m.get("id") == 10 for m in wire.sent)
    gate.release.set()
    assert (await wire.response(10))["result"]["content"][0]["text"] == "done"


async def test_calls_run_one_at_a_time_in_arrival_order(wire):
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
    assert [m["result"]["content"][0]["text"] for m in wire.sent] == ["c", "a", "b"]


async def test_cancelling_the_running_call_sends_no_response(wire):
    slow, after = Gate(), Gate("after")
    after.release.set()
    wire.server.add_tool("slow", "d", None, slow)
    wire.server.add_tool("after", "d", None, after)
    await wire.feed(call("slow", id=1))
    await wire.feed(call("after", id=2))
    await asyncio.wait_for(slow.entered.wait(), 5)
    assert await wire.notification("notifications/cancelled", {"requestId": 1, "reason": "user"}) == []
    await wire.response(2)
    assert slow.cancelled
    assert [m["id"] for m in wire.sent] == [2]


async def test_cancelling_a_queued_call_means_it_never_runs(wire):
    first, queued, last = Gate("first"), Gate(), Gate("last")
    last.release.set()
    for name, gate in (("first", first), ("queued", queued), ("last", last)):
        wire.server.add_tool(name, "d", None, gate)
    await wire.feed(call("first", id="a"))
    await wire.feed(call("queued", id="b"))
    await wire.feed(call("last", id="c"))
    await wire.notification("notifications/cancelled", {"requestId": "b"})
    first.release.set()
    await wire.response("c")
    assert queued.calls == []
    assert [m["id"] for m in wire.sent] == ["a", "c"]


async def test_cancellation_matches_the_id_type(wire):
    gate = Gate()
    wire.server.add_tool("slow", "d", None, gate)
    await wire.feed(call("slow", id=7))
    await asyncio.wait_for(gate.entered.wait(), 5)
    await wire.notification("notifications/cancelled", {"requestId": "7"})
    await wire.notification("notifications/cancelled", {"requestId": 8})
    gate.release.set()
    assert (await wire.response(7))["result"]["isError"] is False
    assert not gate.cancelled


async def test_a_call_cancelled_before_it_starts_is_skipped(wire):
    seen = []
    wire.server.add_tool("t", "d", None, seen.append)
    wire.server.add_tool("u", "d", None, lambda args: "u")
    await wire.feed(call("t", id=1))  # its task exists but has not run yet
    await wire.notification("notifications/cancelled", {"requestId": 1})
    await wire.feed(call("u", id=2))
    await wire.response(2)
    assert seen == [] and [m["id"] for m in wire.sent] == [2]


async def test_a_tool_that_swallows_cancellation_still_sends_nothing(wire):
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
    await asyncio.wait_for(entered.wait(), 5)
    await wire.notification("notifications/cancelled", {"requestId": 1})
    await wire.feed(call("next", id=2))
    await wire.response(2)
    assert [m["id"] for m in wire.sent] == [2]


# -- notifications from the device ----------------------------------------------

async def test_progress_goes_to_a_call_with_a_progress_token(wire):
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
    progress = [m["params"] for m in wire.sent if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": "up-1", "progress": 10, "total": 100, "message": "downloading"},
                        {"progressToken": "up-1", "progress": 55.5}]
    assert outcomes == [True, False, True]
    assert await server.progress(99) is False  # no call running any more


async def test_no_progress_without_a_token(wire):
    outcomes = []

    async def tool(args):
        outcomes.append(await wire.server.progress(1))
        return True

    wire.server.add_tool("t", "d", None, tool)
    await wire.feed(call("t", id=5, meta={"other": 1}))
    await wire.response(5)
    assert outcomes == [False]
    assert [m for m in wire.sent if "method" in m] == []


async def test_progress_requested_tells_a_callback_whether_its_call_has_a_token(wire):
    server = wire.server
    asked = []
    server.add_tool("t", "d", None, lambda args: asked.append(server.progress_requested()))
    assert server.progress_requested() is False  # no call running
    await wire.feed(call("t", id=1, meta={"progressToken": "p-1"}))
    await wire.response(1)
    await wire.feed(call("t", id=2, meta={"progressToken": 0}))  # a falsy token is a token
    await wire.response(2)
    await wire.feed(call("t", id=3))
    await wire.response(3)
    await wire.feed(call("t", id=4, meta={"progressToken": None}))  # not a valid token
    await wire.response(4)
    assert asked == [True, True, False, False]
    assert server.progress_requested() is False  # the calls are over


async def test_progress_token_keeps_its_integer_type(wire):
    async def tool(args):
        await wire.server.progress(1)
        return True

    wire.server.add_tool("t", "d", None, tool)
    await wire.feed(call("t", id=5, meta={"progressToken": 42}))
    await wire.response(5)
    assert wire.sent[0]["params"]["progressToken"] == 42


async def test_log_messages_and_set_level(wire):
    await wire.initialize()
    await wire.server.log("info", {"free_heap": 81234}, logger="device")
    assert wire.sent[-1] == {"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": {"free_heap": 81234}, "logger": "device"}}
    assert (await wire.request("logging/setLevel", {"level": "error"}, id=4))["result"] == {}
    count = len(wire.sent)
    await wire.server.log("warning", "dropped")
    assert len(wire.sent) == count
    await wire.server.log("critical", "kept")
    assert wire.sent[-1]["params"] == {"level": "critical", "data": "kept"}
    assert error_of(await wire.request("logging/setLevel", {"level": "loud"}, id=5))[0] == -32602
    with pytest.raises(ValueError):
        await wire.server.log("loud", "x")


async def test_notify_sends_any_notification(wire):
    await wire.server.notify("notifications/state_changed", {"newState": "idle", "oldState": "connecting"})
    assert wire.sent == [{"jsonrpc": "2.0", "method": "notifications/state_changed",
                          "params": {"newState": "idle", "oldState": "connecting"}}]


async def test_list_changed_only_after_initialize_and_once_per_burst(wire):
    server = wire.server
    server.add_tool("before", "d", None, bool)
    await asyncio.sleep(0)
    assert wire.sent == []
    await wire.initialize()
    for name in ("a", "b", "c"):
        server.add_tool(name, "d", None, bool)
    server.remove_tool("before")
    changed = await wire.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
    assert "params" not in changed
    await wire.request("ping", id=99)
    assert sum(1 for m in wire.sent if m.get("method") == "notifications/tools/list_changed") == 1
    after_burst = len(wire.sent)
    server.remove_tool("a")
    await wire.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed", after_burst)
    assert sum(1 for m in wire.sent if m.get("method") == "notifications/tools/list_changed") == 2
    names = [t["name"] for t in (await wire.request("tools/list", id=100))["result"]["tools"]]
    assert names == ["b", "c"]


async def test_initialize_without_capabilities_object_still_works(wire):
    response = await wire.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": "none"})
    assert response["result"]["protocolVersion"] == "2025-03-26"
