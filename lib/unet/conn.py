# Networking pieces shared by wsclient and httpclient: URL parsing, TCP/TLS
# connections as asyncio streams, and reading an HTTP response head.
# Runs unchanged on CPython 3.11+ and MicroPython 1.24+.
import asyncio
import binascii

from umcp.compat import const, get_logger

_DEFAULT_PORTS = {"ws": 80, "wss": 443, "http": 80, "https": 443}
_TLS_SCHEMES = ("wss", "https")
_PEM_BEGIN = b"-----BEGIN CERTIFICATE-----"
_MAX_LINE = const(4096)  # longest status, header or chunk-size line we accept
_LINE_START = const(256)  # a line buffer's first size: it doubles up to _MAX_LINE as needed
_MAX_HEADERS = const(64)  # header lines, repeated names included

_log = get_logger("netutil")


class HttpError(Exception):
    """The server answered with an HTTP status we cannot use (e.g. 401)."""

    def __init__(self, status, reason=""):
        super().__init__("HTTP %d %s" % (status, reason))
        self.status = status
        self.reason = reason


def parse_url(url):
    """'wss://host:8443/p?q' -> ('wss', 'host', 8443, '/p?q'); ValueError if unusable."""
    if not isinstance(url, str):
        raise ValueError("URL must be a string")
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORTS:
        raise ValueError("unsupported URL (want ws, wss, http or https): " + url)
    rest = rest.partition("#")[0]
    end = len(rest)
    for ch in "/?":
        i = rest.find(ch)
        if 0 <= i < end:
            end = i
    netloc, path = rest[:end], rest[end:]
    if not path.startswith("/"):
        path = "/" + path
    host, colon, port = netloc.partition(":")
    if not host or "@" in netloc or "[" in netloc or " " in netloc:
        raise ValueError("bad host in URL: " + url)
    if colon:
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError("bad port in URL: " + url)
        port = int(port)
    else:
        port = _DEFAULT_PORTS[scheme]
    return scheme, host, port, path


def is_tls(scheme):
    return scheme in _TLS_SCHEMES


def host_header(scheme, host, port):
    """The Host header value: the port only when it is not the scheme's default."""
    return host if port == _DEFAULT_PORTS[scheme] else "%s:%d" % (host, port)


def ca_der(ca):
    """The CA certificate as DER bytes, from PEM text, PEM or DER bytes, or a file path.

    MicroPython's ssl takes one DER certificate only, so both runtimes get that."""
    if isinstance(ca, str):
        if ca.startswith("-----"):
            ca = ca.encode()
        else:
            with open(ca, "rb") as f:
                ca = f.read()
    begin = ca.find(_PEM_BEGIN)
    if begin < 0:
        return ca
    end = ca.find(b"-----END", begin)
    if end < 0:
        raise ValueError("broken PEM certificate")
    return binascii.a2b_base64(ca[begin + len(_PEM_BEGIN) : end])


def _tls_context(ca):
    """A client TLS context; verifies the server against `ca` (see ca_der) when given."""
    import ssl

    if ca is None:
        _log.warning("no CA configured: TLS WITHOUT certificate verification")
    else:
        ca = ca_der(ca)
    if hasattr(ssl, "create_default_context"):  # CPython
        if ca is not None:
            return ssl.create_default_context(cadata=ca)
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # MicroPython: CERT_NONE by default
    if ca is not None:
        ctx.load_verify_locations(cadata=ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


async def open_connection(host, port, tls=False, ca=None, timeout=10):
    """(reader, writer) for a TCP connection, wrapped in TLS when `tls` is true.

    MicroPython does the TLS handshake on the first read/write, so a bad
    certificate shows up there as an OSError rather than here."""
    ctx = _tls_context(ca) if tls else None
    return await asyncio.wait_for(asyncio.open_connection(host, port, ssl=ctx), timeout)


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


async def close_quietly(writer, abort=False):
    """Close a stream, ignoring errors; `abort` drops unsent data instead of flushing it
    first (CPython would otherwise wait forever on a peer that stopped reading)."""
    try:
        transport = getattr(writer, "transport", None)  # CPython only
        if abort and transport is not None:
            transport.abort()
        else:
            writer.close()
        await writer.wait_closed()
    except Exception:  # already reset by the peer: nothing left to release
        pass


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
