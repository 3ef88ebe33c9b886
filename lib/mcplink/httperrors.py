# The board's HTTP endpoint's refusals as data (mcplink.http and its family modules name
# one by a short key): their texts take no heap until a request is refused, since this
# module is loaded at the first refusal and forgotten with the rest of the endpoint's code.
from umcp.compat import const
from umcp.rpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, error_frame

_HEADER_MISMATCH = const(-32020)
_JSON = (("Content-Type", "application/json"),)
_AUTHENTICATE = (("Content-Type", "application/json"), ("WWW-Authenticate", 'Bearer realm="umcp"'))

# key: (HTTP status, the JSON-RPC error code, the message, formatted with the detail
# given). The code None: a plain text page; "allow": no body, the text is the Allow header.
_PAGES = {
    "path": (404, None, "Not Found: the MCP endpoint is %s"),
    "origin": (403, INVALID_REQUEST, "Forbidden: Origin %s is not allowed"),
    "token": (401, INVALID_REQUEST, "Unauthorized: Authorization: Bearer <token> required"),
    "method": (405, "allow", "GET, POST, DELETE"),
    "accept": (406, INVALID_REQUEST, "Not Acceptable: Accept must list application/json and text/event-stream"),
    "media": (415, INVALID_REQUEST, "Unsupported Media Type: send application/json"),
    "parse": (400, PARSE_ERROR, "Parse error: %s"),
    "memory": (503, INTERNAL_ERROR, "Out of memory: the request was not read"),
    "notone": (400, INVALID_REQUEST, "the body must be one JSON-RPC message"),
    # 2026-07-28 (mcplink.httpmodern)
    "response": (400, INVALID_REQUEST, "a client sends no responses in %s"),
    "meta": (400, INVALID_PARAMS, "Invalid params: _meta must carry %s and %s"),
    "noversion": (400, _HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version header missing"),
    "version": (400, _HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version %s, _meta says %s"),
    "mmethod": (400, _HEADER_MISMATCH, "Header mismatch: Mcp-Method header %s does not match the method"),
    "mname": (400, _HEADER_MISMATCH, "Header mismatch: Mcp-Name header %s does not match params.%s"),
    # legacy sessions (mcplink.httpsession)
    "initfirst": (400, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header required (initialize first)"),
    "noid": (400, INVALID_REQUEST, "Bad Request: Mcp-Session-Id header required"),
    "unknown": (404, INVALID_REQUEST, "Session not found: initialize again"),
    "deleted": (404, INVALID_REQUEST, "Session not found"),
    "nostream": (405, "allow", "POST, DELETE"),  # a GET without a session
    "sseaccept": (406, INVALID_REQUEST, "Not Acceptable: Accept must list text/event-stream"),
    "conflict": (409, INVALID_REQUEST, "Conflict: this session's stream is open already"),
}


async def refuse(response, what, detail=None, request_id="null"):
    """Answer on `response` the refusal `what` (a key of _PAGES), its message formatted
    with `detail` (a str or a tuple), to the request whose id is `request_id` (JSON)."""
    status, code, text = _PAGES[what]
    if code == "allow":
        await response.send(status, (("Allow", text),))
        return
    if detail is not None:
        text = text % detail
    if code is None:
        await response.send(status, (("Content-Type", "text/plain"),), text)
    else:
        await response.send(status, _AUTHENTICATE if status == 401 else _JSON, error_frame(request_id, code, text))
