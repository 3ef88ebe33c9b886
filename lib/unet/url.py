"""URL parsing for the network clients: parse_url(), loaded where a URL is checked or
split (a link's URL at boot, an upload's, a download's, each HTTP request's) and dropped
after, so that a WebSocket reconnection, which uses the parts its link kept, loads only
unet.conn. Runs unchanged on CPython 3.11+ and MicroPython 1.24+."""

from umcp.compat import const

_SCHEMES = const(("ws", "wss", "http", "https"))
_TLS_SCHEMES = const(("wss", "https"))


def parse_url(url):
    """'wss://host:8443/p?q' -> ('wss', 'host', 8443, '/p?q'); ValueError if unusable."""
    if not isinstance(url, str):
        raise ValueError("URL must be a string")
    for i in range(len(url)):
        if ord(url[i]) <= 0x20 or url[i] == "\x7f":
            # A space or a line break would end the request line and add header lines of
            # the URL's choosing to our own request: refused wherever it sits.
            raise ValueError("URL has a space or control character at position %d: %r" % (i, url))
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _SCHEMES:
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
    if not host or "@" in netloc or "[" in netloc:
        raise ValueError("bad host in URL: " + url)
    if colon:
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError("bad port in URL: " + url)
        port = int(port)
    else:
        port = 443 if scheme in _TLS_SCHEMES else 80
    return scheme, host, port, path
