"""lib/mcplink/http.py's legacy sessions (2024-11-05 .. 2025-11-25) when a client's requests
overlap: each request works on a copy of its session's state and carries back what it
changed. Over in-memory streams, the board's HTTP server serving them (the sockets are
tested through the simulated board: tests/firmware/test_firmware_mcp_http.py). CPython:
a legacy initialize needs os.urandom, which the WebAssembly build of the portable cases
lacks."""

import asyncio
import json

import pytest

from mcplink.http import McpHttp
from test_portable_unet_httpd import Stream
from umcp import McpServer
from umcp.server import LOG_LEVELS

pytestmark = pytest.mark.timeout(30)

TOKEN = "sessions-token"


def post(message, session_id=None):
    body = json.dumps(message).encode()
    head = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", "Content-Length: %d" % len(body),
            "Authorization: Bearer " + TOKEN]
    if session_id is not None:
        head += ["Mcp-Session-Id: " + session_id, "MCP-Protocol-Version: 2025-06-18"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class SlowStream(Stream):
    """A connection whose client reads the answer only once `go` is set."""

    def __init__(self, incoming):
        super().__init__(incoming, chunk=64)
        self.writing = asyncio.Event()
        self.go = asyncio.Event()

    async def drain(self):
        if self.out:
            self.writing.set()
            await self.go.wait()


def test_a_request_answered_slowly_does_not_undo_what_another_changed_meanwhile():
    async def main():
        http = McpHttp(McpServer(name="sessions", version="1"), TOKEN, 0, "127.0.0.1")
        opening = Stream(post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}), chunk=64)
        await http.httpd.serve(opening, opening)
        ((status, headers, _),) = opening.responses()
        assert status == 200
        session_id = headers["mcp-session-id"]
        (session,) = http.sessions
        before = session.state.min_log_level
        # A ping whose answer the client is slow to read; meanwhile the same client sets
        # its log level on another connection.
        slow = SlowStream(post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, session_id))
        pinging = asyncio.create_task(http.httpd.serve(slow, slow))
        await asyncio.wait_for(slow.writing.wait(), 5)
        quick = Stream(post({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel",
                             "params": {"level": "error"}}, session_id), chunk=64)
        await http.httpd.serve(quick, quick)
        assert [status for status, _, _ in quick.responses()] == [200]
        assert session.state.min_log_level == LOG_LEVELS.index("error") != before
        slow.go.set()
        await asyncio.wait_for(pinging, 5)
        assert [status for status, _, _ in slow.responses()] == [200]
        await http.stop()
        return session.state.min_log_level

    # The ping's request, which copied the level before it changed, left it as it was set.
    assert asyncio.run(main()) == LOG_LEVELS.index("error")
