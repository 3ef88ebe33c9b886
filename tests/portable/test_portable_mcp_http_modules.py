# What the board's HTTP endpoint loads only when a request needs it: each revision
# family's code (mcplink.httpmodern, mcplink.httpsession), the endpoint's refusals
# (mcplink.httperrors) and the server's own (unet.httpdrefusal). Each comes at its first
# use and leaves as the endpoint stops (MicroPython; CPython keeps modules), and the
# answers are the ones the endpoint always gave. Over in-memory streams (the sockets are
# tested through the simulated board: tests/firmware).
import json
import sys

import mcplink.http
from mcplink.http import McpHttp
from test_portable_unet_httpd import Stream, echo
from umcp import McpServer
from umcp.compat import forget_modules
from unet.httpd import HttpServer

MICROPYTHON = sys.implementation.name == "micropython"
LATER = ("mcplink.httpmodern", "mcplink.httpsession", "mcplink.httperrors")
TOKEN = "module-token"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def endpoint():
    forget_modules(*LATER)  # a fresh start (MicroPython: what earlier cases loaded)
    server = McpServer(name="modules", version="1")
    return McpHttp(server, TOKEN, 0, "127.0.0.1")


def post(message, token=TOKEN, **extra):
    body = json.dumps(message).encode()
    head = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", "Content-Length: %d" % len(body)]
    if token is not None:
        head.append("Authorization: Bearer " + token)
    for name in extra:
        head.append("%s: %s" % (name.replace("_", "-"), extra[name]))
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def exchange(http, data):
    """The one answer to the request `data`: (status, headers, body)."""
    stream = Stream(data, chunk=64)
    await http.httpd.serve(stream, stream)
    (answer,) = stream.responses()
    return answer


def loaded(*names):
    """Which of `names` are in sys.modules (as a tuple of booleans)."""
    return tuple(name in sys.modules for name in names)


