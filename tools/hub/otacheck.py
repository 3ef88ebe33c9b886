"""The OTA check-in and activation endpoints, as xiaozhi-esp32-server serves them.

POST /xiaozhi/ota/ (headers Device-Id and Client-Id required, the JSON body the reference
device's ota.cc sends) answers with `server_time`, `firmware` (its url set when a newer
image exists), `activation` (only while pending) and where to connect: `websocket` {url,
token} or `mqtt` {endpoint, client_id, username, password, publish_topic,
subscribe_topic}. A device whose activation is pending gets no connection details: it
shows the code, polls POST /xiaozhi/ota/activate (202 until the owner confirmed the code
in the console, 200 then), and checks again, as the reference application does.

Firmware images: `<ota_dir>/<board>_<version>.bin` (xiaozhi-esp32-server's naming); the
highest version above the device's own is offered at /ota/<file>, with its `sha256`
beside `url` (an extra field the reference ignores; self.upgrade_firmware wants it).
docs/backend.md, "The OTA check and activation", shows an answer.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import time

from starlette.responses import JSONResponse
from starlette.routing import Route

CHECK_PATH = "/xiaozhi/ota/"  # xiaozhi calls its check-in "ota"
ACTIVATE_PATH = "/xiaozhi/ota/activate"
ACTIVATION_TIMEOUT_MS = 120000
_IMAGE = re.compile(r"^(.+?)_([0-9][A-Za-z0-9.\-]*)\.bin$")


def parse_version(text):
    """'1.2.3' -> (1, 2, 3); anything that is not a number separates parts."""
    return tuple(int(part) for part in re.findall(r"\d+", text or "")) or (0,)


def newer(a, b):
    """True when version a is above version b (missing parts count as 0)."""
    ta, tb = parse_version(a), parse_version(b)
    width = max(len(ta), len(tb))
    return ta + (0,) * (width - len(ta)) > tb + (0,) * (width - len(tb))


class Firmware:
    """The images in ota_dir, named `<board>_<version>.bin`."""

    def __init__(self, ota_dir):
        self.ota_dir = ota_dir
        self._digests = {}  # (name, size, mtime) -> sha256 hex: a fleet checks in at every boot

    def newest(self, board, version):
        """(version, file name, sha256 hex) of the highest image for `board` above
        `version`, or None."""
        if not self.ota_dir or not os.path.isdir(self.ota_dir):
            return None
        best = None
        for name in os.listdir(self.ota_dir):
            match = _IMAGE.match(name)
            if not match or match.group(1) != board or not newer(match.group(2), version):
                continue
            if best is None or newer(match.group(2), best[0]):
                best = (match.group(2), name)
        if best is None:
            return None
        path = os.path.join(self.ota_dir, best[1])
        stat = os.stat(path)
        key = (best[1], stat.st_size, stat.st_mtime_ns)
        if key not in self._digests:
            with open(path, "rb") as image:
                self._digests[key] = hashlib.file_digest(image, "sha256").hexdigest()
        return best[0], best[1], self._digests[key]


class Activation:
    """Activation state per Device-Id: a code the owner types in, a challenge the device
    signs (HMAC-SHA256 with its key, looked up by serial number; a device without a serial
    number sends `{}` and is known by its Device-Id alone, Activation-Version 1)."""

    def __init__(self, keys=None, activated=(), on_activated=None):
        self.keys = dict(keys or {})  # serial number -> key bytes
        self.activated = set(activated)
        self.pending = {}  # device id -> {"code", "challenge", "confirmed", "since"}
        self.on_activated = on_activated  # called with the device id (to save the state)

    def start(self, device_id):
        entry = self.pending.get(device_id)
        if entry is None:
            entry = {"code": "%06d" % secrets.randbelow(1000000), "challenge": secrets.token_hex(16),
                     "confirmed": False, "since": time.time()}
            self.pending[device_id] = entry
        return entry

    def confirm(self, code):
        """The owner typed `code`: the device it belongs to, or None."""
        for device_id, entry in self.pending.items():
            if entry["code"] == code.strip():
                entry["confirmed"] = True
                return device_id
        return None

    def check(self, device_id, body):
        """(status, reason) for POST /activate: 200 done, 202 waiting for the owner,
        400/403 refused."""
        if device_id in self.activated:
            return 200, "activated"
        entry = self.pending.get(device_id)
        if entry is None:
            return 400, "no activation pending for %s: check for updates first" % device_id
        if body.get("hmac") is not None or body.get("serial_number") is not None:
            if body.get("algorithm") != "hmac-sha256":
                return 400, "algorithm must be hmac-sha256"
            if body.get("challenge") != entry["challenge"]:
                return 403, "challenge does not match the one handed out"
            key = self.keys.get(body.get("serial_number"))
            if key is None:
                return 403, "unknown serial number"
            expected = hmac.new(key, entry["challenge"].encode(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, str(body.get("hmac", "")).lower()):
                return 403, "hmac does not match"
        elif self.keys:
            return 403, "this backend needs a serial number and hmac (Activation-Version 2)"
        if not entry["confirmed"]:
            return 202, "waiting for the owner to enter code %s" % entry["code"]
        del self.pending[device_id]
        self.activated.add(device_id)
        if self.on_activated:
            self.on_activated(device_id)
        return 200, "activated"


def _bad(status, reason):
    return JSONResponse({"success": False, "message": reason}, status_code=status)


class OtaCheckService:
    """What the OTA endpoint hands out. `connection(device_id, client_id, board)` returns
    ("websocket", {...}) or ("mqtt", {...}) (the backend decides); `firmware_url(name)`
    is where an image is downloaded."""

    def __init__(self, connection, firmware_url, ota_dir=None, activation=None, timezone_offset=0, log=print):
        self.connection = connection
        self.firmware_url = firmware_url
        self.firmware = Firmware(ota_dir)
        self.activation = activation  # None: every device is taken as activated
        self.timezone_offset = timezone_offset
        self.log = log

    def routes(self):
        return [Route(CHECK_PATH, self._check, methods=["POST"]),
                Route(CHECK_PATH.rstrip("/"), self._check, methods=["POST"]),
                Route(ACTIVATE_PATH, self._activate, methods=["POST"]),
                Route(ACTIVATE_PATH + "/", self._activate, methods=["POST"])]

    @staticmethod
    async def _body(request):
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except ValueError as error:
            raise ValueError("body is not JSON: %s" % error) from None
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        return body

    @staticmethod
    def _identity(request):
        device_id = request.headers.get("Device-Id", "").strip()
        client_id = request.headers.get("Client-Id", "").strip()
        missing = [name for name, value in (("Device-Id", device_id), ("Client-Id", client_id)) if not value]
        if missing:
            raise ValueError("missing header %s" % " and ".join(missing))
        return device_id, client_id

    async def answer(self, device_id, client_id, body):
        """The OTA answer for a device (what POST /xiaozhi/ota/ returns)."""
        application = body.get("application") if isinstance(body.get("application"), dict) else {}
        board = body.get("board") if isinstance(body.get("board"), dict) else {}
        version = str(application.get("version") or "0.0.0")
        board_type = str(board.get("type") or body.get("model") or "default")
        answer = {"server_time": {"timestamp": int(time.time() * 1000), "timezone_offset": self.timezone_offset},
                  "firmware": {"version": version, "url": ""}}
        image = self.firmware.newest(board_type, version)
        if image is not None:
            answer["firmware"] = {"version": image[0], "url": self.firmware_url(image[1]), "sha256": image[2]}
            self.log("ota: %s (%s %s) is offered %s" % (device_id, board_type, version, image[1]))
        if self.activation is not None and device_id not in self.activation.activated:
            entry = self.activation.start(device_id)
            answer["activation"] = {"message": "Enter code %s in the umcp console" % entry["code"],
                                    "code": entry["code"], "challenge": entry["challenge"],
                                    "timeout_ms": ACTIVATION_TIMEOUT_MS}
            self.log("ota: %s asks to be activated: type `activate %s` to confirm" % (device_id, entry["code"]))
            return answer
        kind, details = await self.connection(device_id, client_id, board_type)
        answer[kind] = details
        where = details.get("endpoint") or details.get("url")
        self.log("ota: %s (%s %s) checked in: connect over %s to %s" % (device_id, board_type, version, kind, where))
        return answer

    async def _check(self, request):
        try:
            device_id, client_id = self._identity(request)
            body = await self._body(request)
        except ValueError as error:
            self.log("ota: refused a check: %s" % error)
            return _bad(400, str(error))
        return JSONResponse(await self.answer(device_id, client_id, body))

    async def _activate(self, request):
        try:
            device_id, _ = self._identity(request)
            body = await self._body(request)
        except ValueError as error:
            return _bad(400, str(error))
        if self.activation is None:
            return JSONResponse({"success": True, "message": "activation is off"})
        status, reason = self.activation.check(device_id, body)
        if status == 200:
            self.log("ota: %s activated" % device_id)
            return JSONResponse({"success": True, "message": reason})
        if status == 202:
            return JSONResponse({"success": False, "message": reason}, status_code=202)
        self.log("ota: refused activation of %s: %s" % (device_id, reason))
        return _bad(status, reason)
