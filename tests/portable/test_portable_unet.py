# Pure logic of the network stack (no sockets): runs under pytest and inside MicroPython.
# (The Sec-WebSocket-Accept check needs hashlib.sha1, which the WebAssembly build lacks:
# it is in tests/net/test_unet_ws.py.)
import asyncio
import binascii
import struct

import unet.conn
import unet.tlscontext
import unet.url
import unet.ws
import unet.wsclose as wsclose  # (by its own name: a close forgets unet's attribute)
from portable_support import raises



def test_parse_url_defaults_and_parts():
    assert unet.url.parse_url("ws://example.com") == ("ws", "example.com", 80, "/")
    assert unet.url.parse_url("wss://api.tenclass.net/xiaozhi/v1/") == (
        "wss", "api.tenclass.net", 443, "/xiaozhi/v1/")
    assert unet.url.parse_url("http://192.168.1.5:8003/mcp/vision/explain") == (
        "http", "192.168.1.5", 8003, "/mcp/vision/explain")
    assert unet.url.parse_url("HTTPS://host?a=1&b=2") == ("https", "host", 443, "/?a=1&b=2")
    assert unet.url.parse_url("ws://h:1/p?q=1#frag") == ("ws", "h", 1, "/p?q=1")


def test_parse_url_rejects_garbage():
    for url in ("", "example.com", "ftp://host/", "ws://", "ws://:80/", "ws://h:0/",
                "ws://h:65536/", "ws://h:x/", "ws://user@h/", "ws://[::1]:80/", 42):
        assert raises(ValueError, unet.url.parse_url, url), url


def test_parse_url_refuses_spaces_and_control_characters():
    # Each would let a URL write header lines of its own into the device's request.
    for bad in (" ", "\t", "\r", "\n", "\r\n", "\x00", "\x1f", "\x7f"):
        for url in ("http://h/fw" + bad + "x.bin", "http://h/fw.bin?a=" + bad,
                    "http://h" + bad + "/fw.bin", "ws://h/p" + bad):
            try:
                unet.url.parse_url(url)
            except ValueError as e:
                assert "space or control character" in str(e), str(e)
            else:
                assert False, "accepted %r" % url
    smuggled = "http://h/fw.bin HTTP/1.1\r\nX-Evil: 1\r\n"
    assert raises(ValueError, unet.url.parse_url, smuggled)
    assert unet.url.parse_url("http://h/a%20b?c=%0D") == ("http", "h", 80, "/a%20b?c=%0D")
    assert unet.url.parse_url("http://h/\u4e2d") == ("http", "h", 80, "/\u4e2d")


def test_host_header_shows_only_non_default_ports():
    assert unet.conn.host_header("wss", "h", 443) == "h"
    assert unet.conn.host_header("ws", "h", 8000) == "h:8000"


def test_request_head_and_header_injection():
    head = unet.conn.request_head("GET", "/p", "h", [("A", "1"), ("B", 2)])
    assert head == b"GET /p HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n"
    assert raises(ValueError, unet.conn.request_head, "GET", "/", "h", [("A", "x\r\nEvil: 1")])


def _pem(der):
    return (b"-----BEGIN CERTIFICATE-----\n" + binascii.b2a_base64(der)
            + b"-----END CERTIFICATE-----\n")


def test_ca_ders_from_pem_bundles_der_and_lists():
    der = b"\x30\x82\x01\x0a" + bytes(range(200))
    other = b"\x30\x82\x00\x05" + b"other"
    pem = b"junk before\n" + _pem(der)
    assert unet.tlscontext.ca_ders(pem) == [der]
    assert unet.tlscontext.ca_ders(pem[12:].decode()) == [der]
    assert unet.tlscontext.ca_ders(der) == [der]
    bundle = _pem(der) + b"# a comment between them\n" + _pem(other)
    assert unet.tlscontext.ca_ders(bundle.decode()) == [der, other]
    assert unet.tlscontext.ca_ders([bundle, other, _pem(der).decode()]) == [der, other, other, der]
    assert raises(ValueError, unet.tlscontext.ca_ders, pem[:40])
    assert raises(ValueError, unet.tlscontext.ca_ders, b"not a certificate")
    try:  # a path that is not there: a ValueError naming it (config.json's "ca")
        unet.tlscontext.ca_ders("/no/such/ca.pem")
    except ValueError as e:
        assert str(e).startswith("CA certificate file /no/such/ca.pem cannot be read: "), str(e)
    else:
        assert False, "no ValueError"


