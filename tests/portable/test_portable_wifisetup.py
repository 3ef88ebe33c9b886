# The Wi-Fi setup's form handling (umcpfw.wifisetup): parsing, checks, escaping, the
# atomic save that keeps the rest of config.json; under CPython and inside MicroPython.
import json
import os

from umcpfw import wifisetup


def test_a_form_is_parsed_with_its_escapes():
    form = wifisetup.parse_form(b"ssid=caf%C3%A9+net&password=a%26b%3Dc&empty=")
    assert form == {"ssid": "caf\u00e9 net", "password": "a&b=c", "empty": ""}
    for bad in (b"ssid=%", b"ssid=%4", b"ssid=%zz", b"ssid=%ff"):
        try:
            wifisetup.parse_form(bad)
        except ValueError:
            continue
        assert False, bad


def test_every_field_is_checked_with_a_message():
    assert wifisetup.check({"ssid": "home", "password": ""}) == ({"ssid": "home", "password": ""}, "", "", "")
    good = wifisetup.check({"ssid": "h" * 32, "password": "p" * 63, "ota_url": " https://o/ota/ ",
                            "url": "wss://s/xiaozhi/v1/", "token": " t0k-3n "})
    assert good == ({"ssid": "h" * 32, "password": "p" * 63}, "https://o/ota/", "wss://s/xiaozhi/v1/", "t0k-3n")
    cases = [
        ({"ssid": ""}, "Network: 1 to 32 bytes, got 0"),
        ({"ssid": "\u00e9" * 17}, "Network: 1 to 32 bytes, got 34"),
        ({"ssid": "a\nb"}, "Network: no control characters"),
        ({"ssid": "x", "password": "1234567"}, "or 8 to 63 characters, got 7"),
        ({"ssid": "x", "password": "p" * 64}, "got 64"),
        ({"ssid": "x", "password": "\u00e9" * 8}, "printable ASCII characters only"),
        ({"ssid": "x", "ota_url": "ws://o/"}, "OTA URL: http:// or https://"),
        ({"ssid": "x", "url": "https://s/"}, "Server URL: ws:// or wss://"),
        ({"ssid": "x", "url": "ws://"}, "Server URL"),
        ({"ssid": "x", "url": "ws://a b/"}, "Server URL"),
        ({"ssid": "x", "url": "ws://" + "a" * 300}, "Server URL"),
        ({"ssid": "x", "token": "a b"}, "Token: at most 256 printable ASCII characters, no spaces"),
        ({"ssid": "x", "token": "t" * 257}, "Token"),
        ({"ssid": "x", "token": "t\u00e9"}, "Token"),
    ]
    for form, words in cases:
        try:
            wifisetup.check(form)
        except ValueError as e:
            assert words in str(e), (form, str(e))
            continue
        assert False, form


def test_escape_leaves_no_markup():
    assert wifisetup.escape('<a href="x">\'&</a>') == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&lt;/a&gt;"
    assert wifisetup.escape("plain") == "plain"


def test_the_access_point_key_is_wpa2_ready():
    key = wifisetup.access_point_key()
    assert len(key) == 8 and [c for c in key if c in wifisetup._KEY_CHARS] == list(key)


def test_a_save_keeps_the_rest_of_config_json():
    path = "wifisetup-test-config.json"
    with open(path, "w") as f:
        f.write(json.dumps({"board": "generic", "wifi": {"ssid": "old", "password": ""},
                            "url": "ws://keep/", "parts": [1]}))
    try:
        wifisetup.save({"ssid": "new", "password": "12345678"}, "http://o/", "", "", path)
        with open(path) as f:
            saved = json.loads(f.read())
        assert saved == {"board": "generic", "wifi": {"ssid": "new", "password": "12345678"},
                         "url": "ws://keep/", "parts": [1], "ota_url": "http://o/"}
    finally:
        os.remove(path)


def _saved(config, url="", token="", ota_url="", provisioned=(None, None)):
    """What save() leaves in a config.json holding `config` (the Wi-Fi "new" given), or the
    ValueError's words: the file then as it was."""
    path = "wifisetup-server-config.json"
    with open(path, "w") as f:
        f.write(json.dumps(config))
    try:
        try:
            wifisetup.save({"ssid": "new", "password": ""}, ota_url, url, token, path, provisioned)
        except ValueError as e:
            with open(path) as f:
                assert json.loads(f.read()) == config  # nothing written
            return str(e)
        with open(path) as f:
            return json.loads(f.read())
    finally:
        os.remove(path)


def test_a_board_is_never_left_without_a_server_to_reach():
    # Nothing in config.json to connect to: the network alone would not start.
    assert _saved({"board": "generic"}) == \
        "Server: give the OTA URL, or the server's WebSocket URL and its token"
    assert _saved({"board": "generic"}, url="ws://s/") == "Token: the server's WebSocket URL needs its token"
    assert _saved({"board": "generic"}, token="t") == \
        "Server: give the OTA URL, or the server's WebSocket URL and its token"
    # Any way there is enough: given now, kept from config.json, or provisioned earlier.
    assert _saved({"board": "generic"}, url="ws://s/", token="t")["token"] == "t"
    assert _saved({"board": "generic"}, ota_url="http://o/")["ota_url"] == "http://o/"
    assert _saved({"board": "generic", "token": "kept"}, url="ws://s/")["url"] == "ws://s/"
    assert _saved({"board": "generic", "url": "ws://kept/", "token": "kept"})["wifi"]["ssid"] == "new"
    assert _saved({"board": "generic", "mcp_endpoint": "wss://e/mcp/?token=x"})["wifi"]["ssid"] == "new"
    assert _saved({"board": "generic", "mcp_http": {"token": "x"}})["wifi"]["ssid"] == "new"
    assert _saved({"board": "generic"}, provisioned=("wss://p/", "pt"))["wifi"]["ssid"] == "new"
    assert _saved({"board": "generic"}, url="ws://s/", provisioned=(None, "pt"))["url"] == "ws://s/"
