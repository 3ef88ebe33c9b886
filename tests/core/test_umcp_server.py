"""McpServer cases that only CPython can run: what the server logs (caplog), payloads
MicroPython cannot hold or make (a lone surrogate in an id, an object() as a message or a
server name, which its json.dumps would write as a repr), a result JSON cannot carry. The
rest of McpServer's cases (lifecycle, JSON-RPC rules, tools/call, concurrency,
cancellation, notifications) are portable, in tests/portable/test_portable_umcp_server.py,
and run on every runtime.

Every message the server emits goes through McpWire (tests/support/mcpwire.py), which
validates it against the official MCP SDK's types for the negotiated version.
"""

import json
import logging

import pytest

from umcp.compat import join_pieces

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(10)]

def error_of(message):
    return message["error"]["code"], message["error"]["message"]


# -- lifecycle ----------------------------------------------------------------

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

_DEEP = "[" * 40 + "]" * 40


@pytest.mark.parametrize("payload, echoed", [
    ('{"id":7,"jsonrpc":"2.0","method":"ping","params":' + _DEEP + "}", 7),  # too deep
    ('{"params":{"id":3},"id":"top","method":"ping","more":' + _DEEP + "}", "top"),  # the top-level id
    ('{"jsonrpc":"2.0","id":"a-\\ud800","method":"ping","params":' + _DEEP + "}", "a-\ud800"),
])
async def test_well_formed_requests_refused_for_depth_are_answered_with_their_id(wire, payload, echoed):
    sent = await wire.feed(payload)
    assert len(sent) == 1 and error_of(sent[0])[0] == -32700 and sent[0]["id"] == echoed
    assert "nesting deeper than" in error_of(sent[0])[1]
    assert (await wire.request("ping", id="after"))["result"] == {}


@pytest.mark.parametrize("payload", [
    b'{"jsonrpc": "2.0", "id": 1,',  # cut short after the id
    '{"jsonrpc":"2.0","id":41,"method":',
    '{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":NaN}}',  # NaN is no JSON
    '{"jsonrpc":"2.0","id":7,"method":"ping"} trailing',
    '{"jsonrpc":"2.0","id":7,"method":"ping"',
    '{"jsonrpc":"2.0","id":41,"result":',  # a response cut short: never answered with its id
    '{"jsonrpc":"2.0","id":9,"result":' + _DEEP + "}",  # a response too deep: no method
])
async def test_text_that_is_not_json_is_answered_with_a_null_id(wire, payload):
    # JSON-RPC 2.0: "If there was an error in detecting the id in the Request object (e.g.
    # Parse error/Invalid Request), it MUST be Null." An id read out of broken text may be
    # anything, or a response's.
    sent = await wire.feed(payload)
    assert len(sent) == 1 and error_of(sent[0])[0] == -32700 and sent[0]["id"] is None, sent
    assert (await wire.request("ping", id="after"))["result"] == {}


@pytest.mark.parametrize("payload", ["[]", "42", '"text"', "null", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
                                     None, 42, object()])
async def test_non_objects_get_32600_with_null_id(wire, payload):
    sent = await wire.feed(payload)
    assert len(sent) == 1 and error_of(sent[0])[0] == -32600 and sent[0]["id"] is None


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


# -- tools/call -----------------------------------------------------------------

async def test_a_result_json_cannot_carry_is_an_error_result(wire):
    # CPython only: MicroPython's json.dumps writes such an object's repr ("<object>") and
    # the board answers it as a text with isError false (the portable cases leave it out).
    wire.server.add_tool("odd", "d", None, lambda args: object())
    assert (await wire.request("tools/call", {"name": "odd"}, id=3))["result"]["isError"] is True
    assert (await wire.request("ping", id=4))["result"] == {}
