"""End-to-end harness for the firmware: a scripted xiaozhi backend on a real `websockets`
server, small real HTTP servers (vision, OTA images), and simulated boards (tools.sim.board).

Used by tests/firmware/ (test_firmware_*.py, test_sim.py, ...). Everything listens on
127.0.0.1 with an ephemeral port; every wait has a timeout so a broken device fails a test
instead of hanging it.
"""

import asyncio
import contextlib
import datetime
import email.parser
import http.server
import itertools
import json
import os
import ssl
import threading

import pytest
from websockets.asyncio.server import serve

from tests.support import ROOT
from tools.sim.board import SimBoard, config_for

MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
TOKEN = "test-token-1"
WAIT_S = 15  # generous: a device under MicroPython on a loaded CI machine
AUDIO_PARAMS = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}
RUNTIMES = [pytest.param(False, id="cpython"), pytest.param(True, id="micropython")]
# The same, plus MicroPython running the .mpy files make deploy stages (tools.sim --mpy).
RUNTIMES_MPY = RUNTIMES + [pytest.param("mpy", id="micropython-mpy")]
# Short link timings so reconnection scenarios take a fraction of a second.
FAST_LINK = {"backoff_min": 0.05, "backoff_max": 0.3}


class Device:
    """One WebSocket connection from the firmware, as the backend sees it."""

    def __init__(self, ws, hello, session_id):
        self.ws = ws
        self.headers = ws.request.headers
        self.hello = hello
        self.session_id = session_id
        self.frames = []  # every text frame received after hello, raw
        self.notifications = []
        self._ids = itertools.count(1000)

    async def send_raw(self, data):
        await self.ws.send(data)

    async def send_mcp(self, payload):
        envelope = {"session_id": self.session_id, "type": "mcp", "payload": payload}
        await self.ws.send(json.dumps(envelope))

    async def send_request(self, method, params=None, request_id=None):
        """Send a request without waiting; returns its id."""
        if request_id is None:
            request_id = next(self._ids)
        payload = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            payload["params"] = params
        await self.send_mcp(payload)
        return request_id

    async def next_envelope(self, timeout=WAIT_S):
        """The next frame from the device: its text and the parsed `mcp` envelope."""
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        self.frames.append(frame)
        envelope = json.loads(frame)
        assert envelope["type"] == "mcp", envelope
        assert envelope["session_id"] == self.session_id, envelope
        return frame, envelope

    async def response(self, request_id, timeout=WAIT_S, next_frame=False):
        """The next response with this id; notifications on the way are kept.
        next_frame: it must be the very next frame, with nothing else before it."""
        while True:
            _, envelope = await self.next_envelope(timeout)
            payload = envelope["payload"]
            if "method" not in payload and payload.get("id") == request_id:
                return payload
            assert not next_frame, "before the response to %r: %r" % (request_id, payload)
            if "method" in payload:
                self.notifications.append(payload)

    async def request(self, method, params=None, request_id=None, timeout=WAIT_S,
                      next_frame=False):
        """Send a request and return its whole response payload (next_frame: see response())."""
        request_id = await self.send_request(method, params, request_id)
        return await self.response(request_id, timeout, next_frame)

    async def notification(self, method, timeout=WAIT_S):
        """The first notification `method` the device sent that no one took yet (one kept
        while waiting for a response, else the next to arrive); taken from `notifications`."""
        while True:
            for index, message in enumerate(self.notifications):
                if message["method"] == method:
                    return self.notifications.pop(index)
            _, envelope = await self.next_envelope(timeout)
            payload = envelope["payload"]
            assert "method" in payload, "unexpected response %r" % payload
            self.notifications.append(payload)

    async def initialize(self, vision=None):
        capabilities = {"roots": {"listChanged": True}, "sampling": {}}
        if vision:
            capabilities["vision"] = vision
        reply = await self.request("initialize", {
            "protocolVersion": "2024-11-05", "capabilities": capabilities,
            "clientInfo": {"name": "test-backend", "version": "1"}})
        await self.send_mcp({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply["result"]

    async def list_tools(self, with_user_tools=False):
        """Every page's tools, following nextCursor; returns (tools, raw frames of the pages)."""
        tools, frames, cursor = [], [], None
        for _ in range(100):
            params = {"withUserTools": True} if with_user_tools else {}
            if cursor:
                params["cursor"] = cursor
            reply = await self.request("tools/list", params)
            frames.append(self.frames[-1])
            tools.extend(reply["result"]["tools"])
            cursor = reply["result"].get("nextCursor")
            if not cursor:
                return tools, frames
        raise AssertionError("tools/list never ended")

    async def call(self, name, arguments=None, meta=None):
        """tools/call; returns the result (content, isError)."""
        params = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        reply = await self.request("tools/call", params)
        assert "result" in reply, reply
        return reply["result"]

    async def call_json(self, name, arguments=None):
        result = await self.call(name, arguments)
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])


