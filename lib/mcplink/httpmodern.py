"""Revision 2026-07-28's requests at the board's HTTP endpoint (mcplink.http): every POST
stands alone (the request's _meta names the revision); the headers MCP-Protocol-Version,
Mcp-Method and Mcp-Name must match the body (-32020, 400), the _meta envelope must be
there (-32602, 400), another revision is -32022 (400), an unknown method 404. No
session, no GET stream; a notification is 202.

mcplink.http loads this module at the first request in that revision and forgets it with
the rest of the endpoint's code: a client of the legacy revisions never loads it."""

import binascii

from umcp.compat import const, dumps
from umcp.rpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, UNSUPPORTED_VERSION, valid_id
from umcp.server import MODERN_VERSION

from .httpexchange import META_VERSION, Exchange

HEADER_MISMATCH = const(-32020)
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
# Methods whose Mcp-Name header mirrors a parameter.
_NAMED = (("tools/call", "name"), ("resources/read", "uri"), ("prompts/get", "name"))


def status(code):
    """The HTTP status of an error response (the revision's table)."""
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, HEADER_MISMATCH, -32021,
                UNSUPPORTED_VERSION):
        return 400
    return 200


def _header_value(value):
    """An Mcp-Name as the client meant it: `=?base64?...?=` decoded (None if broken)."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return str(binascii.a2b_base64(value[9:-2]), "utf-8")
    except ValueError:
        return None


def _problem(headers, message, params, meta, version):
    """(refusal, args) when the request's headers or _meta do not fit it (a refusal of
    mcplink.httperrors), else None."""
    method = message["method"]
    if not isinstance(meta, dict) or META_VERSION not in meta or _META_CAPABILITIES not in meta:
        return 10, (META_VERSION, _META_CAPABILITIES)  # meta
    if version is None:
        return 11, None  # noversion
    if version != meta[META_VERSION]:
        return 12, (version[:40], meta[META_VERSION])  # version
    if headers.get("mcp-method") != method:
        return 13, "missing" if headers.get("mcp-method") is None else "value"  # mmethod
    for named, key in _NAMED:
        if method == named and isinstance(params, dict) and key in params:
            if _header_value(headers.get("mcp-name")) != params[key]:
                return 14, ("missing" if headers.get("mcp-name") is None else "value", key)  # mname
    return None


def handle(endpoint, request, response, message, params, meta, streams):
    """The awaitable that serves one POST of this revision on McpHttp `endpoint` (a plain
    function: no frame of its own for a request)."""
    headers = request.headers
    version = headers.get("mcp-protocol-version")
    if "method" not in message:
        return endpoint.refuse(response, 9, MODERN_VERSION, _id_json(message))  # response
    if "id" not in message:  # a notification: nothing in this revision acts on one
        if version != MODERN_VERSION:
            from .httperrors import unsupported

            return unsupported(response, version, "null")
        return response.send(202)
    problem = _problem(headers, message, params, meta, version)
    if problem is not None:
        return endpoint.refuse(response, problem[0], problem[1], _id_json(message))
    if version != MODERN_VERSION:
        from .httperrors import unsupported

        return unsupported(response, version, _id_json(message))
    return endpoint.answer(Exchange(endpoint, response, streams, status), message)


def _id_json(message):
    """The request's id as JSON, for an answer made here ("null" when it has none valid)."""
    request_id = message.get("id")
    return dumps(request_id) if valid_id(request_id) else "null"
