"""MCP over Streamable HTTP, served by the board itself (unet.httpd): clients on the LAN
reach the application's McpServer at http://<board>/mcp, beside the xiaozhi link.

Both revision families, each in a module of its own loaded at its first request (a
client speaks one) and forgotten with this one: 2026-07-28 (mcplink.httpmodern: every
POST stands alone) and 2024-11-05 .. 2025-11-25 (mcplink.httpsession: `initialize` opens
a session, a GET its stream, DELETE ends it). An answer is application/json, or
text/event-stream once a notification for the request comes before the result. Closing
a 2026-07-28 request's connection cancels its call; a legacy call goes on.

Every request needs `Authorization: Bearer <token>` (else 401) unless config.json says
"auth": "none"; a request's Origin, and without a token its Host, must be the board's
own (else 403), so that a web page cannot reach it through DNS rebinding (the rules:
docs/device.md, "MCP over HTTP on the board"). Tools are listed by their portable names.
"""

import asyncio

from umcp.compat import await_then_drop, const, forget_modules, get_logger
from umcp.jsonin import loads
from umcp.rpc import INTERNAL_ERROR, error_frame
from umcp.server import MODERN_VERSION
from unet.httpd import HttpServer

from .httpexchange import JSON, META_VERSION, SSE, Exchange

# The headers the endpoint reads (others are skipped unread).
_HEADERS = ("authorization", "origin", "host", "accept", "content-type", "mcp-protocol-version",
            "mcp-session-id", "mcp-method", "mcp-name")
# Loop turns a request waits for its answer before it watches for the client hanging up
# (a task of its own each): a quick tool's call task answers within them.
_QUICK_TURNS = const(3)

_log = get_logger("mcp-http")


def _same_secret(given, expected):
    """Compare in constant time (for the length): `Authorization` against `Bearer <token>`,
    the scheme's case aside."""
    try:
        given, expected = memoryview(given), memoryview(expected)  # MicroPython: the strs' own bytes
    except TypeError:
        given, expected = given.encode(), expected.encode()
    if len(given) != len(expected):
        return False
    difference = 0
    for i in range(len(given)):
        a, b = given[i], expected[i]
        if i < 6 and 65 <= a <= 90:  # "Bearer" in any case
            a += 32
        if i < 6 and 65 <= b <= 90:
            b += 32
        difference |= a ^ b
    return difference == 0