def test_trust_is_verified_unless_said_otherwise_explicitly():
    assert unet.conn.Trust().verify is True and unet.conn.Trust().cas == []
    assert unet.conn.Trust(None, False).verify is False
    for loose in ("false", 0, None, "no"):
        assert raises(ValueError, unet.conn.Trust, None, loose), loose
    der = b"\x30\x82\x00\x03abc"
    trust = unet.conn.Trust(_pem(der).decode())
    assert trust.cas == [der] and unet.conn.trust(trust) is trust
    assert unet.conn.trust(None).verify is True
    assert raises(ValueError, unet.conn.Trust, "-----BEGIN CERTIFICATE-----\nAAAA")


def _mask_slowly(data, key):
    return bytes(b ^ key[i % 4] for i, b in enumerate(data))


def _mask(data, key):
    """What a frame's payload becomes: unet.ws masks it in place, in its frame buffer."""
    buf = bytearray(data)
    unet.ws._mask_into(buf, 0, len(buf), unet.ws._key_int(key))
    return bytes(buf)


def test_mask_matches_the_per_byte_definition():
    key = b"\x01\x80\xff\x5a"
    data = bytes(range(256)) * 3
    for n in (0, 1, 3, 4, 5, 127, 512, 768):
        assert _mask(data[:n], key) == _mask_slowly(data[:n], key), n
    assert _mask(memoryview(data)[5:9], key) == _mask_slowly(data[5:9], key)
    assert _mask(b"\x00\x00\x00", key) == key[:3]  # leading zero bytes survive
    assert _mask(_mask(data, key), key) == data


def test_frame_header_lengths():
    key = b"abcd"
    assert unet.ws.frame_header(1, 5, key) == b"\x81\x85abcd"
    assert unet.ws.frame_header(2, 126, key) == b"\x82\xfe\x00\x7eabcd"
    assert unet.ws.frame_header(2, 65535, key) == b"\x82\xfe\xff\xffabcd"
    assert unet.ws.frame_header(2, 65536, key) == b"\x82\xff" + struct.pack("!Q", 65536) + key
    assert unet.ws.frame_header(0, 0, key, False) == b"\x00\x80abcd"


def _close_failure(data):
    """The close code unet.ws answers a close frame carrying `data` with (None: accepted)."""
    try:
        wsclose.parse_close(data)
    except wsclose.BadClose as e:
        return e.code
    return None


def test_close_payload_round_trip():
    assert wsclose.parse_close(wsclose.close_payload(1009, "too big")) == (1009, "too big")
    assert wsclose.close_payload(1005) == b""
    assert wsclose.parse_close(b"") == (1005, "")
    assert len(wsclose.close_payload(1000, "x" * 200)) == 125  # control frame limit


def test_close_reason_is_cut_at_a_character_boundary():
    for char, kept in (("\u00e9", 61), ("\u4e2d", 40), ("\U0001f600", 30)):
        payload = wsclose.close_payload(1000, "a" + char * 100)
        assert len(payload) <= 125
        assert wsclose.parse_close(payload) == (1000, "a" + char * kept), char


def test_bad_close_frames_are_protocol_errors():
    for code in (0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535):
        assert _close_failure(struct.pack("!H", code)) == 1002, code
    for code in (1000, 1001, 1003, 1007, 1011, 1014, 3000, 4999):
        assert _close_failure(struct.pack("!H", code) + b"ok") is None, code
    assert _close_failure(b"\x03") == 1002  # a code is two bytes
    assert _close_failure(b"\x03\xe8\xff") == 1007  # the reason is not UTF-8
    assert _close_failure(b"\x03\xe8\xe4\xb8") == 1007  # ... it ends mid-character


