"""A small HTTP/1.1 server on asyncio streams (HttpServer), for CPython 3.11+ and
MicroPython 1.24+.

Generic: it reads a request (line, the headers its handler asked for, a body of bounded
size), calls the handler with it and a Response, and keeps the connection for the next
request. The MCP endpoint (mcplink.http) is one handler, the Wi-Fi setup page another:

    async def handler(request, response):
        await response.send(200, (("Content-Type", "text/plain"),), "hello")

    httpd = HttpServer(handler, keep=("host",), max_body=4096)
    await httpd.run("0.0.0.0", 80)           # until httpd.stop()

What it refuses without calling the handler, and what a connection keeps: HttpServer.
"""

import asyncio
import sys

from umcp.compat import await_then_drop, const, forget_modules, get_logger, piece_size, piece_utf8, ticks_diff, ticks_ms

from . import close_quietly

MAX_LINE = const(2048)  # longest request or header line
MAX_HEADERS = const(48)  # header lines of one request
BUF_START = const(512)  # a connection's read buffer to begin with
_SWEEP_MS = const(1000)  # how often deadlines and stream keep-alives are looked at
# A connection that has sent nothing for this long may be closed for a new one when the
# server is full (sooner, its client may be sending its first request): silent ones
# must not keep every client out until their idle_timeout.
SILENT_MS = const(2000)
_JOINED_MAX = const(1024)  # a response up to this size is written in one piece
# A small answer is composed in the connection's read buffer (nothing unread there): its
# body from this offset on, its head just before it (a tools/call's head is about 80
# bytes; a legacy session's adds its Mcp-Session-Id). MicroPython only: its streams copy
# what they cannot send at once, and the buffer is free again when write() returns
# (CPython's transports may keep a view of it).
_HEAD_ROOM = const(160)
_COMPOSE = sys.implementation.name == "micropython"

# Connection states (for the sweeper)
_IDLE = const(0)  # waiting for a request's first byte (keep-alive)
_READING = const(1)  # a request's head or body is arriving
_SERVING = const(2)  # the handler has it

_log = get_logger("httpd")


def status_line(status):
    """'HTTP/1.1 404 Not Found' for 404 (unet.httpdstatus's table: loaded at the first
    answer other than 200, forgotten as the server stops)."""
    if status == 200:  # nearly every answer: nothing loaded or made for it
        return "HTTP/1.1 200 OK"
    from .httpdstatus import status_line as line

    return line(status)


# A piece as bytes-like for a stream: a str's UTF-8 (on MicroPython a view of the str
# itself, no copy), or a listed entry's (umcp.compat.piece_utf8: a tools/list page hands
# out its entries, serialized only as they are written).
utf8 = piece_utf8


def _short_text(pieces):
    """Whether `pieces` are all str, short enough together to be joined for one write."""
    size = 0
    for piece in pieces:
        if not isinstance(piece, str):
            return False
        size += len(piece)
    return size <= _JOINED_MAX


def _joined(head, pieces):
    """A small answer's head and body `pieces` as one str or bytearray, for one write."""
    if len(pieces) == 1 and isinstance(pieces[0], str):
        return head + pieces[0]
    joined = bytearray(utf8(head))
    for piece in pieces:
        joined += utf8(piece)
    return joined


def body_length(pieces):
    """Bytes the pieces take on the wire."""
    total = 0
    for piece in pieces:
        total += piece_size(piece)
    return total


class _Refusal(Exception):
    """A request answered by the server itself: args (its number in unet.httpdrefusal's
    table, and the figure its reason names, if it names one)."""


class Request:
    """One request: `method` ("POST"), `path` ("/mcp"), `query` ("a=1" or ""), `headers`
    (lowercase name -> value, only the names the server was told to keep; a repeated
    header's values joined by ", "), `body` (a bytearray, or None without one), `keep_alive`.
    The handler may set `headers` and `body` to None to free them early (a long stream)."""

    query = ""  # class defaults: a request keeps only what differs (heap per request)
    body = None

    def __init__(self, method, path, query, keep_alive):
        self.method = method
        self.path = path
        if query:
            self.query = query
        self.headers = {}
        self.keep_alive = keep_alive


