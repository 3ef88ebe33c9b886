"""Networking pieces shared by unet.ws and unet.http: TCP/TLS connections as asyncio
streams (TLS verified by default: Trust; TCP_NODELAY where reachable), and reading an
HTTP response head; URLs are unet.url's. The TLS code itself (certificates, contexts) is
in unet.tlscontext, loaded only by a device that uses TLS.
Runs unchanged on CPython 3.11+ and MicroPython 1.24+."""

import asyncio

from umcp.compat import const

# (Theirs too: conn.close_quietly, conn.read_exactly, conn.Trust work as before.)
from . import Trust, close_quietly, read_exactly, read_into, trust  # noqa: F401

_TLS_SCHEMES = const(("wss", "https"))
_MAX_LINE = const(4096)  # longest status, header or chunk-size line we accept
_LINE_START = const(256)  # a line buffer's first size: it doubles up to _MAX_LINE as needed
_MAX_HEADERS = const(64)  # header lines, repeated names included


class HttpError(Exception):
    """The server answered with an HTTP status we cannot use (e.g. 401)."""

    def __init__(self, status, reason=""):
        super().__init__("HTTP %d %s" % (status, reason))
        self.status = status
        self.reason = reason


def is_tls(scheme):
    return scheme in _TLS_SCHEMES


def host_header(scheme, host, port):
    """The Host header value: the port only when it is not the scheme's default."""
    return host if port == (443 if scheme in _TLS_SCHEMES else 80) else "%s:%d" % (host, port)


async def open_connection(host, port, tls=False, ca=None, timeout=10):
    """(reader, writer) for a TCP connection, wrapped in TLS when `tls` is true, with
    TCP_NODELAY set where the port lets us (see set_nodelay). `ca`: a Trust, or what
    Trust(ca) takes (None: the shipped roots); verified unless the Trust says otherwise.

    CPython refuses a certificate here (ssl.SSLCertVerificationError, naming the cause);
    MicroPython does the TLS handshake on the first read/write, so a bad certificate
    shows up there, as a ValueError with mbedTLS's reason ("The certificate validity has
    expired", "... Common Name (CN) does not match ...", "... not correctly signed by the
    trusted CA")."""
    ctx = None
    if tls:  # the TLS code is loaded by the first wss:// or https:// connection
        from .tlscontext import client_context

        ctx = client_context(trust(ca), "%s:%d" % (host, port))
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=ctx),
                                            timeout)
    set_nodelay(writer)
    return reader, writer


def set_nodelay(writer):
    """Turn Nagle's algorithm off on the stream's socket -> whether it was set.

    CPython: the transport's socket (asyncio sets it already; this makes sure).
    MicroPython: the stream's socket `s`; a TLS stream's is the TLS socket, which has no
    options, so TLS connections keep Nagle there (each frame leaves in one write anyway).
    The ESP32 port names IPPROTO_TCP and TCP_NODELAY; the unix port names neither but
    passes options to Linux, whose values (6, 1) are those of BSD and lwIP too."""
    sock = getattr(writer, "s", None)  # MicroPython's asyncio Stream
    if sock is None and hasattr(writer, "transport"):  # CPython
        sock = writer.get_extra_info("socket")
    setsockopt = getattr(sock, "setsockopt", None)
    if setsockopt is None:
        return False
    import socket
    import sys

    level = getattr(socket, "IPPROTO_TCP", None)
    option = getattr(socket, "TCP_NODELAY", None)
    if level is None or option is None:
        if sys.platform != "linux":
            return False
        level, option = 6, 1
    try:
        setsockopt(level, option, 1)
        return True
    except (OSError, TypeError, ValueError):  # not a TCP socket, or the port refuses
        return False


def request_head(method, path, host, headers):
    """Request line and headers as bytes; `headers` is (name, value) pairs."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: " + host]
    for name, value in headers:
        value = str(value)
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            raise ValueError("line break in HTTP header " + name)  # header injection
        lines.append(name + ": " + value)
    lines.append("\r\n")
    return "\r\n".join(lines).encode()


async def read_line(reader, buf):
    """One line of an HTTP head or of chunked framing (at most _MAX_LINE bytes), as text
    without its line break. `buf` (a bytearray) grows in place for a longer line.

    Read a byte at a time into the caller's `buf`: memory stays bounded (MicroPython's
    readline() has no limit, so an endless line would exhaust the heap) and nothing past
    the line is consumed (the body or the first WebSocket frame may share its segment)."""
    n = 0
    while True:
        byte = await reader.read(1)
        if not byte:
            raise EOFError("connection closed inside an HTTP response")
        if byte == b"\n":
            return str(memoryview(buf)[:n], "utf-8").strip()
        if n == len(buf):
            if n >= _MAX_LINE:
                raise ValueError("HTTP line too long")
            buf.extend(bytes(min(n, _MAX_LINE - n)))
        buf[n] = byte[0]
        n += 1


def line_buffer():
    """A buffer for read_line: small, as most lines are; read_line grows it for a long one
    (a fixed 4 KB buffer at each connection needs 4 KB in one piece of a fragmented heap)."""
    return bytearray(_LINE_START)


async def read_response_head(reader):
    """Read 'HTTP/1.1 200 OK' and the headers -> (status, reason, {lowercase name: value})."""
    buf = line_buffer()
    parts = (await read_line(reader, buf)).split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ValueError("bad HTTP status line")
    headers = {}
    for _ in range(_MAX_HEADERS + 1):  # + 1: the blank line ending the head
        line = await read_line(reader, buf)
        if not line:
            return int(parts[1]), parts[2] if len(parts) > 2 else "", headers
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError("bad HTTP header: " + line[:40])
        headers[name.strip().lower()] = value.strip()
    raise ValueError("too many HTTP header lines")