class McpHttp:
    """The endpoint as a service of the application (async run(), async stop()).

    token: the Bearer token clients must send (None: none, and every Host is checked);
    port, bind: where to listen; path: the endpoint; max_message: the largest request body (the WebSocket link's limit);
    max_requests: requests answered at once, 503 beyond; max_sessions: legacy sessions
    kept (each may hold a GET stream open besides); hostname: the board's mDNS name (without .local);
    address(): the board's current IP address (or None); origins: Origins allowed besides
    the board's own."""

    def __init__(self, server, token, port=80, bind="0.0.0.0", path="/mcp", max_message=16384,
                 max_requests=4, max_sessions=4, hostname=None, address=None, origins=()):
        if token is not None and (not isinstance(token, str) or not token):
            raise ValueError("the MCP endpoint needs a token, or None")
        self.server = server
        self.bearer = None if token is None else "Bearer " + token  # what Authorization must say
        self.port = port
        self.bind = bind
        self.path = path
        self.max_message = max_message
        self.max_sessions = max_sessions
        self.hostname = hostname
        self.address = address
        self.origins = tuple(origins)
        self.sessions = []  # legacy sessions (httpsession.HttpSession), least recently used first
        # Connections: the requests, a stream per session, and two to spare for idle ones.
        self.httpd = HttpServer(self.handle, _HEADERS, max_message, max_requests,
                                max_requests + max_sessions + 2)

    async def run(self):
        """Listen and serve until stop() (the firmware listens with umcpfw.mcphttp, which
        makes this object at the first connection and hands it each: httpd.serve)."""
        _log.info("MCP endpoint on port %d%s", self.port, self.path)
        await self.httpd.run(self.bind, self.port)

    async def stop(self):
        for session in self.sessions:
            session.close()
        self.sessions = []
        await self.httpd.stop()
        # The modules this one loads as needed leave with it (umcpfw.mcphttp forgets this
        # one): the next start loads them again at their first use.
        forget_modules("mcplink.httpmodern", "mcplink.httpsession", "mcplink.httperrors")

    # -- who may ask

    def _own_host(self, host):
        name = host
        if host.startswith("["):
            name = host[:host.find("]") + 1]
        elif ":" in host:
            name = host[:host.find(":")]
        name = name.lower()
        if name in ("localhost", "127.0.0.1", "[::1]"):
            return True
        hostname = self.hostname
        if hostname and (name == hostname or name == hostname + ".local"):
            return True
        return self.address is not None and name == self.address()

    def _refusal(self, request):
        """(refusal, args) when the request may not be served (see _refuse), else None."""
        headers = request.headers
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            host = headers.get("host")
            if host is None or origin != "http://" + host or not self._own_host(host):
                return 1, origin[:80]  # origin
        if self.bearer is None:
            host = headers.get("host")
            if host is None or not self._own_host(host):
                return 22, (host or "")[:80]  # host
        elif not _same_secret(headers.get("authorization") or "", self.bearer):
            return 2, None  # token
        return None

    async def refuse(self, response, refusal, args=None, request_id="null"):
        """Answer the refusal numbered `refusal` (mcplink.httperrors: loaded at the first)."""
        from .httperrors import refuse

        await refuse(response, refusal, args, request_id)

    # -- requests

    def handle(self, request, response):
        """unet.httpd's handler: the awaitable that answers the request (a plain function,
        so that a request costs no frame of its own for choosing)."""
        if request.path != self.path:
            return self.refuse(response, 0, self.path)  # path
        refusal = self._refusal(request)
        if refusal is not None:
            return self.refuse(response, refusal[0], refusal[1])
        if request.method == "POST":
            return self._post(request, response, request.headers)
        if request.method == "GET":
            from .httpsession import stream

            return stream(self, request, response)
        if request.method == "DELETE":
            from .httpsession import end

            return end(self, request, response)
        return self.refuse(response, 3)  # method

    def _post(self, request, response, headers):
        """The awaitable that answers a POST (a plain function: no frame of its own)."""
        accept = headers.get("accept") or "*/*"
        if "application/json" not in accept and "*/*" not in accept:
            return self.refuse(response, 4)  # accept
        streams = "text/event-stream" in accept or "*/*" in accept
        kind = headers.get("content-type") or ""
        if not kind.startswith("application/json") and kind.split(";")[0].strip().lower() != "application/json":
            return self.refuse(response, 5)  # media
        body, request.body = request.body, None
        try:
            message = loads(body or b"")
        except ValueError as e:
            return self.refuse(response, 6, str(e))  # parse
        except MemoryError:  # the heap could not hold it parsed: this request only
            body = None
            # Answered here, not by mcplink.httperrors: no heap to load it with now.
            return response.send(503, JSON, error_frame("null", INTERNAL_ERROR,
                                                         "Out of memory: the request was not read"))
        body = None  # the text's memory goes before the call runs
        if not isinstance(message, dict):
            return self.refuse(response, 8)  # notone
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if headers.get("mcp-protocol-version") == MODERN_VERSION or (
                isinstance(meta, dict) and META_VERSION in meta):
            from .httpmodern import handle

            return handle(self, request, response, message, params, meta, streams)
        from .httpsession import handle

        return handle(self, request, response, message, streams)

    async def answer(self, exchange, message, session=None):
        """Serve one request on its exchange; wait for the answer (a tool call's comes
        later), or for the client to hang up."""
        state = None if session is None else session.state
        if state is not None:
            # The client's state as of now; what initialize and logging/setLevel change
            # is carried back (subscriptions: the same list).
            protocol, level = state.protocol, state.min_log_level
            exchange.session.protocol = protocol
            exchange.session.min_log_level = level
            exchange.session.subscriptions = state.subscriptions
            session.exchanges.append(exchange)
        exchange.request_id = message.get("id")
        try:
            await self.server.handle(message, exchange.session)
            message = None
            if state is not None:
                # Only what this request changed: another of the client's requests may
                # have changed the rest while this one's answer was written.
                if exchange.session.protocol != protocol:
                    state.protocol = exchange.session.protocol
                if exchange.session.min_log_level != level:
                    state.min_log_level = exchange.session.min_log_level
                state.subscriptions = exchange.session.subscriptions
            for _ in range(_QUICK_TURNS):  # a quick tool answers in these: no watcher task for it
                if exchange.answered:
                    break
                await asyncio.sleep(0)
            if not exchange.answered:
                watcher = asyncio.create_task(await_then_drop(_watch(exchange)))
                try:
                    await exchange.answer_out()
                finally:
                    watcher.cancel()
                    await asyncio.sleep(0)  # its read ends before the connection reads again
            response = exchange.response
            if not response.sent and not response.gone:
                # Cancelled, or its session ended: no answer comes. An event stream that ends
                # without one is what a client expects of a request answered no more.
                await response.start(200, SSE)
        finally:
            if session is not None and exchange in session.exchanges:
                session.exchanges.remove(exchange)


async def _watch(exchange):
    """Until the client of a request still waiting for its answer hangs up. (Its task
    runs it through await_then_drop: the ended task keeps nothing of the exchange.)"""
    await exchange.response.until_gone()
    if exchange.modern is not None:
        exchange.session.close()  # 2026-07-28: closing the stream cancels the request
    exchange.finish()