class Response:
    """How a handler answers: once with send(), or as a stream with start() then
    write() (the connection closes when the handler returns: no length is known).
    `sent`: the head went out; `gone`: the client hung up (a write failed, or
    until_gone() saw it)."""

    # Class defaults: an instance keeps only what differs (each attribute is heap for every
    # request).
    sent = False
    streaming = False
    gone = False
    unsent = False  # send_now() left bytes in the stream (flush() writes them)
    keepalive = None  # bytes a quiet stream sends every keepalive_s (an SSE comment)
    keepalive_s = 20
    _lock = None

    def __init__(self, connection, keep_alive):
        self._conn = connection
        self.keep_alive = keep_alive
        self._last_write = ticks_ms()

    def _head(self, status, headers, length):
        """The response head as one string (one write with the body: one TCP segment)."""
        parts = [status_line(status)]
        for name, value in headers or ():
            if "\r" in value or "\n" in value:
                raise ValueError("line break in response header " + name)
            parts.append("\r\n")
            parts.append(name)
            parts.append(": ")
            parts.append(value)
        if length is not None:
            parts.append("\r\nContent-Length: ")
            parts.append(str(length))
        parts.append("\r\n\r\n" if self.keep_alive else "\r\nConnection: close\r\n\r\n")
        return "".join(parts)

    def send_now(self, status, headers=None, body=None):
        """send() at once, without a coroutine, where it can be: a small answer on
        MicroPython, composed in the connection's read buffer and written in one piece.
        Returns whether it was; if not, nothing was written, and send() is the way. What
        the stream could not take at once (`unsent`) goes out before the server reads the
        next request or closes (or with flush())."""
        if self.sent:
            raise RuntimeError("response already sent")
        if not _COMPOSE:
            return False
        if body is None:
            body = ()
        elif not isinstance(body, list) and not isinstance(body, tuple):
            body = (body,)
        whole = self._conn.compose(status, headers, body, self.keep_alive)
        if whole is None:
            return False
        if self.gone:
            raise OSError("the client has gone")
        self.sent = True
        writer = self._conn.writer
        try:
            writer.write(whole)
        except Exception:
            self.gone = True
            raise
        if getattr(writer, "out_buf", True):  # (MicroPython's stream: what it kept back)
            self.unsent = True
        self._last_write = ticks_ms()
        return True

    async def flush(self):
        """Write what send_now() left in the stream."""
        if self.unsent:
            self.unsent = False
            try:
                await self._conn.writer.drain()
            except Exception:
                self.gone = True
                raise

    async def send(self, status, headers=None, body=None):
        """The whole response: `headers` (name, value) pairs, `body` None, a str, a
        bytes-like or a list/tuple of those (joined with the head into one write up to
        _JOINED_MAX bytes; beyond, written as they are, never copied)."""
        if self.send_now(status, headers, body):
            await self.flush()
            return
        if body is None:
            body = ()
        elif not isinstance(body, list) and not isinstance(body, tuple):
            body = (body,)
        # A copy that finds no block of its size free (a heap in fragments, with room
        # enough in all) is left out: the same bytes go in more writes.
        if len(body) > 1 and _short_text(body):
            try:
                body = ("".join(body),)  # a frame's pieces as one string: no view of each
            except MemoryError:
                pass
        length = body_length(body)
        head = self._head(status, headers, length)
        if length + len(head) <= _JOINED_MAX and len(body):
            # A small answer goes as one write: one send, one segment (a write per piece
            # costs a system call each, and the client waits for the last).
            try:
                body = (_joined(head, body),)
                head = None
            except MemoryError:
                pass
        # Sent from here on, not before: a MemoryError while composing left nothing written,
        # and the caller may still answer in short (an out-of-memory error).
        self.sent = True
        await self._write_all(body, head)

    async def start(self, status, headers=None):
        """Begin a streamed response (e.g. text/event-stream): the connection ends with it."""
        if self.sent:
            raise RuntimeError("response already sent")
        self.sent = True
        self.streaming = True
        self.keep_alive = False
        self._lock = asyncio.Lock()
        # A stream may stay open long (an event stream): it no longer counts among the
        # requests being answered, so open streams never starve requests (whoever opens
        # streams bounds them: the MCP endpoint has one per session).
        server = self._conn.server
        server.active -= 1
        server.streams += 1
        await self._write_all((), self._head(status, headers, None))

    async def write(self, pieces):
        """More of a streamed response: one str or bytes-like, or a list of them."""
        if not isinstance(pieces, (list, tuple)):
            pieces = (pieces,)
        async with self._lock:  # the keep-alive may write meanwhile
            await self._write_all(pieces)

    async def _write_all(self, pieces, head=None):
        if self.gone:
            raise OSError("the client has gone")
        writer = self._conn.writer
        try:
            if head is not None:
                writer.write(utf8(head))
            for piece in pieces:
                writer.write(utf8(piece))
            await writer.drain()
        except Exception:
            self.gone = True
            raise
        self._last_write = ticks_ms()

    async def _keep_alive(self):
        if self._lock.locked():
            return
        try:
            await self.write(self.keepalive)
        except Exception:  # gone: the handler finds out at its next write or until_gone()
            pass

    def hang_up(self):
        """End the connection from another task (a stream whose session ended): its
        handler is cancelled where it waits."""
        self._conn.task.cancel()

    async def until_gone(self):
        """Return when the client hangs up (while the handler waits for something else).
        What it sends meanwhile (a pipelined request) is kept for the next request."""
        await self._conn.until_gone()
        self.gone = True


