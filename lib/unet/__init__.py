"""Network clients for the device: `conn` (TCP/TLS streams, HTTP heads), `url` (URLs split,
each time), `tlscontext` (CA certificates and TLS client contexts, loaded by the first TLS
connection or Trust with certificates), `http` (multipart and JSON POST), `download` (the streamed GET), `httpcore`
(what those two share), `ws` (WebSocket; `wshandshake`, its opening handshake, loaded per
connection; `wsclose`, its closing one, loaded as a connection ends), `mqtt` (MQTT 3.1.1; `mqttopen`, its CONNECT and SUBSCRIBE, loaded per connection),
`roots` (the CA roots TLS trusts by default, imported by tlscontext only for a verified
connection), `reconnect` (what every link that reconnects shares); and one server, `httpd` (a
small HTTP/1.1 server: the board's HTTP MCP endpoint is one handler of it; `httpdrefusal`, the
requests it refuses itself, and `httpdstatus`, its status lines but 200 OK, each loaded at the
first use), and `mdns`, the mDNS responder of that endpoint's service record. Import the module
you need; this file imports nothing, so a board loads only what it uses. It holds what lives
longer than a connection: the stream helpers every client uses while connected (close_quietly,
read_into, read_exactly: a connected WebSocket or MQTT client needs nothing of conn, which a link
loads per connection), Trust, whom TLS trusts (an object the application keeps; its class must
outlive conn), and bearer(), the Authorization value a link or an upload sends."""


async def close_quietly(writer, abort=False):
    """Close a stream or a server, ignoring errors; `abort` drops a stream's unsent data
    instead of flushing it first (CPython would otherwise wait forever on a peer that
    stopped reading)."""
    try:
        transport = getattr(writer, "transport", None)  # CPython only
        if abort and transport is not None:
            transport.abort()
        else:
            writer.close()
        await writer.wait_closed()
    except Exception:  # already reset by the peer: nothing left to release
        pass


async def read_exactly(reader, n):
    """The next `n` bytes of `reader` as a bytearray (callers may change it in place);
    EOFError if the stream ends first."""
    if not hasattr(reader, "readinto"):  # CPython streams
        return bytearray(await reader.readexactly(n))
    buf = bytearray(n)  # MicroPython: fill in place, no growing bytes
    await read_into(reader, memoryview(buf))
    return buf


async def read_into(reader, view):
    """Fill `view` (a memoryview of a bytearray) from `reader`; EOFError if the stream
    ends first. On MicroPython it reads in place (a buffer allocated beforehand: nothing
    of the size of the data is allocated here)."""
    n = len(view)
    if not hasattr(reader, "readinto"):  # CPython streams
        view[:] = await reader.readexactly(n)
        return
    got = 0
    while got < n:
        count = await reader.readinto(view[got:])
        if count == 0:
            raise EOFError
        if count:  # None: a TLS record is not complete yet
            got += count


class Trust:
    """Whom wss:// and https:// connections trust.

    verify (the default): the server's certificate must chain to one of the roots the
    firmware ships (unet.roots) or of `ca`, be valid now, and name the host we asked for.
    verify=False: TLS without any check, with a warning at every connection (only when
    config.json says "tls_verify": false). `ca`: the user's own CA certificates, added
    to the shipped roots: PEM text or bytes holding one certificate or several, DER bytes
    of one, a file path, or a list of those. Parsed here (unet.tlscontext.ca_ders), so a
    broken one fails now."""

    def __init__(self, ca=None, verify=True):
        if verify is not True and verify is not False:
            raise ValueError("tls_verify must be true or false, not %r" % (verify,))
        self.verify = verify
        self.cas = []
        if ca is not None:
            from .tlscontext import ca_ders  # the certificate code only where there are some

            self.cas = ca_ders(ca)


def bearer(token):
    """Authorization value; like the reference, a bare token gets the "Bearer " scheme."""
    return token if " " in token else "Bearer " + token


def trust(ca):
    """`ca` as a Trust: a Trust as it is; None or certificates: verified (see Trust)."""
    return ca if isinstance(ca, Trust) else Trust(ca)
