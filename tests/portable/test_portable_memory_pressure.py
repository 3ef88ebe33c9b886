# Memory pressure on the message path, forced at chosen points (portable_support.Fault: under
# MicroPython the heap is locked around the real call, so a real allocation fails inside it;
# under CPython the call raises MemoryError). Each failure costs that one message: a request
# is answered with its id (-32700 or -32603), nothing escapes, and a ping and a tools/call on
# the same session work after it. Also the ids that come back exactly as sent. Runs under
# pytest and inside MicroPython (the WebAssembly build and the unix port).
import asyncio
import json

import umcp.jsonin
import umcp.result
import umcp.server
from portable_support import Fault
from umcp import STRING, McpServer, Property, PropertyList
from umcp.compat import add_log_sink, get_logger, join_pieces, lines_lost, remove_log_sink
from umcpfw.commontools import LogRing


class Client:
    """A session of a fresh server, as a transport feeds it: raw text in, frames out. The
    sender fails for want of heap `send_failures` times first, as a transport may."""

    def __init__(self):
        self.server = McpServer("pressure", "1")
        self.server.add_tool("echo", "Echo the text", PropertyList([Property("text", STRING)]),
                             lambda args: "echo: " + args["text"])
        self.server.add_tool("shout", "Log, then answer", None, self._shout)
        self.frames = []
        self.send_failures = 0
        self.session = self.server.session(self._send)

    async def _shout(self, args):
        await self.server.log("info", "shouting")
        return "done"

    async def _send(self, pieces):
        if self.send_failures:
            self.send_failures -= 1
            raise MemoryError("the transport found no heap")
        self.frames.append(join_pieces(pieces))

    async def feed(self, text):
        """The messages the server sent for `text` (a tool call's answer included)."""
        before = len(self.frames)
        await self.session.receive(text)
        for _ in range(10):  # a tools/call answers from a task of its own
            await asyncio.sleep(0)
        return [json.loads(frame) for frame in self.frames[before:]]

    async def request(self, request_id, method, params=None):
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return await self.feed(json.dumps(message))

    async def still_serves(self):
        """A ping and a tools/call on the same session, both answered."""
        pong = await self.request("after-ping", "ping")
        assert pong == [{"jsonrpc": "2.0", "id": "after-ping", "result": {}}], pong
        called = await self.request("after-call", "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert len(called) == 1 and called[0]["id"] == "after-call", called
        assert called[0]["result"]["content"][0]["text"] == "echo: hi", called


def short_of_memory(answer, request_id):
    return answer["id"] == request_id and answer["error"] == {"code": -32603, "message": "out of memory"}


async def test_no_heap_to_decode_a_message_answers_its_id():
    client = Client()
    fault = Fault(umcp.jsonin, "_decode")
    try:
        sent = await client.request("decode-1", "ping")
    finally:
        fault.undo()
    assert fault.fired == 1
    assert len(sent) == 1 and sent[0]["id"] == "decode-1" and sent[0]["error"]["code"] == -32700, sent
    assert "too large for memory" in sent[0]["error"]["message"]
    await client.still_serves()


async def test_no_heap_to_build_an_answer_answers_in_short():
    client = Client()
    fault = Fault(umcp.server, "result_frame")
    try:
        sent = await client.request("reply-1", "ping")
    finally:
        fault.undo()
    assert fault.fired == 1 and len(sent) == 1 and short_of_memory(sent[0], "reply-1"), sent
    assert client.server.out_of_memory == 1
    await client.still_serves()


async def test_no_heap_for_a_tool_result_answers_in_short():
    client = Client()
    fault = Fault(umcp.server, "result_pieces")
    try:
        sent = await client.request(7, "tools/call", {"name": "echo", "arguments": {"text": "x" * 300}})
    finally:
        fault.undo()
    assert fault.fired == 1 and len(sent) == 1 and short_of_memory(sent[0], 7), sent
    await client.still_serves()


STATUS = {"board": "generic", "parts": {"lamp": {"power": True, "label": 'a "desk" lamp\\'},
                                      "room": {"temperature_c": 21.5, "humidity": None},
                                      "\u5ba2\u5385": {"lines": ["caf\xe9", "\U0001F600", "a\nb"], "empty": {}}},
          "history": [[1, 2.5], [], [{"x": False}]], "note": "x" * 300}


async def test_no_block_for_a_results_text_sends_it_in_pieces():
    # A long-running heap may have no block as long as a result's JSON text but room in
    # small holes: the same text goes out in pieces (umcp.chunks), in both result forms.
    client = Client()
    client.server.add_tool("status", "The status", None, lambda args: STATUS)
    client.server.add_tool("typed", "Typed", None, lambda args: STATUS, output_schema={"type": "object"})
    client.server.add_tool("text", "Text", None, lambda args: "\"quoted\" \u5ba2 " + "y" * 400)
    await client.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    for name, structured in (("status", False), ("typed", True), ("text", False)):
        fault = Fault(umcp.result, "dumps", when=lambda args: len(args[0]) > 100)
        try:
            sent = await client.request(name, "tools/call", {"name": name, "arguments": {}})
        finally:
            fault.undo()
        assert fault.fired == 1 and len(sent) == 1 and sent[0]["id"] == name, sent
        result = sent[0]["result"]
        text = result["content"][0]["text"]
        if name == "text":
            assert text == "\"quoted\" \u5ba2 " + "y" * 400
        else:
            assert json.loads(text) == STATUS
        assert result.get("structuredContent") == (STATUS if structured else None)
        assert result["isError"] is False
    await client.still_serves()


async def test_a_transport_without_heap_to_send_gets_the_short_answer():
    client = Client()
    client.send_failures = 1
    sent = await client.request("send-1", "tools/list")
    assert len(sent) == 1 and short_of_memory(sent[0], "send-1"), sent
    await client.still_serves()


async def test_no_heap_for_a_notification_drops_it_alone():
    client = Client()
    await client.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    import umcp.notices  # notifications are built there (loaded by the first one)

    fault = Fault(umcp.notices, "dumps", when=lambda args: isinstance(args[0], dict))
    try:
        sent = await client.request("shout-1", "tools/call", {"name": "shout", "arguments": {}})
    finally:
        fault.undo()
    assert fault.fired == 1 and client.server.notices_lost == 1
    # The log message went missing; the call's answer did not.
    assert [message.get("id") for message in sent] == ["shout-1"], sent
    assert sent[0]["result"]["content"][0]["text"] == "done"
    await client.still_serves()
    sent = await client.request("shout-2", "tools/call", {"name": "shout", "arguments": {}})
    assert [message.get("method") for message in sent] == ["notifications/message", None]


async def test_no_heap_in_the_log_ring_loses_that_line_only():
    ring = LogRing(lines=4, line_chars=60)
    add_log_sink(ring.add)
    log = get_logger("pressure")
    fault = Fault(ring, "_write")
    try:
        log.warning("this line finds no heap")
        log.warning("this one does")
    finally:
        fault.undo()
        remove_log_sink(ring.add)
    assert fault.fired == 1
    lines = ring.lines()
    assert lines[-2] == "(a log line was lost: out of memory)" and lines[-1].endswith("this one does"), lines
    await Client().still_serves()


async def test_a_log_sink_that_raises_costs_its_line_not_the_caller():
    def broken(level, logger, message):
        raise MemoryError("no heap in the sink")

    add_log_sink(broken)
    lost = lines_lost[0]
    try:
        get_logger("pressure").error("the caller carries on")
    finally:
        remove_log_sink(broken)
    assert lines_lost[0] == lost + 1
    await Client().still_serves()


async def test_a_long_id_with_a_lone_surrogate_comes_back_as_sent_on_a_short_heap():
    # Its echo reads the id's text out of the message: decoding that again (four copies of
    # a long id) failed for want of one piece of heap on a fragmented board, and the reply
    # went out with U+FFFD in it, an id the client never sent.
    client = Client()
    long_id = "x" * 2000 + "\\udc00"
    before = len(client.frames)
    fault = Fault(umcp.jsonin, "_decode", skip=1)  # the request's own decoding succeeds
    try:
        await client.session.receive('{"jsonrpc":"2.0","method":"ping","id":"%s"}' % long_id)
    finally:
        fault.undo()
    assert len(client.frames) == before + 1
    text = client.frames[before]
    assert ('"id":"%s"' % long_id) in text and '"result":{}' in text, text[-80:]
    await client.still_serves()


async def test_ids_come_back_exactly_as_sent():
    client = Client()
    before = len(client.frames)
    # A lone surrogate escape (valid JSON): echoed as written, never as U+FFFD.
    await client.session.receive('{"jsonrpc":"2.0","id":"id-1909-\\ud800lone","method":"ping"}')
    text = client.frames[before]
    assert '"id":"id-1909-\\ud800lone"' in text, text
    # An escaped surrogate pair is one character, whichever way it is written back.
    sent = await client.feed('{"jsonrpc":"2.0","id":"e-\\ud83d\\ude00","method":"ping"}')
    assert sent[0]["id"] == "e-\U0001F600", sent
    # Refused for depth: answered with the id its top level shows.
    deep = '{"jsonrpc":"2.0","id":"deep-1","method":"ping","params":{"x":%s}}' % ("[" * 40 + "]" * 40)
    sent = await client.feed(deep)
    assert len(sent) == 1 and sent[0]["id"] == "deep-1" and sent[0]["error"]["code"] == -32700, sent
    # Not JSON, cut short or invalid, or a response: a null id, whatever id the text shows.
    for text in ('{"jsonrpc":"2.0","id":41,"method":"pi', '{"jsonrpc":"2.0","id":4',
                 '{"jsonrpc":"2.0","id":42,"method":"ping","params":{"v":NaN}}',
                 '{"params":{"id":1},"id":"top","x":',
                 '{"jsonrpc":"2.0","id":43,"result":{"x":%s}}' % ("[" * 40 + "]" * 40)):
        sent = await client.feed(text)
        assert len(sent) == 1 and sent[0]["id"] is None and sent[0]["error"]["code"] == -32700, (text, sent)
    await client.still_serves()
