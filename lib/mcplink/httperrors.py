"""The board's HTTP endpoint's refusals as data (mcplink.http and its family modules name
one by its number), and its answer to a revision it does not speak: their texts take no
heap until a request is refused, since this module is loaded at the first refusal and
forgotten with the rest of the endpoint's code."""

from umcp.compat import const
from umcp.rpc import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, error_frame

_HEADER_MISMATCH = const(-32020)
_JSON = (("Content-Type", "application/json"),)
_AUTHENTICATE = (("Content-Type", "application/json"), ("WWW-Authenticate", 'Bearer realm="umcp"'))

# Each refusal by its number (the callers name it in a comment): (HTTP status, the
# JSON-RPC error code, the message, formatted with the args given). The code None: a
# plain text page; "allow": no body, the text is the Allow header. Numbers, not names:
# a name would be interned for good.
_PAGES = (
    (404, None, "Not Found: the MCP endpoint is %s"),  # 0 path
    (403, INVALID_REQUEST, "Forbidden: Origin %s is not allowed"),  # 1 origin
    (401, INVALID_REQUEST, "Unauthorized: Authorization: Bearer <token> required"),  # 2 token
    (405, "allow", "GET, POST, DELETE"),  # 3 method
    (406, INVALID_REQUEST, "Not Acceptable: Accept must list application/json and text/event-stream"),  # 4 accept
    (415, INVALID_REQUEST, "Unsupported Media Type: send application/json"),  # 5 media
    (400, PARSE_ERROR, "Parse error: %s"),  # 6 parse
    None,  # 7: out of memory, answered by mcplink.http itself (no heap to load this with)
    (400, INVALID_REQUEST, "the body must be one JSON-RPC message"),  # 8 notone
    # 2026-07-28 (mcplink.httpmodern)
    (400, INVALID_REQUEST, "a client sends no responses in %s"),  # 9 response
    (400, INVALID_PARAMS, "Invalid params: _meta must carry %s and %s"),  # 10 meta
    (400, _HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version header missing"),  # 11 noversion
    (400, _HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version %s, _meta says %s"),  # 12 version
    (400, _HEADER_MISMATCH, "Header mismatch: Mcp-Method header %s does not match the method"),  # 13 mmethod
    (400, _HEADER_MISMATCH, "Header mismatch: Mcp-Name header %s does not match params.%s"),  # 14 mname
    # legacy sessions (mcplink.httpsession)
    (400, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header required (initialize first)"),  # 15 initfirst
    (400, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header required"),  # 16 noid
    (404, INVALID_REQUEST, "Session not found: initialize again"),  # 17 unknown
    (404, INVALID_REQUEST, "Session not found"),  # 18 deleted
    (405, "allow", "POST, DELETE"),  # 19 nostream: a GET without a session
    (406, INVALID_REQUEST, "Not Acceptable: Accept must list text/event-stream"),  # 20 sseaccept
    (409, INVALID_REQUEST, "Conflict: this session's stream is open already"),  # 21 conflict
    # without a token ("auth": "none")
    (403, INVALID_REQUEST, "Forbidden: Host %s is not one of the board's names"),  # 22 host
)


async def refuse(response, refusal, args=None, request_id="null"):
    """Answer on `response` the refusal numbered `refusal` (_PAGES), its message formatted
    with `args` (a str or a tuple), to the request whose id is `request_id` (JSON)."""
    status, code, text = _PAGES[refusal]
    if code == "allow":
        await response.send(status, (("Allow", text),))
        return
    if args is not None:
        text = text % args
    if code is None:
        await response.send(status, (("Content-Type", "text/plain"),), text)
    else:
        await response.send(status, _AUTHENTICATE if status == 401 else _JSON, error_frame(request_id, code, text))


async def unsupported(response, version, id_json):
    """Answer on `response` a request of a revision the board does not speak (`version`,
    the MCP-Protocol-Version header's), whose id is `id_json` (JSON): -32022, 400."""
    from umcp.modern import unsupported_version_frame  # (umcp loads it for its own too)

    await response.send(400, _JSON, unsupported_version_frame(id_json, version))