# RFC 3629 forbids these though each lead byte has its continuation bytes (RFC 6455 8.1: 1007):
# an encoded UTF-16 surrogate, overlong forms, code points above U+10FFFF.
_NOT_UTF8 = (b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf",
             b"\xe0\x9f\xbf", b"\xf0\x80\x80\xaf", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
             b"\xf5\x80\x80\x80", b"\xf7\xbf\xbf\xbf", b"\xff", b"\xe2\x82")
# ... and their neighbours, which are UTF-8.
_UTF8 = (b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80",
         b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xc3\xa9", b"")


def test_encoded_surrogates_and_overlong_forms_in_a_close_reason_are_1007():
    for wrong in _NOT_UTF8:
        assert _close_failure(b"\x03\xe8a" + wrong + b"z") == 1007, wrong
    for right in _UTF8:
        assert wsclose.parse_close(b"\x03\xe8a" + right + b"z") == (1000, str(b"a" + right + b"z", "utf-8")), right


class _Urandom:
    """os.urandom for the WebAssembly build, which lacks it (and sockets): masking keys."""

    @staticmethod
    def urandom(n):
        import random

        return bytes(random.getrandbits(8) for _ in range(n))


if not hasattr(unet.ws.os, "urandom"):
    unet.ws.os = _Urandom


class _RecordingWriter:
    """A stream writer that keeps each write() call's bytes apart."""

    def __init__(self):
        self.writes = []

    def write(self, data):
        self.writes.append(bytes(data))

    async def drain(self):
        pass


class _SlowWriter(_RecordingWriter):
    """Its drain() waits until `go` is set: a peer reading slowly."""

    def __init__(self):
        super().__init__()
        self.go = asyncio.Event()
        self.closed = False

    async def drain(self):
        await self.go.wait()

    def close(self):
        self.closed = True


def _unframe(data):
    """One masked client frame -> (first byte, payload, what follows it)."""
    b0, b1 = data[0], data[1]
    assert b1 & 0x80, "client frames are masked"
    length, pos = b1 & 0x7F, 2
    if length == 126:
        length, pos = struct.unpack("!H", data[2:4])[0], 4
    elif length == 127:
        length, pos = struct.unpack("!Q", data[2:10])[0], 10
    key = data[pos:pos + 4]
    pos += 4
    payload = bytes(b ^ key[i % 4] for i, b in enumerate(data[pos:pos + length]))
    assert len(payload) == length
    return b0, payload, data[pos + length:]


async def test_a_frame_leaves_in_one_write_header_and_payload_together():
    writer = _RecordingWriter()
    ws = unet.ws.WebSocket(None, writer, 32768)
    fits = "y" * (unet.ws.FRAME_CHUNK - 10)
    for message, opcode in (("hi", 0x81), (["{\"a\":", b"1", "}"], 0x81), (b"\x00\x01", 0x82),
                            (fits, 0x81), (["x" * 10, fits], 0x81)):
        writer.writes.clear()
        await ws.send(message)
        assert len(writer.writes) == 1, (len(writer.writes), message)
        b0, payload, rest = _unframe(writer.writes[0])
        expected = message if isinstance(message, (str, bytes)) else "".join(
            p.decode() if isinstance(p, bytes) else p for p in message)
        if isinstance(expected, str):
            expected = expected.encode()
        assert (b0, payload, rest) == (opcode, expected, b""), message
    writer.writes.clear()
    await ws.ping()
    assert len(writer.writes) == 1 and _unframe(writer.writes[0]) == (0x89, b"", b"")


async def test_a_long_frame_streams_in_chunks_with_the_header_in_the_first():
    writer = _RecordingWriter()
    ws = unet.ws.WebSocket(None, writer, 32768)
    text = "".join(chr(ord("a") + i % 26) for i in range(3 * unet.ws.FRAME_CHUNK + 7))
    await ws.send(["<", text, ">"])
    assert len(writer.writes) == 4
    assert [len(w) for w in writer.writes[1:]] == [unet.ws.FRAME_CHUNK, unet.ws.FRAME_CHUNK, 9]
    b0, payload, rest = _unframe(b"".join(writer.writes))
    assert (b0, payload, rest) == (0x81, ("<" + text + ">").encode(), b"")


async def test_a_send_cancelled_inside_a_frame_ends_the_connection():
    # The rest of the frame can never follow: the next frame would be read as its payload.
    writer = _SlowWriter()
    ws = unet.ws.WebSocket(None, writer, 32768)
    sender = asyncio.create_task(ws.send("z" * (2 * unet.ws.FRAME_CHUNK)))
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(writer.writes) == 1  # the header and the first chunk are out
    sender.cancel()
    try:
        await sender
    except asyncio.CancelledError:
        pass
    assert writer.closed
    try:
        await ws.send("next")
    except unet.ws.ConnectionClosed as e:
        assert e.code == unet.ws.CLOSE_ABNORMAL
    else:
        raise AssertionError("a message went out behind half a frame")
    assert len(writer.writes) == 1


class _FrameReader:
    """A stream reader holding the bytes a server sent: frames, then the end of the stream."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    async def readexactly(self, n):
        if self.pos + n > len(self.data):
            raise EOFError
        self.pos += n
        return self.data[self.pos - n:self.pos]

    async def read(self, n):
        self.pos += n
        return self.data[self.pos - n:self.pos]


class _ClosingWriter(_RecordingWriter):
    def close(self):
        pass

    async def wait_closed(self):
        pass


def _text_frame(payload):
    """An unmasked (server) text frame."""
    if len(payload) < 126:
        return bytes((0x81, len(payload))) + payload
    return b"\x81\x7e" + struct.pack("!H", len(payload)) + payload


async def _text_message(payload, method):
    """What WebSocket.recv() or .receive() (`method`) makes of a text message carrying
    `payload`: ("text", the text) or ("closed", our close code, the code sent)."""
    writer = _ClosingWriter()
    ws = unet.ws.WebSocket(_FrameReader(_text_frame(payload)), writer, 32768)
    try:
        got = await getattr(ws, method)()
    except unet.ws.ConnectionClosed as e:
        sent = [_unframe(w) for w in writer.writes]
        assert len(sent) == 1 and sent[0][0] == 0x88, sent
        return "closed", e.code, struct.unpack("!H", sent[0][1][:2])[0]
    assert writer.writes == []
    if method == "receive":
        assert got[0] is True and bytes(got[1]) == payload
        return "text", str(payload, "utf-8")
    return "text", got


async def test_the_end_of_a_connection_is_loaded_for_it_and_forgotten_after():
    # unet.wsclose holds the closing handshake: on the heap only while a connection ends
    # (umcp.compat.FORGET: on MicroPython; CPython keeps every module).
    import sys

    from umcp.compat import FORGET

    assert await _text_message(b"\xff", "receive") == ("closed", 1007, 1007)
    assert ("unet.wsclose" in sys.modules) is not FORGET


async def test_encoded_surrogates_and_overlong_forms_in_a_text_message_close_with_1007():
    # Also past the first piece the check decodes (256 bytes), after other non-ASCII.
    long = b"\xc3\xa9" + b"x" * 300
    for method in ("recv", "receive"):
        for wrong in _NOT_UTF8:
            for payload in (wrong, b"ab" + wrong + b"cd", long + wrong, b"\xe4\xb8\xad" + wrong):
                assert await _text_message(payload, method) == ("closed", 1007, 1007), (method, payload)
        for right in _UTF8:
            for payload in (right, b"ab" + right + b"cd", long + right + right, b"plain ASCII"):
                assert await _text_message(payload, method) == ("text", str(payload, "utf-8")), (method, payload)