async def test_each_family_s_code_comes_at_its_first_request_and_leaves_as_the_endpoint_stops():
    http = endpoint()
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}}
    status, _, body = await exchange(http, post(discover, MCP_Protocol_Version="2026-07-28",
                                                Mcp_Method="server/discover"))
    assert status == 200 and "2026-07-28" in json.loads(body)["result"]["supportedVersions"]
    if MICROPYTHON:  # a 2026-07-28 client has loaded its family's code only
        assert loaded(*LATER) == (True, False, False)
    # A legacy request (refused without a session: an initialize needs os.urandom, which
    # the WebAssembly build lacks; tests/firmware opens sessions on the board).
    status, _, body = await exchange(http, post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert status == 400 and json.loads(body)["error"]["code"] == -32600
    if MICROPYTHON:  # its family's code, and the refusal's text
        assert loaded(*LATER) == (True, True, True)
    await http.stop()
    if MICROPYTHON:  # stopped: the next start loads them again
        assert loaded(*LATER) == (False, False, False)


async def test_the_endpoint_s_refusals_come_at_the_first_and_say_what_they_always_said():
    http = endpoint()
    status, headers, body = await exchange(http, post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, token="wrong"))
    assert status == 401 and headers["www-authenticate"] == 'Bearer realm="umcp"'
    error = json.loads(body)["error"]
    assert error["code"] == -32600 and error["message"] == "Unauthorized: Authorization: Bearer <token> required"
    if MICROPYTHON:
        assert loaded("mcplink.httperrors") == (True,)
    # One of a family module's: the legacy session's, without its header.
    status, _, body = await exchange(http, post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert status == 400 and json.loads(body)["error"]["message"] == (
        "Bad Request: Mcp-Session-Id header required (initialize first)")
    # One whose text takes the request's details: a 2026-07-28 header that does not match.
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": MODERN_META}}
    status, _, body = await exchange(http, post(listing, MCP_Protocol_Version="2026-07-28", Mcp_Method="tools/call"))
    error = json.loads(body)["error"]
    assert status == 400 and json.loads(body)["id"] == 3 and error["code"] == -32020
    assert error["message"] == "Header mismatch: Mcp-Method header value does not match the method"
    data = b"PUT /mcp HTTP/1.1\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n\r\n"
    status, headers, _ = await exchange(http, data)
    assert status == 405 and headers["allow"] == "GET, POST, DELETE"
    await http.stop()
    if MICROPYTHON:
        assert loaded(*LATER) == (False, False, False)


async def test_a_body_the_heap_cannot_hold_parsed_is_answered_503_without_loading_anything():
    http = endpoint()

    def no_room(text):
        raise MemoryError("no room")

    parse = mcplink.http.loads
    mcplink.http.loads = no_room
    try:
        status, _, body = await exchange(http, post({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    finally:
        mcplink.http.loads = parse
    answer = json.loads(body)
    assert status == 503 and answer["id"] is None and answer["error"]["code"] == -32603
    assert answer["error"]["message"] == "Out of memory: the request was not read"
    if MICROPYTHON:  # nothing loaded for the answer: the heap had no room
        assert loaded(*LATER) == (False, False, False)
    await http.stop()


async def test_the_server_s_own_refusals_come_with_unet_httpdrefusal_and_leave_as_it_stops():
    forget_modules("unet.httpdrefusal")
    server = HttpServer(echo)
    stream = Stream(b"GET /a HTTP/1.1\r\nbroken header\r\n\r\n")
    await server.serve(stream, stream)
    (status, headers, body), = stream.responses()
    assert (status, headers["content-type"], body) == (400, "text/plain", b"malformed header line")
    assert server.refused == 1
    if MICROPYTHON:
        assert loaded("unet.httpdrefusal") == (True,)
    await server.stop()
    if MICROPYTHON:
        assert loaded("unet.httpdrefusal") == (False,)


async def test_status_lines_other_than_200_come_with_unet_httpdstatus_and_leave_as_it_stops():
    forget_modules("unet.httpdstatus")
    server = HttpServer(echo)
    stream = Stream(b"GET /a HTTP/1.1\r\n\r\n")
    await server.serve(stream, stream)
    assert bytes(stream.out).startswith(b"HTTP/1.1 200 OK\r\n")
    if MICROPYTHON:  # 200 OK: nothing loaded for it
        assert loaded("unet.httpdstatus") == (False,)

    async def accepted(request, response):
        await response.send(202)

    server.handler = accepted
    stream = Stream(b"POST /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    await server.serve(stream, stream)
    assert bytes(stream.out) == b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    if MICROPYTHON:
        assert loaded("unet.httpdstatus") == (True,)
    await server.stop()
    if MICROPYTHON:
        assert loaded("unet.httpdstatus") == (False,)


async def test_a_revision_the_board_does_not_speak_is_answered_from_mcplink_httperrors():
    # -32022 with 400, the versions the board speaks and the one asked: a 2026-07-28-style
    # request (its _meta) naming another revision keeps its id; a legacy one, a
    # notification of another revision, are answered with a null id.
    http = endpoint()
    meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}}
    cases = ((post({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}},
                   MCP_Protocol_Version="2099-01-01", Mcp_Method="tools/list"), 7),
             (post({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": meta}},
                   MCP_Protocol_Version="2099-01-01"), None),
             (post({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}, MCP_Protocol_Version="1999-01-01"), None))
    for data, request_id in cases:
        status, headers, body = await exchange(http, data)
        answer = json.loads(body)
        assert status == 400 and headers["content-type"] == "application/json" and answer["id"] == request_id
        error = answer["error"]
        assert error["code"] == -32022 and error["message"] == "Unsupported protocol version"
        assert error["data"]["requested"] == data.split(b"MCP-Protocol-Version: ")[1][:10].decode()
        assert "2026-07-28" in error["data"]["supported"]
        if MICROPYTHON:
            assert loaded("mcplink.httperrors") == (True,)
    await http.stop()
    if MICROPYTHON:
        assert loaded(*LATER) == (False, False, False)
