"""lib/unet/ws.py against a real `websockets` server on loopback, on CPython and
under the MicroPython unix port (tests/support/mpyclients/wsclient.py)."""

import asyncio
import base64
import contextlib
import datetime
import hashlib
import json
import os
import re
import ssl
import tracemalloc

import pytest
from websockets.asyncio.server import serve

import unet.conn
import unet.url
import unet.ws
import unet.wshandshake
from tests.support.firmwareharness import server_tls
from tests.support.mpyclients import run_script

pytestmark = pytest.mark.timeout(60)

HEADERS = {"Authorization": "Bearer tok en", "Device-Id": "aa:bb:cc:dd:ee:ff", "X-Extra": "1"}
GIB_BINARY_HEADER = b"\x82\x7f" + (1 << 30).to_bytes(8, "big")  # announces 1 GiB, sends nothing


# -- the server: one scenario per path; each records what it saw


async def echo(ws, seen):
    async for message in ws:
        seen["received"].append(message)
        await ws.send(message)


async def fragments(ws, seen):
    # Text in three fragments, a ping between them, a UTF-8 character split across two.
    text = "h\u00e9llo w\u00f6rld".encode()
    ws.transport.write(b"\x01\x02" + text[:2] + b"\x89\x01p" + b"\x00\x04" + text[2:6])
    ws.transport.write(b"\x80" + bytes([len(text) - 6]) + text[6:])
    await ws.send([b"\x00\x01", b"\x02", b"\x03\x04"])  # binary, fragmented by websockets
    await ws.close()


async def ping(ws, seen):
    pong = await ws.ping(b"are you there")
    await asyncio.wait_for(pong, 5)
    await ws.send("pong seen")
    await ws.close()


async def server_close(ws, seen):
    await ws.close(4001, "go away")


async def oversize(ws, seen):
    await ws.send("x" * 2000)
    await ws.wait_closed()


def raw(data):
    async def scenario(ws, seen):
        ws.transport.write(data)
        await ws.wait_closed()

    return scenario


async def vanish(ws, seen):
    ws.transport.write(b"\x81\x05he")  # half a frame, then the server is gone
    ws.transport.abort()


SCENARIOS = {
    "/echo": echo,
    "/fragments": fragments,
    "/ping": ping,
    "/server-close": server_close,
    "/oversize": oversize,
    "/huge": raw(GIB_BINARY_HEADER),
    "/masked": raw(b"\x81\x85abcd" + bytes(a ^ b for a, b in zip(b"hello", b"abcd"))),
    "/bad-opcode": raw(b"\x83\x00"),
    "/reserved-control": raw(b"\x8b\x00"),  # 0xB: a control opcode, reserved
    "/bad-utf8": raw(b"\x81\x02\xff\xfe"),
    "/bad-close-code": raw(b"\x88\x02\x03\xed"),  # 1005: never sent on the wire
    "/short-close": raw(b"\x88\x01\x03"),
    "/bad-close-reason": raw(b"\x88\x04\x03\xe8\xff\xfe"),
    "/vanish": vanish,
}


class ScenarioServer:
    def __init__(self):
        self.seen = {}  # path -> {"headers", "received", "close"}
        self.finished = {}  # path -> asyncio.Event, set when its handler is done

    def refuse(self, connection, request):
        if request.path == "/refuse":
            return connection.respond(401, "bad token\n")
        return None

    async def handler(self, ws):
        path = ws.request.path.partition("?")[0]
        seen = self.seen[path] = {"headers": ws.request.headers, "path": ws.request.path,
                                  "received": [], "close": None}
        try:
            await SCENARIOS[path](ws, seen)
        finally:
            await ws.wait_closed()
            close = ws.protocol.close_rcvd
            seen["close"] = (close.code, close.reason) if close else None
            self.event(path).set()

    def event(self, path):
        return self.finished.setdefault(path, asyncio.Event())

    async def seen_after_close(self, path):
        await asyncio.wait_for(self.event(path).wait(), 10)
        return self.seen[path]


