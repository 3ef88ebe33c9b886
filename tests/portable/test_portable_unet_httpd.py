# The device's HTTP/1.1 server (unet.httpd) over in-memory streams: requests, keep-alive,
# streamed responses, and every bound answered and freed. Runs under pytest and inside
# MicroPython (the socket side is tested through the simulated board: tests/firmware).
import asyncio

from unet import httpd
from unet.httpd import MAX_HEADERS, MAX_LINE, HttpServer, body_length, status_line

try:
    from time import ticks_add
except ImportError:  # CPython: umcp.compat's ticks are plain milliseconds

    def ticks_add(ticks, delta):
        return ticks + delta


class Stream:
    """Both ends of a connection as the server sees them: `incoming` is what the client
    sent, handed out `chunk` bytes at a time, then the end of the stream (or, with
    `hold`, nothing more until closed); `out` collects what the server wrote."""

    def __init__(self, incoming, chunk=7, hold=False):
        self.incoming = incoming
        self.pos = 0
        self.chunk = chunk
        self.hold = hold
        self.out = bytearray()
        self.closed = False

    async def readinto(self, buf):
        if self.pos >= len(self.incoming):
            while self.hold and not self.closed:
                await asyncio.sleep(0)
            return 0
        data = self.incoming[self.pos:self.pos + min(self.chunk, len(buf))]
        buf[:len(data)] = data
        self.pos += len(data)
        return len(data)

    async def read(self, n):  # CPython's streams read; the server takes either
        buf = bytearray(n)
        count = await self.readinto(buf)
        return bytes(buf[:count])

    def write(self, data):
        self.out.extend(bytes(data))

    async def drain(self):
        pass

    def close(self):
        self.closed = True

    async def wait_closed(self):
        self.closed = True

    def responses(self):
        """[(status, {lowercase name: value}, body bytes)] of what the server wrote."""
        out, found = bytes(self.out), []
        while out:
            head, _, rest = out.partition(b"\r\n\r\n")
            lines = str(head, "utf-8").split("\r\n")
            status = int(lines[0].split(" ")[1])
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if status == 100:
                out = rest
                found.append((100, headers, b""))
                continue
            length = int(headers.get("content-length", len(rest)))
            found.append((status, headers, rest[:length]))
            out = rest[length:]
        return found


async def echo(request, response):
    if request.path == "/fail":
        raise ValueError("handler bug")
    if request.path == "/silent":
        return
    if request.path == "/stream":
        await response.start(200, (("Content-Type", "text/event-stream"),))
        await response.write(["data: ", "ü", "\r\n\r\n"])
        await response.write(b"data: 2\r\n\r\n")
        return
    body = request.body or b""
    await response.send(200, (("Content-Type", "text/plain"),),
                        ["%s %s ?%s " % (request.method, request.path, request.query),
                         bytes(body), " " + ",".join(sorted("%s=%s" % kv for kv in request.headers.items()))])


async def serve(data, handler=echo, chunk=7, hold=False, **options):
    server = HttpServer(handler, ("authorization", "x-kept"), **options)
    stream = Stream(data, chunk, hold)
    await server.serve(stream, stream)
    await server.stop()  # its deadline sweeper, started by the first connection
    return server, stream


def test_status_lines_and_lengths():
    assert status_line(404) == "HTTP/1.1 404 Not Found"
    assert status_line(599) == "HTTP/1.1 599 Unknown"
    assert body_length(["ab", b"cd", "ü"]) == 6


async def test_a_request_its_body_and_the_headers_asked_for():
    server, stream = await serve(b"POST /mcp?a=1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n"
                                 b"X-Other: not kept\r\nX-KEPT: 1\r\nx-kept: 2\r\nContent-Length: 5\r\n\r\nhello")
    (status, headers, body), = stream.responses()
    assert status == 200 and headers["content-type"] == "text/plain"
    assert body == b"POST /mcp ?a=1 hello authorization=Bearer t,x-kept=1, 2"
    assert server.served == 1 and server.refused == 0 and server.active == 0 and not server.connections
    assert stream.closed  # the client closed after its request: so does the server


