"""The OTA check and activation of a xiaozhi device (the reference's main/ota.cc): OtaCheck.

The device POSTs a description of itself to its `ota_url` with the reference's headers
and acts on each part of the answer: `server_time` sets the clock; `firmware` {version,
url[, force]} is an upgrade offer (the caller upgrades or only shows it); `activation`
shows the code, then POSTs {algorithm, serial_number, challenge, hmac} to
<ota_url>/activate until the server stops answering 202; `websocket` or `mqtt` is the
transport to use, saved atomically in the settings so that a board that reboots offline
uses the last good one (docs/backend.md, "The OTA check and activation", has the fields).

A malformed answer (not JSON, a part of the wrong shape) is logged with what was wrong
and dropped as a whole: nothing of it is acted on and the saved settings stay.
"""

import asyncio
import binascii
import hashlib

from devsvc.settings import TRANSPORT_KEY  # noqa: F401 (the settings key, theirs)
from umcp.compat import dumps, get_logger
from umcp.jsonin import loads
from unet import http

_log = get_logger("otacheck")

_ACTIVATE_RETRY_S = 3  # after a 202 (the reference's pause)
_ACTIVATE_ERROR_S = 10  # after another failure
_ACTIVATE_TIMEOUT_MS = 60000  # when the answer names none


class OtaCheckError(Exception):
    pass


def newer(current, offered):
    """Whether version `offered` ("1.2.10") is newer than `current`, part by part."""
    a, b = _parts(current), _parts(offered)
    for x, y in zip(a, b):
        if y != x:
            return y > x
    return len(b) > len(a)


def _parts(version):
    parts = []
    for piece in str(version).split("."):
        digits = ""
        for ch in piece:
            if "0" <= ch <= "9":
                digits += ch
            else:
                break
        parts.append(int(digits) if digits else 0)
    return parts


def hmac_sha256(key, message):
    """HMAC-SHA256 (RFC 2104) from hashlib alone (MicroPython has no hmac module)."""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = bytes(key) + bytes(64 - len(key))
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
    inner.update(message)
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))
    outer.update(inner.digest())
    return outer.digest()


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_str(part, block, key, required=False):
    value = block.get(key)
    if value is None and not required:
        return
    if not isinstance(value, str) or (required and not value):
        raise ValueError("%s.%s must be a%s string" % (part, key, " non-empty" if required else ""))


def parse_answer(text, check_mqtt=None):
    """The OTA answer as a dict with only well-formed parts; ValueError saying what is
    wrong otherwise. check_mqtt(block) may refuse the mqtt block (ValueError)."""
    try:
        answer = loads(text)
    except ValueError as e:
        raise ValueError("not JSON: %s" % e)
    if not isinstance(answer, dict):
        raise ValueError("not a JSON object")
    for part in ("server_time", "firmware", "activation", "websocket", "mqtt"):
        if part in answer and not isinstance(answer[part], dict):
            raise ValueError("%s must be an object" % part)
    clock = answer.get("server_time")
    if clock is not None:
        if not _is_number(clock.get("timestamp")) or clock["timestamp"] < 0:
            raise ValueError("server_time.timestamp must be a number of milliseconds")
        if "timezone_offset" in clock and not _is_number(clock["timezone_offset"]):
            raise ValueError("server_time.timezone_offset must be a number of minutes")
    firmware = answer.get("firmware")
    if firmware is not None:
        _check_str("firmware", firmware, "version")
        _check_str("firmware", firmware, "url")
        if "force" in firmware and not _is_number(firmware["force"]):
            raise ValueError("firmware.force must be a number")
    activation = answer.get("activation")
    if activation is not None:
        for key in ("message", "code", "challenge"):
            _check_str("activation", activation, key)
        if "timeout_ms" in activation and not _is_number(activation["timeout_ms"]):
            raise ValueError("activation.timeout_ms must be a number")
    websocket = answer.get("websocket")
    if websocket is not None:
        _check_str("websocket", websocket, "url", True)
        if not (websocket["url"].startswith("ws://") or websocket["url"].startswith("wss://")):
            raise ValueError("websocket.url must be a ws:// or wss:// URL")
        _check_str("websocket", websocket, "token")
        if "version" in websocket and not isinstance(websocket["version"], int):
            raise ValueError("websocket.version must be an integer")
    mqtt = answer.get("mqtt")
    if mqtt is not None and check_mqtt is not None:
        try:
            check_mqtt(mqtt)
        except ValueError as e:
            raise ValueError("mqtt: %s" % e)
    return answer