class _Connection:
    def __init__(self, server, reader, writer):
        self.server = server
        self.reader = reader
        self.writer = writer
        spare = server.spare  # the read buffer of a connection that ended, and its view
        if spare is not None:
            server.spare = None
            self.buf, self.view = spare
        else:
            self.buf = bytearray(BUF_START)
            self.view = memoryview(self.buf)  # one view for the connection: slices of it, not of new ones
        self.start = 0  # unread bytes are buf[start:end]
        self.first = 0  # where the line _take_line() found starts
        self.end = 0
        self.state = _IDLE
        self.deadline = None  # ms after `since` at which the sweeper closes it, or None
        self.since = ticks_ms()
        self.task = None
        self.response = None
        self.requests = 0

    def enter(self, state, timeout_ms):
        """Enter `state` (_IDLE, _READING, _SERVING) from now, for at most `timeout_ms`
        (None: no deadline; the server's sweeper closes it past that)."""
        self.state = state
        self.since = ticks_ms()
        self.deadline = timeout_ms

    def _room(self):
        """Free space at the buffer's end: what is unread moves to the front, and a full
        buffer grows (up to MAX_LINE). False when it cannot."""
        if self.start:  # what is unread moves to the front
            self.view[:self.end - self.start] = self.view[self.start:self.end]
            self.end -= self.start
            self.start = 0
        if self.end < len(self.buf):
            return True
        if len(self.buf) >= MAX_LINE:
            return False
        self.view = None  # (CPython will not grow a buffer that a view looks at)
        self.buf.extend(bytes(min(len(self.buf), MAX_LINE - len(self.buf))))
        self.view = memoryview(self.buf)
        return True

    async def _fill(self):
        """More bytes into the buffer; EOFError when the client closed."""
        if not self._room():
            raise _Refusal(0, MAX_LINE)  # 431: line too long
        count = await read_some(self.reader, self.buf, self.end, self.view)
        if not count:
            raise EOFError
        self.end += count

    def compose(self, status, headers, pieces, keep_alive):
        """A response (Response.send's arguments, `pieces` str or bytes-like) composed in
        the read buffer, as a view of it to write at once; None when something unread is
        there, a piece is another kind, or it does not fit."""
        if self.start != self.end:  # (a pipelined request's bytes)
            return None
        buf = self.buf
        at = _HEAD_ROOM
        room = len(buf)
        for piece in pieces:
            if isinstance(piece, tuple) or hasattr(piece, "json_bytes"):  # a listed entry
                return None
            data = utf8(piece)
            size = len(data)
            if at + size > room:
                return None
            buf[at:at + size] = data
            at += size
        # The head backwards from the body: its end, Content-Length, the headers, the
        # status line.
        pos = _HEAD_ROOM - (4 if keep_alive else 23)
        buf[pos:_HEAD_ROOM] = b"\r\n\r\n" if keep_alive else b"\r\nConnection: close\r\n\r\n"
        length = at - _HEAD_ROOM
        while True:
            pos -= 1
            buf[pos] = 48 + length % 10
            length //= 10
            if not length:
                break
        pos -= 18
        buf[pos:pos + 18] = b"\r\nContent-Length: "
        for i in range(len(headers or ()) - 1, -1, -1):
            name, value = headers[i]
            if "\r" in value or "\n" in value:
                raise ValueError("line break in response header " + name)
            value = utf8(value)
            name = utf8(name)
            pos -= len(value) + len(name) + 4
            if pos < 0:
                return None
            buf[pos:pos + 2] = b"\r\n"
            pos += 2
            buf[pos:pos + len(name)] = name
            pos += len(name)
            buf[pos:pos + 2] = b": "
            pos += 2
            buf[pos:pos + len(value)] = value
            pos -= len(name) + 4
        if status == 200:
            if pos < 15:
                return None
            pos -= 15
            buf[pos:pos + 15] = b"HTTP/1.1 200 OK"
        else:
            line = utf8(status_line(status))
            if pos < len(line):
                return None
            pos -= len(line)
            buf[pos:pos + len(line)] = line
        return self.view[pos:at]

    def _take_line(self):
        """Where the next line (CRLF or LF ended) ends in the buffer, without its end (its
        start: `first`), valid until the next read; -1 when it has not all arrived. (Not a
        coroutine: each call of one would allocate its frame, a dozen per request; and no
        pair returned: a tuple each line.)"""
        index = self.buf.find(b"\n", self.start, self.end)
        if index < 0:
            return -1
        self.first = self.start
        self.start = index + 1
        if index > self.first and self.buf[index - 1] == 13:
            index -= 1
        return index

    async def line(self):
        """The next line's end (its start: `first`), once it has all arrived."""
        stop = self._take_line()
        while stop < 0:
            await self._fill()
            stop = self._take_line()
        return stop

    def text(self, first, stop):
        try:
            return str(self.view[first:stop], "utf-8")
        except ValueError:  # CPython: not UTF-8
            raise _Refusal(1)  # 400: not UTF-8

    async def until_gone(self):
        """Read until the client closes; what it sends meanwhile stays for the next request
        (a full buffer of it: dropped, and the connection ends after this response)."""
        while True:
            if not self._room():
                self.response.keep_alive = False
                self.start = self.end = 0
            try:
                count = await read_some(self.reader, self.buf, self.end)
            except OSError:
                count = 0
            if not count:
                return
            self.end += count

    def read_now(self):
        """What has come already, into the buffer (MicroPython: its socket read without
        waiting): the count (0: the stream ended), or None when nothing has come, or on
        CPython (which cannot tell without waiting)."""
        self._room()  # (room there is: nothing is unread when this is asked)
        sock = getattr(self.reader, "s", None)  # MicroPython's stream: its socket
        if sock is None:
            return None
        count = sock.readinto(self.view[self.end:])
        if count:
            self.end += count
        return count

    async def arrived(self):
        """Wait for a request's first bytes (what the buffer holds already counts):
        whether they came (False: the client closed between requests)."""
        while self.start == self.end:
            count = self.read_now()
            if count is None:
                if getattr(self.reader, "s", None) is not None:
                    count = await self.reader.readinto(self.view[self.end:])
                    if count is None:  # nothing yet (TLS)
                        continue
                else:
                    count = await read_some(self.reader, self.buf, self.end, self.view)
                self.end += count
            if not count:
                return False
        return True

    async def request(self, keep):
        """The next request (its body not read yet), its first bytes in the buffer
        (arrived())."""
        server = self.server
        self.enter(_READING, server.request_timeout * 1000)
        stop = await self.line()
        if self.first == stop and self.requests:  # a stray CRLF after a body (RFC 9112 2.2)
            stop = await self.line()
        first = self.first
        # METHOD SP TARGET SP HTTP/1.x, taken apart in the buffer: two strings allocated
        buf = self.buf
        space = buf.find(b" ", first, stop)
        second = buf.find(b" ", space + 1, stop)
        if space <= first or second <= space + 1 or buf.find(b" ", second + 1, stop) >= 0:
            raise _Refusal(2)  # 400: malformed request line
        if stop - second != 9 or not buf.startswith(b"HTTP/1.", second + 1) or buf[stop - 1] not in b"01":
            raise _Refusal(3 if buf.startswith(b"HTTP/", second + 1) else 4)  # 505, 400: unsupported version
        if buf[space + 1] != 47:  # "/"
            raise _Refusal(5)  # 400: not a path
        question = buf.find(b"?", space + 1, second)
        request = Request(self.text(first, space), self.text(space + 1, second if question < 0 else question),
                          "" if question < 0 else self.text(question + 1, second), buf[stop - 1] == 49)
        length = None
        chunked = False
        names = server._names
        for count in range(MAX_HEADERS + 1):
            stop = self._take_line()
            while stop < 0:
                await self._fill()
                stop = self._take_line()
            first = self.first
            if first == stop:
                break
            if count == MAX_HEADERS:
                raise _Refusal(6, MAX_HEADERS)  # 431: too many header lines
            colon = buf.find(b":", first, stop)
            # No name, a folded line (it starts with white space) or white space before the
            # colon (RFC 9112 5.1-5.2): read as another header or none, it would let a body
            # be taken for a request of its own.
            if colon <= first or buf[first] in b" \t" or buf[colon - 1] in b" \t":
                raise _Refusal(7)  # 400: malformed header line
            size = colon - first
            if size not in server._lengths:  # a header nobody reads: nothing looked at
                continue
            for i in range(first, colon):
                code = buf[i]
                if 65 <= code <= 90:  # names are case-insensitive: lowercase in place
                    buf[i] = code + 32
            name = None
            for i in range(len(names)):  # the name's own string, not a copy of the line's
                wanted = names[i]
                if len(wanted) == size and buf.startswith(wanted, first):
                    name = server._texts[i]
                    break
            if name is None:
                continue
            begin, finish = colon + 1, stop
            while begin < finish and buf[begin] in b" \t":
                begin += 1
            while finish > begin and buf[finish - 1] in b" \t":
                finish -= 1
            value = self.text(begin, finish)
            if name == "content-length":
                if not value.isdigit() or (length is not None and int(value) != length):
                    raise _Refusal(8)  # 400: bad Content-Length
                length = int(value)
            elif name == "transfer-encoding":
                chunked = True
            elif name == "connection":
                lowered = value.lower()
                if "close" in lowered:
                    request.keep_alive = False
                elif "keep-alive" in lowered:
                    request.keep_alive = True
            elif name == "expect":
                request.expect = value.lower()
            if name in keep:
                known = request.headers.get(name)
                request.headers[name] = value if known is None else known + ", " + value
        if chunked:
            raise _Refusal(9)  # 411: chunked
        if length:
            if length > server.max_body:
                request.length = length
                raise _Refusal(10, server.max_body)  # 413: body too large
            request.length = length
        return request

    def take_body(self, request):
        """The request's body into request.body (a bytearray of its own) when all of it is
        in the buffer already (it comes with the head): whether it was (else read_body)."""
        length = request.length
        if request.expect or self.end - self.start < length:
            return False
        body = bytearray(length)
        body[:] = self.view[self.start:self.start + length]
        self.start += length
        request.body = body
        return True

    async def read_body(self, request):
        """The request's body (request.length bytes) into request.body, a bytearray of its
        own."""
        if request.expect == "100-continue":
            self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await self.writer.drain()
        length = request.length
        body = bytearray(length)
        have = min(length, self.end - self.start)
        body[:have] = self.view[self.start:self.start + have]
        self.start += have
        while have < length:
            count = await read_some(self.reader, body, have)
            if not count:
                raise EOFError
            have += count
        request.body = body