class ScriptedServer:
    """What the scripted WebSocket servers share (the xiaozhi Backend here, the MCP
    endpoint in endpointharness): a real `websockets` server on loopback that can be
    killed and started again on the same port, recording the close code each finished
    connection got from the device. A subclass serves a connection in `_serve(ws)`."""

    def __init__(self, max_size=2 ** 22, tls=None):
        self.port = 0
        self.max_size = max_size  # of a frame from the device; None: no limit
        self.tls = tls  # a server SSLContext: wss:// (see server_tls)
        self.refuse = 0  # that many refusals of the next upgrades (process_request)
        self.close_codes = []  # the device's close code per finished connection (None: none)
        self.connection_ended = asyncio.Event()
        self._server = None

    async def start(self):
        """Listen (again on the same port after kill(), as a restarted server would)."""
        self._server = await serve(self._handle, "127.0.0.1", self.port, max_size=self.max_size,
                                   ping_interval=None, process_request=self.process_request,
                                   ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, ws):
        try:
            await self._serve(ws)
        finally:
            await ws.wait_closed()
            close = ws.protocol.close_rcvd
            self.close_codes.append(close.code if close else None)
            self.connection_ended.set()

    async def kill(self):
        """Vanish like a crashed server: stop listening and drop every TCP connection."""
        self._server.close(close_connections=False)
        for ws in list(self._server.connections):
            ws.transport.abort()
        await self._server.wait_closed()

    async def stop(self):
        self._server.close()
        await self._server.wait_closed()


class Backend(ScriptedServer):
    """A scripted xiaozhi backend: answers each hello with a fresh session id and queues the
    device's connection. It can also refuse the next upgrades (`refuse`: that many 503s) or
    leave the next hellos unanswered (`silent`), and records every hello and the close code
    each finished connection got from the device."""

    def __init__(self, max_size=2 ** 22, tls=None):
        super().__init__(max_size, tls)
        self.devices = asyncio.Queue()
        self.hellos = []  # every device hello, answered or not
        self.silent = 0

    @property
    def url(self):
        return "%s://127.0.0.1:%d/xiaozhi/v1/" % ("wss" if self.tls else "ws", self.port)

    def process_request(self, connection, request):
        """websockets hook before the upgrade; a subclass may extend it (e.g. to record)."""
        if self.refuse:
            self.refuse -= 1
            return connection.respond(503, "busy\n")
        return None

    async def _serve(self, ws):
        hello = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
        self.hellos.append(hello)
        if self.silent:
            self.silent -= 1
        else:
            session_id = "session-%d" % len(self.hellos)
            await ws.send(json.dumps({"type": "hello", "transport": "websocket",
                                      "session_id": session_id,
                                      "audio_params": AUDIO_PARAMS}))
            await self.devices.put(Device(ws, hello, session_id))

    async def next_device(self, timeout=WAIT_S):
        return await asyncio.wait_for(self.devices.get(), timeout)


