# The OTA check's pure parts (devsvc.otacheck): answers checked part by part, version
# order, HMAC-SHA256 (RFC 4231 vectors), the activation payload, and what a check does
# with an answer (clock, offer, saved settings, activation code). Runs under pytest and
# inside MicroPython (unix port and WebAssembly build).
import binascii

from devsvc import otacheck
from portable_support import raises


class FakeSettings:
    def __init__(self):
        self.values = {}
        self.saves = 0

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value):
        self.values[key] = value
        self.saves += 1


def _check(**callbacks):
    return otacheck.OtaCheck("http://ota/xiaozhi/ota/", FakeSettings(), "aa:bb", "uuid-1",
                             "host/0.1.0", {"version": 2}, version="0.1.0", **callbacks)


def _why(text, check_mqtt=None):
    try:
        otacheck.parse_answer(text, check_mqtt)
    except ValueError as e:
        return str(e)
    return None


def test_answers_are_checked_part_by_part():
    assert _why('{"websocket": {"url": "ws://h/x/", "token": "t"}}') is None
    assert _why("{}") is None
    assert "not JSON" in _why("{nope")
    assert "not a JSON object" in _why("[1]")
    assert "firmware must be an object" in _why('{"firmware": "1.0"}')
    assert "server_time.timestamp" in _why('{"server_time": {"timestamp": "x"}}')
    assert "timezone_offset" in _why('{"server_time": {"timestamp": 1, "timezone_offset": "+8"}}')
    assert "firmware.url" in _why('{"firmware": {"version": "1", "url": 5}}')
    assert "activation.code" in _why('{"activation": {"code": 123456}}')
    assert "activation.timeout_ms" in _why('{"activation": {"timeout_ms": "30s"}}')
    assert "websocket.url" in _why('{"websocket": {"token": "t"}}')
    assert "ws:// or wss://" in _why('{"websocket": {"url": "http://h/"}}')

    def refuse(block):
        raise ValueError("endpoint missing")

    assert _why('{"mqtt": {}}', refuse) == "mqtt: endpoint missing"


def test_version_order():
    assert otacheck.newer("0.1.0", "0.2.0") and otacheck.newer("1.9", "1.10")
    assert otacheck.newer("1.0", "1.0.1") and not otacheck.newer("1.0.1", "1.0")
    assert not otacheck.newer("0.1.0", "0.1.0") and not otacheck.newer("2.0", "1.99")
    assert otacheck.newer("1.2.3-beta", "1.2.4")


def test_hmac_sha256_rfc4231():
    key = b"\x0b" * 20
    mac = otacheck.hmac_sha256(key, b"Hi There")
    assert binascii.hexlify(mac) == (b"b0344c61d8db38535ca8afceaf0bf12b"
                                     b"881dc200c9833da726e9376c2e32cff7")
    long_key = b"\xaa" * 131  # longer than a block: hashed first
    mac = otacheck.hmac_sha256(long_key, b"Test Using Larger Than Block-Size Key - Hash Key First")
    assert binascii.hexlify(mac) == (b"60e431591ee0b67f0d8a26aacbf5b77f"
                                     b"8e0bc6213728c5140546040f0ee37f54")


def test_activation_payload_with_and_without_a_serial_number():
    check = _check()
    assert check.activation_payload("c") == "{}"
    assert check.headers["Activation-Version"] == "1"
    signed = otacheck.OtaCheck("http://ota/", FakeSettings(), "aa", "u", "ua", {},
                               serial_number="SN1", hmac_key=b"k")
    assert signed.headers["Activation-Version"] == "2" and signed.headers["Serial-Number"] == "SN1"
    import json

    body = json.loads(signed.activation_payload("c-1"))
    assert body["algorithm"] == "hmac-sha256" and body["serial_number"] == "SN1"
    assert body["challenge"] == "c-1"
    assert body["hmac"] == binascii.hexlify(otacheck.hmac_sha256(b"k", b"c-1")).decode()


def test_an_answer_sets_the_clock_offers_firmware_saves_settings_and_shows_the_code():
    seen = {}
    check = _check(set_time=lambda ms: seen.setdefault("time", ms),
                   show_code=lambda code, message: seen.setdefault("code", (code, message)),
                   on_firmware=lambda version, url: seen.setdefault("firmware", (version, url)),
                   on_transport=lambda transport: seen.setdefault("transport", transport))
    answer = otacheck.parse_answer(
        '{"server_time": {"timestamp": 1000, "timezone_offset": 60},'
        ' "firmware": {"version": "0.2.0", "url": "http://fw/app.bin"},'
        ' "activation": {"code": "123456", "message": "enter it", "challenge": "c"},'
        ' "websocket": {"url": "ws://h/", "token": "t"},'
        ' "mqtt": {"endpoint": "h:1883", "client_id": "c", "publish_topic": "p"}}')
    check._apply(answer)
    assert seen["time"] == 1000 + 3600000
    assert seen["firmware"] == ("0.2.0", "http://fw/app.bin")
    assert check.offer == {"version": "0.2.0", "url": "http://fw/app.bin"}
    assert seen["code"] == ("123456", "enter it") and check.activation is not None
    assert seen["transport"] == {"mqtt": answer["mqtt"]}  # MQTT first, as the reference
    assert check.settings.values["transport"] == {"mqtt": answer["mqtt"]}
    # The same settings again: no save, no reconnect; an older firmware: no offer.
    check.settings.saves = 0
    seen.clear()
    check._apply(otacheck.parse_answer(
        '{"firmware": {"version": "0.0.9", "url": "http://fw/old.bin"},'
        ' "mqtt": {"endpoint": "h:1883", "client_id": "c", "publish_topic": "p"}}'))
    assert check.settings.saves == 0 and seen == {} and check.offer is None
    assert check.activation is None
    check._apply(otacheck.parse_answer('{"firmware": {"version": "0.0.9", "url": "u", "force": 1}}'))
    assert check.offer == {"version": "0.0.9", "url": "u"}


def test_a_failing_clock_or_display_does_not_stop_the_check():
    def broken(*args):
        raise OSError(5)

    check = _check(set_time=broken, show_code=broken)
    check._apply(otacheck.parse_answer(
        '{"server_time": {"timestamp": 5}, "activation": {"code": "1"}}'))
    assert check.activation == {"code": "1"}
    assert raises(ValueError, otacheck.parse_answer, '{"websocket": []}')