Request.length = 0  # class defaults: a request without them costs no heap
Request.expect = ""

# Read whatever their handler kept: the server needs these to frame requests.
_FRAMING = ("content-length", "transfer-encoding", "connection", "expect")
try:  # MicroPython: a bytearray's startswith() takes a str (CPython: TypeError)
    _STR_PREFIX = bytearray(b"a").startswith("a")
except TypeError:
    _STR_PREFIX = False


def _nodelay(writer):
    """Nagle's algorithm off on a connection's socket: an answer leaves at once, not after
    the client's delayed ACK. MicroPython's stream: its socket `s`, with the option numbers
    of Linux, BSD and lwIP (6, 1: the ESP32 port names them, the unix port does not); a
    TLS socket has no options and keeps Nagle. CPython's asyncio sets it on every TCP
    transport itself. (Here, not unet.conn's set_nodelay: a server needs none of the rest
    of that client module, 3 KB of heap.)"""
    try:
        writer.s.setsockopt(6, 1, 1)
    except Exception:  # CPython's stream (no `s`), a TLS socket, a port that refuses
        pass


async def read_some(reader, buf, at, view=None):
    """Read what has come into buf[at:] (`view`: a memoryview of buf, if there is one); the
    count (0 at the end of the stream). (unet.read_into fills a view exactly.)"""
    if hasattr(reader, "readinto"):  # MicroPython: straight into the buffer
        target = (view or memoryview(buf))[at:]
        sock = getattr(reader, "s", None)  # its socket (non-blocking)
        if sock is not None:
            # What has come already, without a turn of the loop (the stream's readinto
            # waits for the poller first): a request's rest is there with its head.
            count = sock.readinto(target)
            if count is not None:  # None: nothing yet
                return count
        while True:
            count = await reader.readinto(target)
            if count is not None:  # None: nothing yet (TLS)
                return count
    data = await reader.read(len(buf) - at)  # CPython
    buf[at:at + len(data)] = data
    return len(data)