class OtaCheck:
    """One device's OTA check; check() does it once, run() at boot and every `interval`.

    info: the JSON body (dict) describing the device. Callbacks (plain or coroutine
    functions are not needed: all are plain): set_time(epoch_ms) with the local time in
    ms; show_code(code, message); on_firmware(version, url); on_transport(transport) with
    {"websocket": ...} or {"mqtt": ...} when it differs from the saved one. serial_number
    and hmac_key (bytes) make activation version 2, as a board with an eFuse serial."""

    def __init__(self, url, settings, device_id, client_id, user_agent, info, ca=None,
                 language="en-US", serial_number=None, hmac_key=None, check_mqtt=None,
                 set_time=None, show_code=None, on_firmware=None, on_transport=None,
                 version="0", timeout=15):
        self.url = url
        self.settings = settings
        self.info = info
        self.ca = ca
        self.serial_number = serial_number
        self.hmac_key = hmac_key
        self.check_mqtt = check_mqtt
        self.set_time = set_time
        self.show_code = show_code
        self.on_firmware = on_firmware
        self.on_transport = on_transport
        self.version = version
        self.timeout = timeout
        self.headers = {
            "Activation-Version": "2" if serial_number else "1",
            "Device-Id": device_id,
            "Client-Id": client_id,
            "User-Agent": user_agent,
            "Accept-Language": language,
            "Content-Type": "application/json",
        }
        if serial_number:
            self.headers["Serial-Number"] = serial_number
        self.offer = None  # {"version", "url"} of a newer firmware the server offers
        self.activation = None  # the pending activation block, while there is one
        self.last_error = None  # why the last check failed
        self.checks = 0

    def saved_transport(self):
        return self.settings.get(TRANSPORT_KEY)

    async def check(self):
        """One check: POST, parse, act. Returns the answer dict; raises OtaCheckError (the
        saved settings are untouched then)."""
        self.checks += 1
        try:
            status, body = await http.post_json(self.url, dumps(self.info), self.headers,
                                                self.timeout, self.ca)
        except Exception as e:
            raise OtaCheckError("OTA check at %s failed: %s %s" % (self.url, type(e).__name__, e))
        if status != 200:
            raise OtaCheckError("OTA check at %s: HTTP %d %s" % (self.url, status, body[:200]))
        try:
            answer = parse_answer(body, self.check_mqtt)
        except ValueError as e:
            raise OtaCheckError("OTA answer dropped: %s" % e)
        self._apply(answer)
        return answer

    def _apply(self, answer):
        clock = answer.get("server_time")
        if clock is not None and self.set_time is not None:
            ms = clock["timestamp"] + clock.get("timezone_offset", 0) * 60000
            try:
                self.set_time(int(ms))
            except Exception as e:
                _log.warning("cannot set the clock: %s", e)
        firmware = answer.get("firmware")
        self.offer = None
        if firmware is not None and firmware.get("url") and firmware.get("version"):
            if newer(self.version, firmware["version"]) or firmware.get("force") == 1:
                self.offer = {"version": firmware["version"], "url": firmware["url"]}
                _log.warning("firmware %s offered at %s (running %s)", firmware["version"],
                             firmware["url"], self.version)
                if self.on_firmware is not None:
                    self.on_firmware(firmware["version"], firmware["url"])
        transport = None
        if "mqtt" in answer:  # the reference prefers MQTT when both come
            transport = {"mqtt": answer["mqtt"]}
        elif "websocket" in answer:
            transport = {"websocket": answer["websocket"]}
        if transport is not None and transport != self.saved_transport():
            self.settings.set(TRANSPORT_KEY, transport)  # one atomic save
            _log.info("server settings saved: %s", list(transport)[0])
            if self.on_transport is not None:
                self.on_transport(transport)
        activation = answer.get("activation")
        self.activation = activation if activation and (activation.get("code") or
                                                        activation.get("challenge")) else None
        if self.activation is not None and self.activation.get("code"):
            _log.warning("activation code %s: %s", self.activation["code"],
                         self.activation.get("message") or "")
            if self.show_code is not None:
                try:
                    self.show_code(self.activation["code"], self.activation.get("message") or "")
                except Exception as e:
                    _log.warning("cannot show the activation code: %s", e)

    # -- activation

    def activation_payload(self, challenge):
        if not self.serial_number or self.hmac_key is None:
            return "{}"  # what the reference sends without a serial number
        mac = hmac_sha256(self.hmac_key, challenge.encode())
        return dumps({"algorithm": "hmac-sha256", "serial_number": self.serial_number,
                      "challenge": challenge, "hmac": binascii.hexlify(mac).decode()})

    async def activate(self, sleep=asyncio.sleep):
        """POST to <ota_url>/activate until not 202, within the answer's timeout_ms.
        True when the server said 200."""
        activation = self.activation or {}
        url = self.url + ("activate" if self.url.endswith("/") else "/activate")
        timeout_ms = activation.get("timeout_ms") or _ACTIVATE_TIMEOUT_MS
        payload = self.activation_payload(activation.get("challenge") or "")
        waited = 0
        while waited * 1000 < timeout_ms:
            try:
                status, body = await http.post_json(url, payload, self.headers, self.timeout,
                                                    self.ca)
            except Exception as e:
                status, body = None, "%s %s" % (type(e).__name__, e)
            if status == 200:
                _log.info("activated")
                self.activation = None
                return True
            pause = _ACTIVATE_RETRY_S if status == 202 else _ACTIVATE_ERROR_S
            if status != 202:
                _log.warning("activation failed: %s %s", status, body[:200])
            await sleep(pause)
            waited += pause
        _log.warning("activation not completed within %d ms", timeout_ms)
        return False

    async def until_done(self, retry_s=10, retry_max_s=300, sleep=asyncio.sleep,
                         fallback=False):
        """Check (retrying with a doubling pause) and activate until the server has nothing
        pending; True once an answer arrived without an activation. When a check fails
        and there are saved settings (or `fallback`: the caller has a server of its own),
        False at once: those will do meanwhile."""
        delay = retry_s
        while True:
            try:
                await self.check()
                delay = retry_s
            except OtaCheckError as e:
                self.last_error = str(e)
                _log.warning("%s; again in %d s", e, delay)
                if fallback or self.saved_transport() is not None:
                    return False  # the last good settings will do meanwhile
                await sleep(delay)
                delay = min(delay * 2, retry_max_s)
                continue
            if self.activation is None:
                return True
            await self.activate(sleep)