async def test_keep_alive_serves_requests_in_turn():
    server, stream = await serve(b"GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nok"
                                 b"\r\nGET /c HTTP/1.1\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\n\r\n",
                                 chunk=3)
    replies = stream.responses()
    assert [body.split(b" ")[1] for _, _, body in replies] == [b"/a", b"/b", b"/c"]
    assert "connection" not in replies[0][1] and replies[2][1]["connection"] == "close"
    assert server.served == 3


class _NoRoomForHeaders:
    """Headers whose reading runs out of memory, as composing a big answer can on a board."""

    def __iter__(self):
        raise MemoryError("memory allocation failed")


async def test_an_answer_that_ran_out_of_memory_while_composed_can_still_be_answered_in_short():
    # umcp.server answers a MemoryError with a short -32603 on the same response: nothing
    # of the first answer went out, so the response is not sent yet, and the client gets
    # the short one on its kept-alive connection instead of waiting for an answer forever.
    seen = []

    async def handler(request, response):
        try:
            await response.send(200, _NoRoomForHeaders(), [b"x" * 4000])  # beyond the buffer
        except MemoryError:
            seen.append(response.sent)
            await response.send(500, (("Content-Type", "text/plain"),), "out of memory")

    server, stream = await serve(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", handler)
    assert seen == [False, False]
    assert [(status, body) for status, _, body in stream.responses()] == [(500, b"out of memory")] * 2
    assert server.served == 2


async def test_a_small_answer_whose_joined_copy_finds_no_room_goes_out_in_pieces():
    # A heap in fragments may have room for an answer but no block for its head and body
    # joined into one write: the same bytes then go out in more writes, and the request is
    # answered instead of failing for memory (the board's get_system_info at 112K).
    pieces = ['{"jsonrpc":"2.0","id":1,"result":', '{"text":"' + "x" * 700 + '"}', "}"]

    async def handler(request, response):
        await response.send(200, (("Content-Type", "application/json"),), pieces)

    def no_room(head, body):
        raise MemoryError("memory allocation failed, allocating 907 bytes")

    _, whole = await serve(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", handler)
    joined = httpd._joined
    httpd._joined = no_room
    try:
        server, split = await serve(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", handler)
    finally:
        httpd._joined = joined
    assert bytes(split.out) == bytes(whole.out)
    assert [(status, body) for status, _, body in split.responses()] == [(200, "".join(pieces).encode())] * 2
    assert server.served == 2


async def test_http_1_0_closes_after_one_request():
    server, stream = await serve(b"GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.0\r\n\r\n")
    assert len(stream.responses()) == 1 and stream.responses()[0][1]["connection"] == "close"


async def test_a_streamed_response_ends_with_the_connection():
    server, stream = await serve(b"GET /stream HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\r\n")
    text = bytes(stream.out)
    assert text.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    assert text.endswith("data: ü\r\n\r\ndata: 2\r\n\r\n".encode()) and b"content-length" not in text.lower()
    assert server.served == 1


async def test_answers_of_every_size_and_form_go_out_whole():
    # Small answers are composed in the connection's read buffer (MicroPython), others
    # written as they are: each comes out as its status, headers and pieces say, after a
    # request alone or with the next one's bytes already read behind it.
    sizes = (0, 1, 99, 300, 350, 351, 360, 420, 511, 900, 3000)

    async def sized(request, response):
        size = int(request.path[1:])
        if size == 1:
            await response.send(404, (("X-A", "1"),), "ü")
            return
        pieces = ["[", "x" * (size // 2), b"y" * (size - size // 2 - 2), "]"] if size > 1 else None
        await response.send(201 if size % 2 else 200, (("Content-Type", "text/plain"), ("X-Z", "%d" % size)),
                            pieces)

    for size in sizes:
        for behind, chunk in ((b"", 7), (b"GET /0 HTTP/1.1\r\n\r\n", 512)):
            head = b"GET /%d HTTP/1.1\r\n%s\r\n" % (size, b"" if behind else b"Connection: close\r\n")
            server, stream = await serve(head + behind, sized, chunk)
            replies = stream.responses()
            assert len(replies) == (2 if behind else 1), (size, replies)
            status, headers, body = replies[0]
            if size == 1:
                assert (status, headers["x-a"], body) == (404, "1", "ü".encode())
            else:
                assert status == (201 if size % 2 else 200) and headers["x-z"] == str(size)
                assert headers["content-type"] == "text/plain" and len(body) == size
                assert body == (b"[" + b"x" * (size // 2) + b"y" * (size - size // 2 - 2) + b"]" if size else b"")
            assert headers["content-length"] == str(len(body))
            assert ("connection" in headers) == (not behind)


async def test_a_connection_takes_the_read_buffer_the_one_before_left():
    # A client of one request per connection costs no new buffer each time; a buffer grown
    # for a long line is not kept.
    seen = []

    def spare():  # the buffer kept and its size (not its view: CPython would not let a
        # buffer seen so grow)
        return server.spare and (server.spare[0], len(server.spare[0]))

    async def note(request, response):
        seen.append(spare())
        await response.send(200, None, "ok")

    server = HttpServer(note, ("x-long",))
    for data in (b"GET /a HTTP/1.1\r\n\r\n", b"GET /b HTTP/1.1\r\n\r\n",
                 b"GET /c HTTP/1.1\r\nX-Long: " + b"y" * 600 + b"\r\n\r\n", b"GET /d HTTP/1.1\r\n\r\n"):
        stream = Stream(data)
        await server.serve(stream, stream)
        assert [status for status, _, _ in stream.responses()] == [200]
        seen.append(spare())
    await server.stop()
    first = seen[1][0]
    assert seen[0] is None and seen[1][1] == httpd.BUF_START
    assert seen[2] is None and seen[3][0] is first  # taken by /b, and given back
    assert seen[4] is None and seen[5] is None  # taken by /c, grown: not kept
    assert seen[6] is None and seen[7][1] == httpd.BUF_START and seen[7][0] is not first



async def test_nagle_is_turned_off_on_a_connection_s_socket_where_it_can_be():
    # MicroPython's stream keeps its socket as `s`: TCP_NODELAY (IPPROTO_TCP 6, option 1,
    # as Linux, BSD and lwIP number them) is set on it once per connection. A socket
    # without options (TLS) or a stream without one (CPython's) is served all the same.
    class Sock:
        def __init__(self):
            self.options = []

        def setsockopt(self, *option):
            self.options.append(option)

        def readinto(self, buf):
            return None  # nothing has come yet: the stream's own read waits for it

    class TlsSock:
        def readinto(self, buf):
            return None

    sock = Sock()
    for s in (sock, TlsSock()):
        stream = Stream(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        stream.s = s
        server = HttpServer(echo)
        await server.serve(stream, stream)
        await server.stop()
        assert [status for status, _, _ in stream.responses()] == [200, 200]
    assert sock.options == [(6, 1, 1)]

async def test_bad_requests_are_answered_and_the_connection_closed():
    long_line = b"X-Kept: " + b"y" * MAX_LINE + b"\r\n"
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1))
    cases = (
        (b"garbage\r\n\r\n", 400), (b"GET /a HTTP/2.0\r\n\r\n", 505), (b"GET /a SPDY\r\n\r\n", 400),
        (b"GET http://h/a HTTP/1.1\r\n\r\n", 400), (b"GET /a b HTTP/1.1\r\n\r\n", 400),
        (b"GET /a HTTP/1.1\r\nno colon\r\n\r\n", 400), (b"GET /a HTTP/1.1\r\n: empty\r\n\r\n", 400),
        (b"GET /a HTTP/1.1\r\n" + long_line + b"\r\n", 431), (b"GET /a HTTP/1.1\r\n" + many + b"\r\n", 431),
        (b"POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world", 413),
        (b"POST /a HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
        (b"POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400),
        (b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 411),
        (b"GET /\xff\xfe HTTP/1.1\r\n\r\n", 400),
        # White space before the colon, a folded line: either would let a body pass for a
        # request of its own (the length not read).
        (b"POST /a HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello", 400),
        (b"POST /a HTTP/1.1\r\nX-Long: a\r\n\tContent-Length: 5\r\n\r\nhello", 400),
        (b"POST /a HTTP/1.1\r\nX-Long: a\r\n continued\r\n\r\n", 400),
    )
    for data, expected in cases:
        server, stream = await serve(data + b"GET /next HTTP/1.1\r\n\r\n", max_body=10)
        replies = stream.responses()
        assert [status for status, _, _ in replies] == [expected], (data[:40], replies)
        assert replies[0][1]["connection"] == "close" and stream.closed
        assert server.refused == 1 and not server.connections


async def test_a_handler_that_fails_or_forgets_gets_a_500():
    for path in (b"/fail", b"/silent"):
        server, stream = await serve(b"GET " + path + b" HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\r\n")
        assert [status for status, _, _ in stream.responses()] == [500]


async def test_beyond_max_requests_a_request_gets_503():
    server = HttpServer(echo, max_requests=1)
    server.active = 1  # one already in the handler
    stream = Stream(b"GET /a HTTP/1.1\r\n\r\n")
    await server.serve(stream, stream)
    await server.stop()
    (status, headers, _), = stream.responses()
    assert status == 503 and headers["retry-after"] == "1"


async def test_expect_100_continue_is_answered_before_the_body():
    server, stream = await serve(b"POST /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi")
    assert [status for status, _, _ in stream.responses()] == [100, 200]


async def test_a_client_that_leaves_mid_request_frees_everything():
    for data in (b"POST /a HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc", b"GET /a HTTP/1.1\r\nHost: h"):
        server, stream = await serve(data)
        assert stream.out == b"" and stream.closed and not server.connections and server.active == 0


async def test_until_gone_returns_when_the_client_hangs_up():
    seen = []

    async def wait_for_hang_up(request, response):
        await response.until_gone()
        seen.append(response.gone)
        await response.send(200)  # nobody reads it: the write is harmless

    server, stream = await serve(b"GET /a HTTP/1.1\r\n\r\n", wait_for_hang_up)
    assert seen == [True] and not server.connections and server.active == 0


async def test_an_idle_connection_is_closed_for_a_new_one_when_full():
    server = HttpServer(echo, max_connections=1, idle_timeout=60)
    first = Stream(b"GET /a HTTP/1.1\r\n\r\n", hold=True)
    task = asyncio.create_task(server.serve(first, first))
    for _ in range(100):
        await asyncio.sleep(0)
        if first.responses():
            break
    assert len(server.connections) == 1 and server.connections[0].requests == 1
    second = Stream(b"GET /b HTTP/1.1\r\n\r\n")
    await server.serve(second, second)
    assert [status for status, _, _ in second.responses()] == [200]
    for _ in range(100):
        if task.done():
            break
        await asyncio.sleep(0)
    assert task.done() and first.closed and not server.connections
    await server.stop()


async def test_connections_that_send_nothing_give_way_to_a_client_that_does():
    server = HttpServer(echo, max_connections=2, idle_timeout=60)
    silent = [Stream(b"", hold=True) for _ in range(2)]
    tasks = [asyncio.create_task(server.serve(s, s)) for s in silent]
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(server.connections) == 2
    late = Stream(b"GET /a HTTP/1.1\r\n\r\n")
    await server.serve(late, late)  # both could still be sending: no room
    assert [status for status, _, _ in late.responses()] == [503]
    for connection in server.connections:  # as if SILENT_MS had passed since they came
        connection.since = ticks_add(connection.since, -httpd.SILENT_MS)
    client = Stream(b"GET /b HTTP/1.1\r\n\r\n")
    await server.serve(client, client)
    assert [status for status, _, _ in client.responses()] == [200]
    for _ in range(100):
        if any(task.done() for task in tasks):
            break
        await asyncio.sleep(0)
    assert sum(task.done() for task in tasks) == 1  # the one silent longest made room
    await server.stop()


async def test_the_deadline_sweeper_ends_once_no_connection_is_left():
    # An idle server keeps no task (a cancelled one could keep the server referenced on
    # MicroPython); the next connection starts the sweeper again.
    server = HttpServer(echo)
    stream = Stream(b"GET /a HTTP/1.1\r\n\r\n")
    await server.serve(stream, stream)
    first = server._sweeper
    assert first is not None and not server.connections
    for _ in range(100):  # it looks once a second
        if server._sweeper is None:
            break
        await asyncio.sleep(0.05)
    assert server._sweeper is None
    held = Stream(b"GET /b HTTP/1.1\r\n\r\n", hold=True)
    serving = asyncio.create_task(server.serve(held, held))
    for _ in range(20):
        if held.out:
            break
        await asyncio.sleep(0)
    assert server._sweeper is not None and server._sweeper is not first and len(server.connections) == 1
    held.closed = True
    await serving
    await server.stop()
    assert [status for status, _, _ in held.responses()] == [200]