class HttpServer:
    """`handler(request, response)` (a coroutine function) answers each request; `keep`:
    the lowercase header names it reads (others are skipped without a copy).

    max_body: the largest body taken (bytes); max_requests: requests being answered at
    once, beyond which a request gets 503 (a streamed response, once started, counts
    among `streams` instead: the handler bounds those); max_connections:
    open connections (idle keep-alive ones are closed first); request_timeout: seconds
    for a request's head and body to arrive; idle_timeout: seconds a kept-alive
    connection may wait for its next request.

    Bounds, each answered without calling the handler and freed at once: a request line
    or header line over MAX_LINE bytes or more than MAX_HEADERS lines (431), a body over
    max_body (413, not read), a chunked body (411: Content-Length is required), a
    request line that is not one (400), an HTTP version other than 1.0/1.1 (505); more
    than max_requests requests at once (503, Retry-After); a head or body not complete
    within request_timeout, or a connection idle for idle_timeout (closed). A connection
    beyond max_connections closes the longest idle one, or is answered 503. (Those
    answers are unet.httpdrefusal's, loaded at the first: no heap for them while clients
    behave.) Every connection's memory is its stream, a read buffer (BUF_START bytes,
    grown to MAX_LINE for a long line) and, while a request is served, the headers kept
    and its body."""

    def __init__(self, handler, keep=(), max_body=16384, max_requests=4, max_connections=8,
                 request_timeout=10, idle_timeout=15):
        self.handler = handler
        self.keep = tuple(keep)
        self.max_body = max_body
        self.max_requests = max_requests
        self.max_connections = max_connections
        self.request_timeout = request_timeout
        self.idle_timeout = idle_timeout
        # The names read (`_texts`) and what a header line is compared with (`_names`): on
        # MicroPython the strs themselves (its bytearray.startswith takes a str: no copies
        # to keep), elsewhere their bytes. Their lengths: a header of another length is
        # skipped unseen.
        texts = self.keep + _FRAMING
        self._texts = texts
        self._names = texts if _STR_PREFIX else tuple(name.encode() for name in texts)
        lengths = {}
        for name in texts:
            lengths[len(name)] = True
        self._lengths = lengths
        self.connections = []
        # A read buffer (and its view) a connection left, for the next: clients of one
        # request per connection do not cost a buffer each.
        self.spare = None
        self.on_closed = None  # called (no arguments) after each connection has ended
        self.active = 0  # requests in the handler now, streams aside
        self.streams = 0  # streamed responses open now
        self.served = 0  # requests answered so far (the handler's or the server's own)
        self.refused = 0  # answered by the server itself (bad input, limits)
        self.port = None
        self._server = None
        self._sweeper = None
        self._stopped = None

    async def start(self, host="0.0.0.0", port=80, backlog=4):
        """Listen; returns the port (port 0: a free one, on CPython)."""
        self._server = await asyncio.start_server(self.serve, host, port, backlog=backlog)
        sockets = getattr(self._server, "sockets", None)
        self.port = sockets[0].getsockname()[1] if sockets else port
        return self.port

    async def run(self, host="0.0.0.0", port=80, backlog=4):
        """Serve until stop() (or cancellation)."""
        if self._server is None:
            await self.start(host, port, backlog)
        self._stopped = asyncio.Event()
        try:
            await self._stopped.wait()
        finally:
            await self.stop()

    async def stop(self):
        """Stop listening (when start() listened) and close every connection."""
        server, self._server = self._server, None
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for connection in self.connections[:]:
            if connection.task is not None:
                connection.task.cancel()
        if server is not None:
            await close_quietly(server)
        if self._stopped is not None:
            self._stopped.set()
        # Loaded at a refusal and at an answer other than 200: the next one loads them again.
        forget_modules("unet.httpdrefusal", "unet.httpdstatus")

    async def _sweep(self):
        """Once a second: close what outlived its deadline, keep quiet streams alive. Ends
        by itself once no connection is left (serve() starts it again), so an idle server
        keeps no task. (Its task runs it through await_then_drop, as the other tasks of
        this module do: an ended task keeps nothing of the server or of this code.)"""
        while self.connections:
            await asyncio.sleep(_SWEEP_MS / 1000)
            self._sweep_once(ticks_ms())
        self._sweeper = None

    def _sweep_once(self, now):
        for connection in self.connections[:]:
            if connection.deadline is not None and ticks_diff(now, connection.since) > connection.deadline:
                _log.info("closing a connection: %s too long", "idle" if connection.state == _IDLE else "request")
                connection.deadline = None
                if connection.task is not None:
                    connection.task.cancel()
            response = connection.response
            if (response is not None and response.streaming and response.keepalive
                    and ticks_diff(now, response._last_write) > response.keepalive_s * 1000):
                response._last_write = now
                asyncio.create_task(await_then_drop(response._keep_alive()))

    def _make_room(self):
        """Close the longest idle connection (between requests, or silent since it came
        for SILENT_MS); False when none is."""
        idle = None
        now = ticks_ms()
        for connection in self.connections:
            if connection.state == _IDLE and (
                    connection.requests or ticks_diff(now, connection.since) >= SILENT_MS) and (
                    idle is None or ticks_diff(idle.since, connection.since) > 0):
                idle = connection
        if idle is None:
            return False
        idle.task.cancel()
        return True

    async def serve(self, reader, writer):
        """Serve one connection until it ends (start() hands it each it accepts; a
        listener of one's own may too). Then on_closed(), if set."""
        if self._sweeper is None:  # deadlines matter once there is a connection
            self._sweeper = asyncio.create_task(await_then_drop(self._sweep()))
        connection = _Connection(self, reader, writer)
        connection.task = asyncio.current_task()
        self.connections.append(connection)
        _nodelay(writer)
        full = len(self.connections) > self.max_connections and not self._make_room()
        abort = True  # cut off (a deadline, room for another, stop()): unsent data is dropped
        try:
            # The requests in turn (here, not in a coroutine of its own: a frame each
            # connection).
            while True:
                try:
                    connection.enter(_IDLE, self.idle_timeout * 1000)
                    if connection.start == connection.end:
                        # What has come already; else wait (arrived()), and only then (a
                        # coroutine frame for nothing otherwise).
                        count = connection.read_now()
                        if count == 0 or count is None and not await connection.arrived():
                            break  # the client closed between requests
                    request = await connection.request(self.keep)
                    if full or self.active >= self.max_requests:
                        raise _Refusal(11, self.max_requests)  # 503: busy
                    if request.length and not connection.take_body(request):
                        await connection.read_body(request)
                except _Refusal as refusal:
                    await self._refuse(connection, refusal)
                    break
                except (EOFError, OSError):
                    break  # the client left mid-request: nothing to answer
                connection.requests += 1
                response = Response(connection, request.keep_alive)
                connection.response = response
                connection.enter(_SERVING, None)
                self.active += 1
                try:
                    await self.handler(request, response)
                    if not response.sent:
                        raise RuntimeError("the handler sent no response")
                    await response.flush()
                except Exception as e:
                    if not response.sent and not response.gone:
                        _log.error("%s %s failed: %r", request.method, request.path, e)
                        response.keep_alive = False
                        try:
                            await response.send(500)
                        except Exception:
                            pass
                    break
                finally:
                    if response.streaming:
                        self.streams -= 1
                    else:
                        self.active -= 1
                    self.served += 1
                    connection.response = None
                request = None
                if not response.keep_alive or response.gone:
                    break
            abort = False
        except asyncio.CancelledError:
            pass
        except Exception as e:  # a bug of ours must not stop the server
            _log.error("connection failed: %r", e)
        finally:
            connection.response = None
            if connection in self.connections:
                self.connections.remove(connection)
            if len(connection.buf) == BUF_START and self.spare is None:  # for the next one
                self.spare = (connection.buf, connection.view)
                # Its only view now: CPython will not grow a buffer another view looks at,
                # and a connection may outlive its task a while (a reference cycle).
                connection.buf = connection.view = None
            # unet.close_quietly's steps, here: a coroutine frame each connection otherwise
            try:
                transport = getattr(writer, "transport", None)  # CPython only
                if abort and transport is not None:
                    transport.abort()
                else:
                    writer.close()
                await writer.wait_closed()
            except Exception:  # already reset by the peer: nothing left to release
                pass
            if self.on_closed is not None:
                self.on_closed()

    async def _refuse(self, connection, refusal):
        """Answer what the server refused itself, and close (unet.httpdrefusal: loaded at
        the first refusal)."""
        from .httpdrefusal import refuse

        await refuse(self, connection, Response(connection, False), read_some, *refusal.args)
