"""config.json checked as a whole before anything is built from it: every key the firmware
reads (KEYS) of its kind, the rules that tie values together (mcp_http's auth and token,
the Wi-Fi timings), and the keys it does not know. The board loads it at its start
(umcpfw.boot.read_config) and drops it again; `umcp deploy` runs the same check on the
host before anything is compiled (tools/board/deploy.py). The parts' entries are
parts.check's, the events' umcpfw.eventcheck's. A problem is one ConfigError naming the key:

    config.json: "mcp_http" has "auth": "none" and a "token": keep one of them
"""

from umcp.compat import call_then_forget, const
from umcpfw import ConfigError

_TEXT = const(1)
_WHOLE = const(2)  # a whole number, 0 or more
_NUMBER = const(3)  # a number, 0 or more
_BOOL = const(4)
_OBJECT = const(5)
_LIST = const(6)
_TEXTS = const(7)  # a text or a list of texts
_SECONDS = const(8)  # seconds, 0 or more, or null: never
_INTERVAL = const(9)  # seconds above 0
_MCP_HTTP = const(10)  # an object: umcpfw.bootmore's check_mcp_http(), loaded for it
_EVENTS = const(11)  # a list: umcpfw.eventcheck's check, loaded for it
_BUDGET = const(12)  # tools and links: umcpfw.toolbudget's check, loaded for them

# Every top-level key the firmware reads, and its kind (docs/boards.md#configjson lists
# them all; tests/tooling/test_config_check.py holds the two together).
KEYS = {
    "board": _TEXT, "wifi": _OBJECT, "ota_url": _TEXT, "url": _TEXT, "token": _TEXT,
    "mcp_endpoint": _TEXTS, "mcp_endpoint_tools": _LIST, "mcp_http": _MCP_HTTP,
    "parts": _LIST, "chip": _TEXT, "device_id": _TEXT, "max_payload": _WHOLE,
    "max_message": _WHOLE, "ca": _TEXTS, "tls_verify": _BOOL, "protocol_version": _WHOLE,
    "hello_timeout": _NUMBER, "idle_timeout": _NUMBER, "ping_interval": _NUMBER,
    "backoff_min": _NUMBER, "backoff_max": _NUMBER, "stable_after": _NUMBER,
    "keepalive": _WHOLE, "wifi_setup_after": _SECONDS, "wifi_lost_setup_after": _SECONDS,
    "wifi_check_interval": _INTERVAL, "wifi_setup_port": _WHOLE, "wifi_setup_bind": _TEXT,
    "auto_upgrade": _BOOL, "ota_interval": _NUMBER, "ota_retry": _NUMBER, "language": _TEXT,
    "serial_number": _TEXT, "activation_key": _TEXT, "events": _EVENTS, "tools": _BUDGET,
    "links": _BUDGET,
}
# What a kind must be, in words; some keys say it in their own (their modules' words).
_WORDS = {_TEXT: "text", _WHOLE: "a whole number, 0 or more", _NUMBER: "a number, 0 or more",
          _BOOL: "true or false", _OBJECT: "an object", _LIST: "a list", _TEXTS: "text or a list of texts"}
_OWN_WORDS = {"wifi": 'an object like {"ssid": "my-network", "password": "..."}',
              "parts": 'a list of objects like {"type": "relay", "name": "lamp", "pin": 2}',
              "mcp_endpoint": "a ws:// or wss:// URL, or a list of them",
              "mcp_endpoint_tools": "a list of tool names or prefixes"}


def check(config):
    """ConfigError for the first key of `config` (config.json's object) that is not of its
    kind or is at odds with another; returns the keys it does not know (a list, the
    caller says so: a newer firmware's key, or one misspelt)."""
    if not isinstance(config, dict):
        raise ConfigError("config.json must hold one JSON object")
    unknown = []
    for key in config:
        kind = KEYS.get(key)
        value = config[key]
        if kind is None:
            unknown.append(key)
        elif kind == _SECONDS or kind == _INTERVAL:
            _seconds(key, value, kind == _SECONDS)
        elif kind == _MCP_HTTP:
            if value is not None:  # (its names only where there is one)
                call_then_forget("umcpfw.bootmore", "check_mcp_http", value)
        elif kind == _EVENTS or kind == _BUDGET and value is not None:
            # Modules of their own: a board without these keys interns none of their names.
            call_then_forget("umcpfw.eventcheck" if kind == _EVENTS else "umcpfw.toolbudget", "check",
                             config, key, value)
        elif value is not None and not _is(kind, value):
            raise ConfigError('config.json: "%s" must be %s, not %r'
                              % (key, _OWN_WORDS.get(key) or _WORDS[kind], value))
    wifi = config.get("wifi") or {}
    for key in ("ssid", "password"):
        if wifi.get(key) is not None and not isinstance(wifi[key], str):
            raise ConfigError('config.json: "wifi" %s must be text, not %r' % (key, wifi[key]))
    return unknown


def _is(kind, value):
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _OBJECT:
        return isinstance(value, dict)
    if kind == _LIST:
        return isinstance(value, list)
    if kind == _TEXTS:
        return isinstance(value, str) or isinstance(value, list) and not [v for v in value if not isinstance(v, str)]
    number = _number(value) and value >= 0
    return number and (kind == _NUMBER or value == int(value))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _seconds(key, value, never):
    """A Wi-Fi timing (umcpfw.app.keep_connected, umcpfw.station): a number of seconds, 0 or more, or null (never); the
    check interval above 0."""
    if never and value is None or _number(value) and (value >= 0 if never else value > 0):
        return
    raise ConfigError('config.json: "%s" must be a number of seconds %s, not %r' % (
        key, "(0 or more, or null: never)" if never else "above 0", value))
