"""lib/unet/http.py against a real `http.server` on loopback, on CPython and under
the MicroPython unix port (tests/support/mpyclients/httpclient.py)."""

import asyncio
import email.parser
import email.policy
import hashlib
import json
import ssl
import tempfile
import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import unet.conn
import unet.http
from tests.support.mpyclients import run_script

pytestmark = pytest.mark.timeout(60)

DATA = bytes(range(256)) * 800  # 200 KiB download
CHUNKS = [DATA[:1], DATA[1:5000], DATA[5000:70000], DATA[70000:]]
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4 + b"\xff\xd9"
VISION_ANSWER = {"success": True, "action": "RESPONSE", "response": "a cat"}
ENDLESS_CAP = 16 << 20  # bytes the server sends at most when the client never hangs up


def parse_multipart(content_type, body):
    """[(name, filename, content type, bytes)] of a multipart body, by the email package."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    assert not message.defects
    return [(part.get_param("name", header="content-disposition"), part.get_filename(),
             part.get_content_type(), part.get_payload(decode=True))
            for part in message.iter_parts()]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen = {}  # path -> what the server got

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        record = {"headers": dict(self.headers), "length": length}
        if self.path == "/reject":
            self.rfile.read(length)
            return self.reply(403, b"wrong token")
        if self.path == "/sink":  # to a file in 64 KiB pieces: keeps the server's memory flat
            record["file"] = tempfile.TemporaryFile()
            left = length
            while left:
                piece = self.rfile.read(min(left, 65536))
                assert piece, "body shorter than its Content-Length"
                record["file"].write(piece)
                left -= len(piece)
            Handler.seen[self.path] = record
            return self.reply(200, b"stored")
        record["parts"] = parse_multipart(self.headers["Content-Type"], self.rfile.read(length))
        Handler.seen[self.path] = record
        self.reply(200, json.dumps(VISION_ANSWER).encode(), [("Content-Type", "application/json")])

    def do_GET(self):
        port = self.server.server_address[1]
        if self.path == "/file":
            self.reply(200, DATA)
        elif self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in CHUNKS:
                self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\nX-Trailer: 1\r\n\r\n")
        elif self.path == "/eof":  # neither length nor chunks: the body ends with the connection
            self.send_response(200)
            self.end_headers()
            self.wfile.write(DATA)
            self.close_connection = True
        elif self.path == "/one-segment":  # the body in the same write as the head
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        elif self.path == "/endless-chunk-size":  # a chunk-size line that never ends
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for _ in range(ENDLESS_CAP // 65536):
                    self.wfile.write(b"1" * 65536)
            except OSError:  # the client hung up, as it should
                pass
            self.close_connection = True
        elif self.path in ("/negative-length", "/negative-chunk", "/signed-length"):
            # A size int() would take; the body goes on to the end of the stream.
            head = {"/negative-length": b"Content-Length: -1",
                    "/negative-chunk": b"Transfer-Encoding: chunked\r\n\r\n-1",
                    "/signed-length": b"Content-Length: +5"}[self.path]
            self.wfile.write(b"HTTP/1.1 200 OK\r\n" + head + b"\r\n\r\n" + b"x" * 300000)
            self.close_connection = True
        elif self.path == "/redirect2":
            self.reply(301, headers=[("Location", "/redirect")])
        elif self.path == "/redirect":
            self.reply(302, headers=[("Location", "http://127.0.0.1:%d/file" % port)])
        elif self.path == "/loop":
            self.reply(302, headers=[("Location", "/loop")])
        else:
            self.reply(404, b"no such file")


@pytest.fixture(scope="module")
def http_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


def sink_parts():
    record = Handler.seen.pop("/sink")
    body_file = record["file"]
    body_file.seek(0)
    body = body_file.read()
    assert len(body) == record["length"]
    return parse_multipart(record["headers"]["Content-Type"], body)


async def download(url):
    stream = unet.http.get_stream(url)
    pieces = [chunk async for chunk in stream]
    return b"".join(pieces), stream.length


def big_upload():
    return bytes(i * 7 & 0xFF for i in range(600 * 1024))


# -- CPython


def test_post_multipart_sends_question_then_file(http_server):
    headers = {"Authorization": "Bearer vision-token", "Device-Id": "aa:bb:cc:dd:ee:ff"}
    status, body = asyncio.run(unet.http.post_multipart(
        http_server + "/vision", [("question", "What is \"this\"? \u4e2d")],
        ("file", "photo.jpg", "image/jpeg", JPEG), headers))
    assert status == 200
    assert json.loads(body) == VISION_ANSWER
    seen = Handler.seen.pop("/vision")
    assert seen["headers"]["Authorization"] == "Bearer vision-token"
    assert seen["headers"]["Device-Id"] == "aa:bb:cc:dd:ee:ff"
    assert seen["parts"] == [("question", None, "text/plain", "What is \"this\"? \u4e2d".encode()),
                             ("file", "photo.jpg", "image/jpeg", JPEG)]


def test_post_multipart_streams_the_file_without_copying_it(http_server):
    data = bytes(range(256)) * (16 * 1024)  # 4 MiB
    tracemalloc.start()
    try:
        status, body = asyncio.run(unet.http.post_multipart(
            http_server + "/sink", [("question", "q")], ("file", "big.bin", "application/x", data)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (status, body) == (200, "stored")
    assert peak < len(data) // 4
    assert sink_parts() == [("question", None, "text/plain", b"q"),
                            ("file", "big.bin", "application/x", data)]


@pytest.mark.parametrize("size", [0, 1, 255, 256, 257, 4096, 4096 + 256, 4097 + 256, 3 * 4096 + 1])
def test_post_multipart_sends_every_byte_whatever_the_file_size(http_server, size):
    # The file goes in chunks and its last bytes with the closing boundary: no byte is lost
    # or doubled at the edges between them.
    data = bytes(n % 253 for n in range(size))
    status, body = asyncio.run(unet.http.post_multipart(
        http_server + "/sink", [("question", "q")], ("file", "f.bin", "application/x", data)))
    assert (status, body) == (200, "stored")
    assert sink_parts() == [("question", None, "text/plain", b"q"), ("file", "f.bin", "application/x", data)]


def test_post_multipart_returns_error_statuses(http_server):
    status, body = asyncio.run(unet.http.post_multipart(
        http_server + "/reject", [], ("file", "f", "application/x", b"x")))
    assert (status, body) == (403, "wrong token")


@pytest.mark.parametrize("path", ["/file", "/chunked", "/eof", "/redirect", "/redirect2"])
def test_get_stream_yields_the_whole_body(http_server, path):
    body, length = asyncio.run(download(http_server + path))
    assert body == DATA
    assert length == (len(DATA) if path in ("/file", "/redirect", "/redirect2") else None)


def test_get_stream_in_small_pieces(http_server):
    async def main():
        async with unet.http.get_stream(http_server + "/file") as stream:
            sizes = [len(chunk) async for chunk in stream]
        return sizes

    sizes = asyncio.run(main())
    assert sum(sizes) == len(DATA)
    assert max(sizes) <= 4096


@pytest.mark.parametrize("path, length", [("/file", len(DATA)), ("/redirect", len(DATA)),
                                          ("/chunked", None)])
def test_open_reads_the_head_only_so_the_length_is_known_before_the_body(http_server, path,
                                                                       length):
    async def main():
        async with unet.http.get_stream(http_server + path) as stream:
            assert await stream.open() is stream
            announced = stream.length
            body = b"".join([chunk async for chunk in stream])  # nothing was consumed
        return announced, body

    assert asyncio.run(main()) == (length, DATA)


def test_open_raises_the_status_and_releases_the_socket(http_server):
    async def main():
        stream = unet.http.get_stream(http_server + "/missing")
        with pytest.raises(unet.conn.HttpError) as refused:
            await stream.open()
        return refused.value.status, stream._writer

    assert asyncio.run(main()) == (404, None)


def test_https_downloads_are_verified_like_wss(certs):
    from tests.support.firmwareharness import server_tls

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = server_tls(certs).wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = "https://127.0.0.1:%d/file" % server.server_address[1]
    try:
        async def fetch(ca):
            async with unet.http.get_stream(url, ca=ca) as stream:
                return b"".join([chunk async for chunk in stream])

        assert asyncio.run(fetch(str(certs / "bundle.pem"))) == DATA
        for ca in (None, str(certs / "wrong.pem")):
            with pytest.raises(ssl.SSLCertVerificationError, match="unable to get local issuer"):
                asyncio.run(fetch(ca))
        assert asyncio.run(fetch(unet.conn.Trust(verify=False))) == DATA
    finally:
        server.shutdown()
        server.server_close()


def test_get_stream_keeps_a_body_sent_with_the_head(http_server):
    assert asyncio.run(download(http_server + "/one-segment")) == (b"hello", 5)


def test_endless_chunk_size_line_fails_fast_with_bounded_memory(http_server):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="HTTP line too long"):
            asyncio.run(download(http_server + "/endless-chunk-size"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("path, what", [("/negative-length", "Content-Length"),
                                        ("/signed-length", "Content-Length"),
                                        ("/negative-chunk", "chunk size")])
def test_a_size_with_a_sign_is_refused_not_read_to_the_end(http_server, path, what):
    # int("-1") is -1, and read(-1) would take the rest of the stream in one piece.
    with pytest.raises(ValueError, match="bad HTTP " + what):
        asyncio.run(download(http_server + path))


@pytest.mark.parametrize("path, status", [("/missing", 404), ("/loop", 302)])
def test_get_stream_raises_http_errors(http_server, path, status):
    with pytest.raises(unet.conn.HttpError) as failed:
        asyncio.run(download(http_server + path))
    assert failed.value.status == status
    assert str(status) in str(failed.value)


def test_connection_refused_raises_oserror():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = "http://127.0.0.1:%d/file" % server.server_address[1]
    server.server_close()
    with pytest.raises(OSError):
        asyncio.run(download(url))
    with pytest.raises(OSError):
        asyncio.run(unet.http.post_multipart(url, [], ("f", "f", "a/b", b"")))


def test_non_http_urls_are_refused():
    with pytest.raises(ValueError):
        asyncio.run(download("ws://127.0.0.1:1/"))


# -- the same client under MicroPython


def test_micropython_client(http_server):
    results = asyncio.run(run_script("httpclient.py", http_server, heapsize="1M"))
    results = {r.pop("check"): r for r in results}
    assert results["vision"]["status"] == 200
    assert json.loads(results["vision"]["body"]) == VISION_ANSWER
    seen = Handler.seen.pop("/vision")
    assert seen["headers"]["Authorization"] == "Bearer vision-token"
    assert seen["parts"] == [("question", None, "text/plain", b"What is this?"),
                             ("file", "photo.jpg", "image/jpeg", JPEG)]
    assert results["sink"] == {"status": 200, "body": "stored"}
    assert sink_parts() == [("file", "big.bin", "application/octet-stream", big_upload())]
    digest = hashlib.sha256(DATA).hexdigest()
    for check in ("file", "redirect2"):
        assert results[check] == {"size": len(DATA), "length": len(DATA), "sha256": digest}
    for check in ("chunked", "eof"):
        assert results[check] == {"size": len(DATA), "length": None, "sha256": digest}
    assert results["one-segment"] == {"size": 5, "length": 5,
                                      "sha256": hashlib.sha256(b"hello").hexdigest()}
    assert results["endless-chunk-size"] == {"error": "ValueError", "status": None}
    assert results["missing"] == {"error": "HttpError", "status": 404}
    assert results["loop"] == {"error": "HttpError", "status": 302}