@contextlib.asynccontextmanager
async def scenario_server(tls=None):
    server = ScenarioServer()
    async with serve(server.handler, "127.0.0.1", 0, process_request=server.refuse,
                     max_size=None, ping_interval=None, ssl=tls) as ws_server:
        port = ws_server.sockets[0].getsockname()[1]
        server.url = "%s://127.0.0.1:%d" % ("wss" if tls else "ws", port)
        yield server


def run(coro):
    return asyncio.run(coro)


async def recv_until_closed(ws):
    messages = []
    with pytest.raises(unet.ws.ConnectionClosed) as closed:
        while True:
            messages.append(await ws.recv())
    return messages, closed.value


# -- CPython


def test_accept_key_from_rfc6455():
    assert unet.wshandshake.accept_key(b"dGhlIHNhbXBsZSBub25jZQ==") == b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_handshake_sends_custom_headers_and_echoes_text_and_binary():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/echo?x=1", HEADERS, max_message=200000)
            await ws.send("h\u00e9llo")
            assert await ws.recv() == "h\u00e9llo"
            payload = bytes(range(256)) * 400  # 100 KiB: 64-bit length field both ways
            await ws.send(payload)
            assert await ws.recv() == payload
            await ws.send(memoryview(payload)[:126])  # 16-bit length field
            assert await ws.recv() == payload[:126]
            await ws.close()
            seen = await server.seen_after_close("/echo")
        assert seen["path"] == "/echo?x=1"
        for name, value in HEADERS.items():
            assert seen["headers"][name] == value
        assert seen["headers"]["Host"] == server.url.partition("://")[2]
        assert seen["received"] == ["h\u00e9llo", payload, payload[:126]]

    run(main())


def test_connecting_to_the_parts_of_a_url_as_a_link_reconnects():
    # A link splits its URL once and connects to the parts each time: the same upgrade,
    # path and query, Host and headers as from the URL; a scheme that is no WebSocket's
    # is still refused.
    async def main():
        async with scenario_server() as server:
            parts = unet.url.parse_url(server.url + "/echo?x=2")
            ws = await unet.ws.connect(parts, HEADERS)
            await ws.send("parts")
            assert await ws.recv() == "parts"
            await ws.close()
            seen = await server.seen_after_close("/echo")
        assert seen["path"] == "/echo?x=2"
        assert seen["headers"]["Host"] == server.url.partition("://")[2]
        assert seen["headers"]["Device-Id"] == HEADERS["Device-Id"]
        with pytest.raises(ValueError, match="not a WebSocket URL: http://h"):
            await unet.ws.connect(("http", "h", 80, "/"), None)

    run(main())


def test_text_from_pieces_keeps_the_mask_aligned():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/echo")
            pieces = ["a", "bc", "d\u00e9f", "g" * 1001, "", "\u4e2d\u6587"]
            await ws.send(pieces)
            assert await ws.recv() == "".join(pieces)
            await ws.close()
            seen = await server.seen_after_close("/echo")
        assert seen["received"] == ["".join(pieces)]

    run(main())


def test_concurrent_senders_never_interleave_frames():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/echo", max_message=100000)
            messages = [chr(ord("a") + i) * 20000 for i in range(4)]
            await asyncio.gather(*(ws.send(m) for m in messages))
            echoed = [await ws.recv() for _ in messages]
            await ws.close()
            seen = await server.seen_after_close("/echo")
        assert sorted(seen["received"]) == messages
        assert sorted(echoed) == messages

    run(main())


def test_fragmented_messages_are_reassembled_around_a_ping():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/fragments")
            before = ws.last_rx_ms
            messages, closed = await recv_until_closed(ws)
            seen = await server.seen_after_close("/fragments")
        assert messages == ["h\u00e9llo w\u00f6rld", b"\x00\x01\x02\x03\x04"]
        assert closed.code == 1000
        assert seen["close"] == (1000, "")  # our echo of the server's close
        assert ws.last_rx_ms >= before

    run(main())


