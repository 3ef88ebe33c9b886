"""TLS for unet's clients: the CA certificates a Trust holds, and the client context a
wss:// or https:// connection is made with. Loaded by the first Trust with certificates
of its own or the first TLS connection: a device that speaks plain ws:// and http://
never holds this code.
Runs unchanged on CPython 3.11+ and MicroPython 1.24+."""

import binascii

from umcp.compat import get_logger

_PEM_BEGIN = b"-----BEGIN CERTIFICATE-----"

_log = get_logger("unet")


def ca_ders(ca):
    """The CA certificates in `ca` as a list of DER bytes, one per certificate: from PEM
    text, PEM or DER bytes, a file path, or a list of those. MicroPython's TLS takes one
    DER certificate per load_verify_locations() call, so both runtimes get them so."""
    if isinstance(ca, (list, tuple)):
        ders = []
        for item in ca:
            ders.extend(ca_ders(item))
        return ders
    if isinstance(ca, str):
        if ca.lstrip().startswith("-----"):
            ca = ca.encode()
        else:
            try:
                with open(ca, "rb") as f:
                    ca = f.read()
            except OSError as e:  # a config's path: said as its mistake, not a traceback
                raise ValueError("CA certificate file %s cannot be read: %s" % (ca, e))
    ca = bytes(ca)
    begin = ca.find(_PEM_BEGIN)
    if begin < 0:
        if not ca or ca[0] != 0x30:  # a DER certificate is an ASN.1 SEQUENCE
            raise ValueError("CA certificate is neither PEM nor DER")
        return [ca]
    ders = []
    while begin >= 0:
        end = ca.find(b"-----END", begin)
        if end < 0:
            raise ValueError("broken PEM certificate")
        try:
            ders.append(binascii.a2b_base64(ca[begin + len(_PEM_BEGIN) : end]))
        except ValueError:
            raise ValueError("broken PEM certificate")
        begin = ca.find(_PEM_BEGIN, end)
    return ders


def _tls_module():
    try:
        import ssl  # CPython; MicroPython's micropython-lib wrapper (frozen on ESP32)
    except ImportError:  # a MicroPython with only the built-in tls module
        import tls as ssl
    return ssl


def client_context(trust, where):
    """A client TLS context for `where` (host:port, for the warning) under `trust` (a
    unet.Trust)."""
    ssl = _tls_module()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if not trust.verify:
        _log.warning("TLS to %s WITHOUT certificate verification (config.json: tls_verify "
                     "is false): anyone on the path can read and change this traffic", where)
        if hasattr(ctx, "check_hostname"):  # CPython: before verify_mode
            ctx.check_hostname = False
        try:
            ctx.verify_mode = ssl.CERT_NONE
        except AttributeError:  # axTLS: never verifies anyway
            pass
        return ctx
    if not hasattr(ctx, "load_verify_locations"):
        # micropython-x86 and other axTLS builds: no certificate checks at all.
        raise OSError("this MicroPython's TLS cannot verify certificates (axTLS): use an "
                      "mbedTLS build, or set tls_verify false in config.json")
    from .roots import ROOTS

    for der in trust.cas + list(ROOTS):
        try:
            ctx.load_verify_locations(cadata=der)
        except TypeError:  # the bare tls module takes it positionally
            ctx.load_verify_locations(der)
    ctx.verify_mode = ssl.CERT_REQUIRED  # MicroPython 1.22 and older: CERT_NONE by default
    # CPython's PROTOCOL_TLS_CLIENT checks the host name; MicroPython's mbedTLS checks the
    # server_hostname asyncio.open_connection passes (the host we connect to).
    return ctx
