"""One request's answer at the board's HTTP endpoint (mcplink.http), and the wire's pieces
the endpoint and the modules it loads for a revision family (mcplink.httpmodern,
mcplink.httpsession) share: here, below all three, so that none of those imports the
module that loads it. Loaded with mcplink.http and forgotten with it."""

import asyncio

from umcp.compat import const
from umcp.rpc import error_code, is_response
from umcp.server import Session

META_VERSION = "io.modelcontextprotocol/protocolVersion"
JSON = (("Content-Type", "application/json"),)
SSE = (("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
       ("X-Accel-Buffering", "no"))
EVENT_OPEN = "event: message\r\ndata: "
EVENT_END = "\r\n\r\n"
# An answer's body is no frame: it goes out entry by entry after its length (umcp.paging,
# unet.httpd), never whole on the heap, so one page holds every tool. Home Assistant (its
# coordinator's one list_tools()) never asks for a next page; max_payload is the frames'.
_ONE_PAGE = const(0x3FFFFFFF)


class _Session(Session):
    # (Class attributes: no heap per request.)
    portable = True  # tool names every client accepts
    waits = True  # the request's task waits for its answer: a tool call may run in it


class Exchange:
    """One request's answer: a Session of its own (not among the server's clients, so it
    hears only what belongs to its request), whose messages go out on this POST.
    `modern`: a 2026-07-28 request's status(code) of an error answer (httpmodern.status),
    None for a legacy one (always 200)."""

    # Class defaults: an instance keeps only what differs (each attribute is heap for every
    # request).
    headers = None  # extra headers of a successful answer (Mcp-Session-Id)
    answered = False
    _done = None  # an Event, made only when the handler has to wait (a tool call)
    request_id = None

    def __init__(self, endpoint, response, streams, modern, headers=None):
        self.response = response
        self.streams = streams  # the client takes text/event-stream
        self.modern = modern
        if headers is not None:
            self.headers = headers
        # (positional: keyword arguments would cost a dict per request)
        self.session = _Session(endpoint.server, self.send, 0, _ONE_PAGE, endpoint.max_message)

    async def answer_out(self):
        """Return once the answer is out (finish()): a handler waiting for a tool's call."""
        if not self.answered:
            self._done = asyncio.Event()
            await self._done.wait()

    def finish(self):
        self.answered = True
        if self._done is not None:
            self._done.set()

    def send(self, pieces):
        """The session's send(): a message for this request's client. A response written at
        once (Response.send_now: a small one on MicroPython) needs no coroutine; else the
        awaitable that writes it."""
        response = self.response
        if self.answered or response.gone:
            return None  # the client hung up: nobody to tell
        if not response.streaming and is_response(pieces):
            code = error_code(pieces)
            try:
                if not response.send_now(200 if self.modern is None else self.modern(code),
                                         JSON if code is not None or not self.headers else JSON + self.headers,
                                         pieces):
                    return self._send(pieces)
            except OSError:
                pass  # gone: the handler returns
            self.finish()
            return None
        return self._send(pieces)

    async def _send(self, pieces):
        response = self.response
        try:
            if is_response(pieces):
                code = error_code(pieces)
                if response.streaming:
                    await response.write([EVENT_OPEN] + list(pieces) + [EVENT_END])
                else:
                    status = 200 if self.modern is None else self.modern(code)
                    await response.send(status, JSON if code is not None or not self.headers
                                        else JSON + self.headers, pieces)
                self.finish()
            elif self.streams:  # a notification for this request: the answer becomes a stream
                if not response.streaming:
                    await response.start(200, SSE + (self.headers or ()))
                await response.write([EVENT_OPEN] + list(pieces) + [EVENT_END])
        except OSError:
            self.finish()  # gone: the handler returns