def test_ping_from_server_is_answered():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/ping")
            messages, closed = await recv_until_closed(ws)
        assert messages == ["pong seen"]  # sent only after the server got its pong

    run(main())


def test_server_initiated_close_is_echoed_with_its_code():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/server-close")
            messages, closed = await recv_until_closed(ws)
            seen = await server.seen_after_close("/server-close")
            with pytest.raises(unet.ws.ConnectionClosed):
                await ws.send("too late")
        assert (closed.code, closed.reason) == (4001, "go away")
        assert seen["close"] == (4001, "go away")

    run(main())


def test_client_close_handshake():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/echo")
            for forbidden in (999, 1006, 1015, 2000, 5000):  # refused, the link stays up
                with pytest.raises(ValueError):
                    await ws.close(forbidden)
            assert not ws.closed
            await ws.close(4000, "bye")
            assert ws.closed
            seen = await server.seen_after_close("/echo")
            with pytest.raises(unet.ws.ConnectionClosed) as closed:
                await ws.recv()
        assert seen["close"] == (4000, "bye")
        assert closed.value.code == 4000

    run(main())


def test_client_close_while_another_task_is_receiving():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/echo")
            reader = asyncio.create_task(ws.recv())
            await asyncio.sleep(0)  # let it block in recv()
            await ws.close()
            with pytest.raises(unet.ws.ConnectionClosed):
                await reader
            seen = await server.seen_after_close("/echo")
        assert seen["close"] == (1000, "")

    run(main())


def test_oversized_message_closes_with_1009():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/oversize", max_message=1000)
            messages, closed = await recv_until_closed(ws)
            seen = await server.seen_after_close("/oversize")
        assert messages == []
        assert closed.code == 1009
        assert seen["close"][0] == 1009

    run(main())


def test_gigabyte_frame_header_fails_without_allocating():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/huge")
            tracemalloc.start()
            try:
                messages, closed = await recv_until_closed(ws)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            seen = await server.seen_after_close("/huge")
        assert closed.code == 1009
        assert seen["close"][0] == 1009
        assert peak < 1 << 20

    run(main())


PROTOCOL_ERRORS = {"/masked": 1002, "/bad-opcode": 1002, "/reserved-control": 1002,
                   "/bad-utf8": 1007, "/bad-close-code": 1002, "/short-close": 1002,
                   "/bad-close-reason": 1007}


@pytest.mark.parametrize("path, code", PROTOCOL_ERRORS.items())
def test_protocol_errors_close_with_their_code(path, code):
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + path)
            messages, closed = await recv_until_closed(ws)
            seen = await server.seen_after_close(path)
        assert messages == []
        assert closed.code == code
        assert seen["close"][0] == code

    run(main())


def test_refused_upgrade_raises_with_the_status():
    async def main():
        async with scenario_server() as server:
            with pytest.raises(unet.conn.HttpError) as refused:
                await unet.ws.connect(server.url + "/refuse", HEADERS)
        assert refused.value.status == 401
        assert "401" in str(refused.value)

    run(main())


def test_server_vanishing_mid_frame_raises_connection_closed():
    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/vanish")
            messages, closed = await recv_until_closed(ws)
        assert messages == []
        assert closed.code == 1006

    run(main())


def test_refused_tcp_connection_raises_oserror():
    async def main():
        async with scenario_server() as server:
            url = server.url
        with pytest.raises(OSError):
            await unet.ws.connect(url + "/echo", timeout=5)

    run(main())


# -- hostile and odd response heads, from a raw server

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
ENDLESS_CAP = 16 << 20  # bytes a raw server sends at most when the client never hangs up
RAW_FILLERS = {"/endless-line": (b"X-Junk: ", b"a" * 65536),
               "/endless-headers": (b"", b"X-Junk: 1\r\n" * 4096)}