class Sim(SimBoard):
    """A simulated board (tools.sim.board.SimBoard) against `url` with TOKEN, its state in
    `state_dir`, its log in sim.log there (printed by stop(): pytest shows it when the test
    fails)."""

    def __init__(self, url, state_dir, micropython=False, max_payload=None, extra_config=None,
                 device_id=None, heapsize="2M", ota_url=None, endpoints=(), app=None, binary=None,
                 frozen_hardware=False, catalogue=True):
        """url None with ota_url: config.json holds only Wi-Fi and the OTA URL; endpoints:
        MCP endpoint URLs (config.json's mcp_endpoint), with a url or without one; app: a
        maker's module; micropython: False (CPython), True (the unix port `binary`, default
        the venv's, from source) or "mpy" (the .mpy files make deploy stages; with
        frozen_hardware, the simulated hardware frozen in `binary`); catalogue: SimBoard's."""
        self.state_dir = str(state_dir)
        self.log_path = os.path.join(self.state_dir, "sim.log")
        config = config_for("host", url, TOKEN if url else None, ota_url=ota_url, device_id=device_id,
                            max_payload=max_payload)
        if endpoints:
            config["mcp_endpoint"] = endpoints[0] if len(endpoints) == 1 else list(endpoints)
        config.update(FAST_LINK)
        config.update(extra_config or {})
        runtime = "cpython"
        if micropython:
            runtime = "micropython" if micropython is True else "mpy-frozen-hardware" if frozen_hardware else "mpy"
        super().__init__(config, runtime, os.path.abspath(binary or MICROPYTHON) if micropython else None,
                         heapsize if micropython else None, root=self.state_dir,
                         app=str(app) if app else None, say=self._say, catalogue=catalogue)

    def _say(self, line):
        self.log.write("[sim] %s\n" % line)
        self.log.flush()

    def start(self):
        os.makedirs(self.state_dir, exist_ok=True)
        self.log = open(self.log_path, "a")
        return super().start()

    def stop(self):
        """Ctrl-C, as a user stopping it would; returns its exit status (0: it stopped)."""
        try:
            return super().stop()
        finally:
            self.log.close()
            self.dump_log()

    def dump_log(self):
        # Shown by pytest only when the test fails.
        with open(self.log_path, errors="replace") as f:
            print(f.read()[-20000:])

    def read_settings(self):
        return self.settings()


class _HttpServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


class HttpServer:
    """A real http.server on loopback in a thread; subclasses give it a handler.

    With `hold=True` a handler that calls `arrived()` answers only after release(): a slow
    service, a download in progress. `received` is set when a request arrived."""

    def __init__(self, handler_class, hold=False):
        self.httpd = _HttpServer(("127.0.0.1", 0), handler_class)
        self.httpd.owner = self
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.received = threading.Event()
        self.released = threading.Event()
        if not hold:
            self.released.set()

    def release(self):
        self.released.set()

    def arrived(self):
        """Called by the handler for each request: note it, then wait to be released."""
        self.received.set()
        self.released.wait(WAIT_S)

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.httpd.server_address[1]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def read_body(handler):
    """The request body, whether sent with Content-Length or chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int(handler.rfile.readline().split(b";")[0], 16)
            if size == 0:
                handler.rfile.readline()
                return body
            body += handler.rfile.read(size)
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length", 0)))


def parse_multipart(content_type, body):
    """[(field name, filename or None, content type, bytes)] in the order sent."""
    message = email.parser.BytesParser().parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    assert message.is_multipart(), content_type
    parts = []
    for part in message.get_payload():
        parts.append((part.get_param("name", header="content-disposition"),
                      part.get_filename(), part.get_content_type(),
                      part.get_payload(decode=True)))
    return parts


class VisionServer(HttpServer):
    """The vision endpoint: records uploads; answers like xiaozhi-esp32-server.

    With `hold=True` it answers only after release(): a slow vision service."""

    ANSWER = "a red apple on a desk"

    def __init__(self, hold=False):
        super().__init__(_VisionHandler, hold)
        self.uploads = []  # (headers, parts)

    @property
    def url(self):
        return self.base + "/mcp/vision/explain"


class _VisionHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        owner = self.server.owner
        parts = parse_multipart(self.headers["Content-Type"], read_body(self))
        owner.uploads.append((dict(self.headers), parts))
        owner.arrived()
        body = json.dumps({"success": True, "action": "RESPONSE",
                           "response": VisionServer.ANSWER}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class ImageServer(HttpServer):
    """Serves one firmware image at /firmware.bin.

    With `hold=True` it sends the image only after release(): a download in progress.
    With `cut_at=N` it announces the whole image but sends only its first N bytes, then
    hangs up: a download that breaks halfway."""

    def __init__(self, image, hold=False, cut_at=None):
        super().__init__(_ImageHandler, hold)
        self.image = image
        self.cut_at = cut_at
        self.requests = 0

    @property
    def url(self):
        return self.base + "/firmware.bin"


class _ImageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        owner = self.server.owner
        owner.requests += 1
        owner.arrived()
        if self.path != "/firmware.bin":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(owner.image)))
        self.end_headers()
        self.wfile.write(owner.image if owner.cut_at is None else owner.image[:owner.cut_at])

    def log_message(self, *args):
        pass


def run(coro, timeout=60):
    """Run one scenario on a fresh event loop, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


