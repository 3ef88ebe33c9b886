"""A board serving MCP over HTTP for make bench (the httpcall part, the stock table's board
(i)): requests as the official SDK's client writes them in the 2026-07-28 revision, sent
from blocking sockets, and a board's session over them.
"""

import json
import socket
import tempfile
import time

from .generic import BOOT, qstr_pools
from ..bridge.discover import discover
from ..sim.board import BoardFailed, SimBoard

WAIT_S = 60
READ_TIMEOUT_S = 10


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post(port, method, params, request_id=1):
    """A 2026-07-28 POST of `method` as the SDK's client writes it (its headers included)."""
    params = dict(params, _meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}})
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    name = "Mcp-Name: %s\r\n" % params["name"] if "name" in params else ""
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: application/json, text/event-stream\r\n"
            "Accept-Encoding: gzip, deflate\r\nUser-Agent: python-httpx/0.28.1\r\n"
            "Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            "Mcp-Method: %s\r\n%sContent-Length: %d\r\n\r\n" % (port, method, name, len(body)))
    return head.encode() + body


def request(port, name, arguments=None, request_id=1):
    """A 2026-07-28 tools/call POST of the tool `name` (post())."""
    return post(port, "tools/call", {"name": name, "arguments": arguments or {}}, request_id)


def answer(sock):
    """Read one response on `sock`; returns its body (bytes). OSError if it is not a 200."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(4096)
        if not more:
            raise OSError("the server hung up: %r" % data[:200])
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise OSError("unexpected answer: %r" % data[:200])
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        more = sock.recv(4096)
        if not more:
            raise OSError("the server hung up mid-answer")
        body += more
    return body


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def calls_new(port, data, count):
    """`count` calls, each on a connection of its own; the round trips (seconds)."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        with connect(port) as sock:
            sock.sendall(data)
            answer(sock)
        times.append(time.perf_counter() - start)
    return times


def calls_kept(port, data, count):
    """`count` calls on one kept-alive connection; the round trips (seconds)."""
    times = []
    with connect(port) as sock:
        for _ in range(count):
            start = time.perf_counter()
            sock.sendall(data)
            answer(sock)
            times.append(time.perf_counter() - start)
    return times


def wait_serving(server, port, data):
    deadline = time.monotonic() + WAIT_S
    while True:
        if not server.running:
            raise BoardFailed("it exited with status %s" % server.returncode)
        try:
            calls_new(port, data, 1)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise BoardFailed("it did not answer on port %d within %d s" % (port, WAIT_S))
            time.sleep(0.2)


def wait_mdns(server, port):
    """Until the board's mDNS responder (on UDP `port`) answers for its service record: it
    takes its socket some seconds after the board serves, and what it keeps then (its
    socket, its task, the names its first answer interns) must not count as drift."""
    deadline = time.monotonic() + WAIT_S
    while not discover(0.5, "127.0.0.1", port):
        if not server.running:
            raise BoardFailed("it exited with status %s" % server.returncode)
        if time.monotonic() > deadline:
            raise BoardFailed("its mDNS responder did not answer on UDP port %d within %d s" % (port, WAIT_S))


def result_of(port, data):
    """The result of the request `data` (post()) on a connection of its own; BoardFailed for
    an error answer or a tool's isError."""
    with connect(port) as sock:
        sock.sendall(data)
        reply = json.loads(answer(sock))
    result = reply.get("result")
    if result is None:
        raise BoardFailed("answered %s" % json.dumps(reply.get("error")))
    if result.get("isError"):
        raise BoardFailed("failed: %s" % json.dumps(result))
    return result


def heap_used(port):
    """The board's heap in use (self.get_system_info, after a collection), over HTTP."""
    try:
        result = result_of(port, request(port, "self_get_system_info"))
    except BoardFailed as e:
        raise BoardFailed("self.get_system_info %s" % e)
    return json.loads(result["content"][0]["text"])["heap_used"]


def log_tail(board, size=3000):
    """The last `size` characters a SimBoard started with a log file wrote (None: all)."""
    board.log.flush()
    board.log.seek(0)
    return board.log.read()[-size if size else 0:]


def run(micropython, stage_dir, heapsize, runtime, config, calls, qstr=False):
    """One boot of the board of `config` serving MCP over HTTP ("auth": "none" on loopback,
    its mDNS responder on a UDP port of its own, no link) with `heapsize` bytes of heap,
    through a Home Assistant's session: tools/list, the heap read, a call of each of `calls`
    ((name, arguments)), each on a connection of its own, the heap read. Returns run_board's
    figures ({"boot", "session", "tools", and the qstr pools where `qstr`}); raises
    BoardFailed with the board's log."""
    port, mdns_port = free_port(), free_port(socket.SOCK_DGRAM)
    config = dict(config, mcp_http={"port": port, "auth": "none", "bind": "127.0.0.1", "mdns_port": mdns_port})
    with tempfile.TemporaryFile("w+", errors="replace") as log:
        board = SimBoard(config, runtime, micropython, heapsize, stage=stage_dir,
                         entry=[BOOT, "qstr"] if qstr else [BOOT], log=log)
        try:
            board.start()
            listing = post(port, "tools/list", {})
            wait_serving(board, port, listing)
            wait_mdns(board, mdns_port)
            figures = {"tools": len(result_of(port, listing)["tools"]), "boot": heap_used(port)}
            for name, arguments in calls:
                try:
                    result_of(port, request(port, name, arguments))
                except BoardFailed as e:
                    raise BoardFailed("%s %s" % (name, e))
            figures["session"] = heap_used(port)
        except (BoardFailed, OSError) as e:
            raise BoardFailed("%s\n%s" % (e or "timed out", log_tail(board))) from None
        finally:
            board.close()
        pools = qstr_pools(log_tail(board, None)) if qstr else []
        if pools:
            figures["qstrs_boot"], figures["qstrs_session"] = pools[0], pools[-1]
        return figures