def upgrade_head(request):
    """The 101 status and headers (without the blank line) answering `request`."""
    key = re.search(rb"Sec-WebSocket-Key: *(\S+)", request).group(1)
    accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest())
    return (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n")


class RawHeadServer(ScenarioServer):
    """/endless-line, /endless-headers: a head that never ends; seen: whether the client hung
    up. /frame-after-101: the upgrade, a text frame and a close frame in one segment; seen:
    the unmasked payload of the client's close frame."""

    async def handle(self, reader, writer):
        request = await reader.readuntil(b"\r\n\r\n")
        path = request.split(b" ", 2)[1].decode()
        head = upgrade_head(request)
        try:
            if path == "/frame-after-101":
                writer.write(head + b"\r\n\x81\x05hello\x88\x02\x03\xe8")
                frame = await reader.read()  # the client's close frame, then EOF
                self.seen[path] = bytes(a ^ b for a, b in zip(frame[6:], frame[2:6]))
            else:
                start, filler = RAW_FILLERS[path]
                writer.write(head + start)
                self.seen[path] = await self.send_endlessly(writer, filler)
        finally:
            writer.close()
            self.event(path).set()

    async def send_endlessly(self, writer, filler):
        """Repeat `filler` until the client hangs up (-> True) or ENDLESS_CAP went out."""
        try:
            for _ in range(ENDLESS_CAP // len(filler)):
                writer.write(filler)
                await writer.drain()
        except OSError:
            return True
        return False


@contextlib.asynccontextmanager
async def raw_head_server():
    server = RawHeadServer()
    async with await asyncio.start_server(server.handle, "127.0.0.1", 0) as tcp:
        server.url = "ws://127.0.0.1:%d" % tcp.sockets[0].getsockname()[1]
        yield server


@pytest.mark.parametrize("path, error", [("/endless-line", "HTTP line too long"),
                                         ("/endless-headers", "too many HTTP header lines")])
def test_endless_response_head_fails_fast_with_bounded_memory(path, error):
    async def main():
        async with raw_head_server() as server:
            tracemalloc.start()
            try:
                with pytest.raises(ValueError, match=error):
                    await unet.ws.connect(server.url + path, timeout=5)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            hung_up = await server.seen_after_close(path)
        assert hung_up
        assert peak < 1 << 20

    run(main())


def test_frame_in_the_same_segment_as_the_upgrade_is_kept():
    async def main():
        async with raw_head_server() as server:
            ws = await unet.ws.connect(server.url + "/frame-after-101")
            messages, closed = await recv_until_closed(ws)
            echoed_close = await server.seen_after_close("/frame-after-101")
        assert messages == ["hello"]
        assert closed.code == 1000
        assert echoed_close == b"\x03\xe8"

    run(main())


def test_micropython_client_with_hostile_heads_on_a_small_heap():
    async def main():
        async with raw_head_server() as server:
            results = await run_script("headclient.py", server.url, heapsize="128K")
            seen = {path: await server.seen_after_close(path) for path in
                    ("/endless-line", "/endless-headers", "/frame-after-101")}
        return {r.pop("check"): r for r in results}, seen

    results, seen = run(main())
    assert results["endless-line"] == {"error": "ValueError",
                                       "message": "HTTP line too long"}
    assert results["endless-headers"] == {"error": "ValueError",
                                          "message": "too many HTTP header lines"}
    assert results["frame-after-101"] == {"messages": ["hello"], "code": 1000}
    assert seen == {"/endless-line": True, "/endless-headers": True,
                    "/frame-after-101": b"\x03\xe8"}


# -- TLS


@pytest.mark.parametrize("form", ["pem-text", "pem-bytes", "der-bytes", "path", "bundle",
                                  "list", "trust"])
def test_wss_verified_with_the_right_ca(certs, form):
    ca = {"pem-text": (certs / "ca.pem").read_text(), "pem-bytes": (certs / "ca.pem").read_bytes(),
          "der-bytes": (certs / "ca.der").read_bytes(), "path": str(certs / "ca.pem"),
          "bundle": (certs / "bundle.pem").read_text(),
          "list": [(certs / "wrong.der").read_bytes(), (certs / "ca.pem").read_text()],
          "trust": unet.conn.Trust(str(certs / "bundle.pem"))}[form]

    async def main():
        async with scenario_server(server_tls(certs)) as server:
            ws = await unet.ws.connect(server.url + "/echo", ca=ca)
            await ws.send("over tls")
            assert await ws.recv() == "over tls"
            await ws.close()
            seen = await server.seen_after_close("/echo")
        assert seen["received"] == ["over tls"]

    run(main())


# Each refusal names its cause; none reaches the WebSocket handler.
REFUSALS = [
    ("wrong-ca", "server", "wrong.pem", "unable to get local issuer certificate"),
    ("no-ca", "server", None, "unable to get local issuer certificate"),  # shipped roots only
    ("expired", "expired", "ca.pem", "certificate has expired"),
    ("wrong-host", "otherhost", "ca.pem", "IP address mismatch"),
]


@pytest.mark.parametrize("case, served, ca, cause", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_wss_refused_with_a_clear_error(certs, case, served, ca, cause):
    async def main():
        async with scenario_server(server_tls(certs, served)) as server:
            with pytest.raises(ssl.SSLCertVerificationError, match=cause):
                await unet.ws.connect(server.url + "/echo",
                                      ca=str(certs / ca) if ca else None)
            assert "/echo" not in server.seen

    run(main())


def test_wss_host_name_is_checked_by_dns_name_too(certs):
    async def main():
        async with scenario_server(server_tls(certs, "otherhost")) as server:
            url = server.url.replace("127.0.0.1", "localhost") + "/echo"
            with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
                await unet.ws.connect(url, ca=str(certs / "ca.pem"))

    run(main())


def test_unverified_tls_only_when_asked_and_warned_at_every_connect(certs, caplog):
    async def main():
        async with scenario_server(server_tls(certs, "expired")) as server:
            unverified = unet.conn.Trust(verify=False)
            for _ in range(2):
                ws = await unet.ws.connect(server.url + "/echo", ca=unverified)
                await ws.send("unchecked")
                assert await ws.recv() == "unchecked"
                await ws.close()

    with caplog.at_level("WARNING", logger="unet"):
        run(main())
    warnings = [r.getMessage() for r in caplog.records if "WITHOUT certificate" in r.getMessage()]
    assert len(warnings) == 2 and "tls_verify" in warnings[0] and "127.0.0.1:" in warnings[0]
    with pytest.raises(ValueError, match="tls_verify must be true or false"):
        unet.conn.Trust(verify="no")
    with pytest.raises(ValueError, match="neither PEM nor DER"):
        unet.conn.Trust(b"not a certificate")


def test_shipped_roots_are_the_named_public_roots_and_current():
    from cryptography import x509

    import unet.roots
    from tools.board import roots as generator

    names = [x509.load_der_x509_certificate(der).subject.rfc4514_string()
             for der in unet.roots.ROOTS]
    assert len(names) == len(generator.NAMES) == 9
    assert "CN=ISRG Root X1,O=Internet Security Research Group,C=US" in names
    assert "CN=DigiCert Global Root G2,OU=www.digicert.com,O=DigiCert Inc,C=US" in names
    now = datetime.datetime.now(datetime.timezone.utc)
    for der in unet.roots.ROOTS:
        cert = x509.load_der_x509_certificate(der)
        assert cert.not_valid_after_utc > now, cert.subject
    # The module is exactly what the generator makes of the ca-certificates files.
    if all(os.path.exists(os.path.join(generator.SOURCE, n + ".crt")) for n in generator.NAMES):
        certs = [(n, generator.load(generator.SOURCE, n)) for n in generator.NAMES]
        with open(generator.OUTPUT) as f:
            assert f.read() == generator.render(certs)


# -- the same client under MicroPython


def test_micropython_client(certs):
    async def main():
        async with scenario_server() as plain, scenario_server(server_tls(certs)) as tls, \
                scenario_server(server_tls(certs, "expired")) as expired, \
                scenario_server(server_tls(certs, "otherhost")) as otherhost:
            checks = [
                {"check": "wss-good", "url": tls.url, "ca": str(certs / "ca.pem"), "bytes": True},
                {"check": "wss-bundle", "url": tls.url, "ca": str(certs / "bundle.pem")},
                {"check": "wss-wrong", "url": tls.url, "ca": str(certs / "wrong.pem")},
                {"check": "wss-no-ca", "url": tls.url, "ca": None},
                {"check": "wss-expired", "url": expired.url, "ca": str(certs / "ca.pem")},
                {"check": "wss-wrong-host", "url": otherhost.url, "ca": str(certs / "ca.pem")},
                {"check": "wss-unverified", "url": expired.url, "ca": None, "verify": False},
            ]
            # In a file: the unix port wheel dies ("FATAL: uncaught NLR") on a long argument.
            spec = certs / "tls-checks.json"
            spec.write_text(json.dumps(checks))
            results = await run_script("wsclient.py", plain.url, spec, heapsize="512K")
            seen = {path: await plain.seen_after_close(path) for path in SCENARIOS}
            seen_tls = await tls.seen_after_close("/echo")
        return ({r.pop("check"): r for r in results}, seen, seen_tls, tls.seen, expired.seen,
                otherhost.seen)

    results, seen, seen_tls, tls_paths, expired_paths, otherhost_paths = run(main())
    binary = list(b"\x00\x01\x02\x03\x04")
    assert results["echo"] == {"text": "h\u00e9llo", "binary_ok": True,
                               "pieces": "abcd\u00e9fg" + "h" * 700}
    assert seen["/echo"]["received"][0] == "h\u00e9llo"
    assert seen["/echo"]["received"][1] == bytes(range(256)) * 400
    assert seen["/echo"]["close"] == (1000, "bye")
    for name, value in HEADERS.items():
        assert seen["/echo"]["headers"][name] == value
    assert results["fragments"] == {"messages": ["h\u00e9llo w\u00f6rld", binary],
                                    "code": 1000, "reason": ""}
    assert results["ping"]["messages"] == ["pong seen"]
    assert results["server-close"] == {"messages": [], "code": 4001, "reason": "go away"}
    assert seen["/server-close"]["close"] == (4001, "go away")
    for path, code in [("/oversize", 1009), ("/huge", 1009)] + list(PROTOCOL_ERRORS.items()):
        check = path[1:]
        assert results[check]["code"] == code, check
        assert seen["/" + check]["close"][0] == code, check
    assert results["vanish"]["code"] == 1006
    assert results["refuse"] == {"error": "HttpError", "status": 401}
    assert results["wss-good"] == results["wss-bundle"] == {"answer": "over tls"}
    assert seen_tls["received"] == ["over tls"]
    # mbedTLS names each cause (a ValueError raised at the first write, the handshake's).
    assert "not correctly signed by the trusted CA" in results["wss-wrong"]["message"]
    assert "not correctly signed by the trusted CA" in results["wss-no-ca"]["message"]
    assert "validity has expired" in results["wss-expired"]["message"]
    assert "Common Name (CN) does not match" in results["wss-wrong-host"]["message"]
    assert results["wss-unverified"] == {"answer": "over tls"}  # only when asked
    assert list(tls_paths) == ["/echo"]  # the refused attempts never reached the server
    assert list(otherhost_paths) == [] and list(expired_paths) == ["/echo"]


# -- TCP_NODELAY


def test_nodelay_is_set_on_the_stream_socket_where_reachable():
    import socket

    class Sock:
        def __init__(self):
            self.options = []

        def setsockopt(self, *option):
            self.options.append(option)

    class MicroPythonStream:  # asyncio.Stream: the socket is `s`
        def __init__(self, s):
            self.s = s

    sock = Sock()
    assert unet.conn.set_nodelay(MicroPythonStream(sock))
    assert sock.options == [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    assert not unet.conn.set_nodelay(MicroPythonStream(object()))  # a TLS socket: no options

    async def main():
        async with scenario_server() as server:
            ws = await unet.ws.connect(server.url + "/echo")
            real = ws._writer.get_extra_info("socket")
            assert real.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            await ws.close()

    run(main())