@contextlib.asynccontextmanager
async def device_session(tmp_path, micropython=False, refuse=0, silent=0, **sim_args):
    """A backend, the simulator connected to it; yields (backend, sim, first device).
    refuse/silent: Backend's, set before the device first connects."""
    backend = await Backend().start()
    backend.refuse, backend.silent = refuse, silent
    sim = Sim(backend.url, tmp_path, micropython=micropython, **sim_args).start()
    try:
        yield backend, sim, await backend.next_device()
    except BaseException:
        sim.stop()
        await backend.stop()
        raise
    # The board first, while its link is up and it idles: the unix port raises Ctrl-C
    # (the simulator's stop) wherever the interpreter is, and one that lands inside a
    # garbage collection (as after a lost link, when the board collects before it
    # reconnects) leaves the heap locked or corrupt, and the board's record unwritten. A
    # board's Ctrl-C waits for a safe point; the unix port's does not.
    stopped = sim.stop()
    await backend.stop()
    assert stopped == 0


async def assert_alive(device):
    """The device still answers: ping gets {} with our id."""
    reply = await device.request("ping")
    assert reply["result"] == {}


# -- TLS: certificates made for the test


def make_certs(folder):
    """In `folder`: a CA (ca.pem/.der), a server certificate for 127.0.0.1 signed by it
    (server.pem/.key), the same expired (expired.*), one for another host (otherhost.*), an
    unrelated CA (wrong.*) and a bundle of the unrelated and the right CA (bundle.pem)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def certificate(name, key, issuer_name, issuer_key, ca, san=None, days=(-1, 30)):
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now + datetime.timedelta(days=days[0]))
                   .not_valid_after(now + datetime.timedelta(days=days[1]))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def save(name, cert, key=None):
        (folder / (name + ".pem")).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (folder / (name + ".der")).write_bytes(cert.public_bytes(serialization.Encoding.DER))
        if key:
            (folder / (name + ".key")).write_bytes(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption()))

    ca_key, server_key, wrong_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    save("ca", certificate("umcp test CA", ca_key, "umcp test CA", ca_key, True))
    save("wrong", certificate("wrong CA", wrong_key, "wrong CA", wrong_key, True))
    san = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    save("server", certificate("127.0.0.1", server_key, "umcp test CA", ca_key, False, san),
         server_key)
    # Signed by the right CA, but expired last week; and valid, but for another host.
    save("expired", certificate("127.0.0.1", server_key, "umcp test CA", ca_key, False, san,
                                days=(-60, -7)), server_key)
    other = [x509.DNSName("other.example")]
    save("otherhost", certificate("other.example", server_key, "umcp test CA", ca_key, False,
                                  other), server_key)
    # A bundle: an unrelated CA first, the right one second.
    (folder / "bundle.pem").write_bytes((folder / "wrong.pem").read_bytes()
                                        + (folder / "ca.pem").read_bytes())
    return folder


def server_tls(certs, name="server"):
    """A server TLS context presenting certs/<name>.pem (see make_certs)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / (name + ".pem"), certs / (name + ".key"))
    return ctx
