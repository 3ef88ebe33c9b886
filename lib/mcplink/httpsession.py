"""The legacy revisions' sessions (2024-11-05 .. 2025-11-25) at the board's HTTP endpoint
(mcplink.http): `initialize` opens a session (Mcp-Session-Id, at most max_sessions: the
least recently used one ends when another begins); later requests carry its id (none:
400, unknown or ended: 404); DELETE ends it; a GET opens its one stream of what no
request asked for (tools/list_changed, resources/updated, logs outside a call).
notifications/cancelled reaches the call it names.

mcplink.http loads this module at the first request of that family (or a GET or DELETE)
and forgets it with the rest of the endpoint's code: a 2026-07-28 client never loads it."""

import binascii
import os

from umcp.compat import get_logger
from umcp.server import SUPPORTED_VERSIONS

from .httpexchange import EVENT_END, EVENT_OPEN, SSE, Exchange

_KEEPALIVE = b":\r\n\r\n"  # an SSE comment: quiet streams stay open through idle timeouts

_log = get_logger("mcp-http")


class HttpSession:
    """A legacy client: its id, its state (a Session among the server's clients, which
    hears the notifications no request asked for), its GET stream and calls in flight."""

    def __init__(self, endpoint, session_id):
        self.id = session_id
        self.state = endpoint.server.session(self._to_stream, max_message=endpoint.max_message)
        self.state.portable = True
        self.stream = None  # the Response of its GET stream
        self.exchanges = []  # requests waiting for their answer

    async def _to_stream(self, pieces):
        stream = self.stream
        if stream is None or stream.gone:
            return  # no stream open: the spec lets these go
        try:
            await stream.write([EVENT_OPEN] + list(pieces) + [EVENT_END])
        except OSError:
            pass

    def close(self):
        self.state.close()
        for exchange in self.exchanges:
            exchange.session.cancel_calls()
            exchange.finish()
        if self.stream is not None:
            self.stream.gone = True  # its handler sees the session end
            self.stream.hang_up()


async def _session(endpoint, request, response, missing, unknown):
    """The session the request names (the most recently used from now on), or None once the
    request is refused: with the refusal numbered `missing` when it names none, `unknown`
    when the one it names is unknown or ended."""
    wanted = request.headers.get("mcp-session-id")
    if wanted is not None:
        sessions = endpoint.sessions
        for session in sessions:
            if session.id == wanted:
                sessions.remove(session)
                sessions.append(session)  # most recently used last
                return session
    await endpoint.refuse(response, missing if wanted is None else unknown)
    return None


def _keep(endpoint, session):
    sessions = endpoint.sessions
    sessions.append(session)
    while len(sessions) > endpoint.max_sessions:
        oldest = sessions.pop(0)
        _log.info("session %s ended: %d sessions at most", oldest.id[:8], endpoint.max_sessions)
        oldest.close()


async def handle(endpoint, request, response, message, streams):
    """Serve one POST of the legacy revisions on McpHttp `endpoint`."""
    version = request.headers.get("mcp-protocol-version")
    if version is not None and version not in SUPPORTED_VERSIONS:
        from .httperrors import unsupported

        await unsupported(response, version, "null")
        return
    method = message.get("method")
    if method == "initialize" and "id" in message:
        # 128 random bits, hex (visible ASCII, as the revision asks)
        session = HttpSession(endpoint, str(binascii.hexlify(os.urandom(16)), "ascii"))
        _keep(endpoint, session)  # before the answer: the client's next request may come at once
        exchange = Exchange(endpoint, response, streams, None, (("Mcp-Session-Id", session.id),))
        await endpoint.answer(exchange, message, session)
        if session.state.protocol is None and session in endpoint.sessions:  # refused: no session
            endpoint.sessions.remove(session)
            session.close()
        return
    session = await _session(endpoint, request, response, 15, 17)  # initfirst, unknown
    if session is None:
        return
    if method is None or "id" not in message:  # a notification, or a response to us
        if method == "notifications/cancelled":
            params = message.get("params")
            wanted = params.get("requestId") if isinstance(params, dict) else None
            for exchange in session.exchanges:
                if exchange.request_id == wanted and type(exchange.request_id) is type(wanted):
                    await exchange.session.handle(message)
                    exchange.finish()  # no answer will come: its POST ends (McpHttp.answer)
        await response.send(202)
        return
    await endpoint.answer(Exchange(endpoint, response, streams, None), message, session)


async def stream(endpoint, request, response):
    """GET: a legacy session's stream of what no request asked for."""
    session = await _session(endpoint, request, response, 19, 17)  # nostream, unknown
    if session is None:
        return
    if "text/event-stream" not in (request.headers.get("accept") or ""):
        await endpoint.refuse(response, 20)  # sseaccept
        return
    if session.stream is not None and not session.stream.gone:
        await endpoint.refuse(response, 21)  # conflict
        return
    await response.start(200, SSE)
    response.keepalive = _KEEPALIVE
    session.stream = response
    request.headers = None  # read: they need no heap while the stream stays open
    try:
        await response.until_gone()
    finally:
        if session.stream is response:
            session.stream = None


async def end(endpoint, request, response):
    """DELETE: the session ends."""
    session = await _session(endpoint, request, response, 16, 18)  # noid, deleted
    if session is None:
        return
    endpoint.sessions.remove(session)
    session.close()
    await response.send(204)
