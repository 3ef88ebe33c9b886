"""Simulated `network` module: a WLAN station that connects at once, or fails on request,
and the access point of the Wi-Fi setup.

Tests make connects fail (`sim_fail_connects()`, `sim_unreachable()`), drop the link
(`sim_drop()`), set what a scan finds (`sim_scan()`) and read what the firmware did
(`sim_connects()`, `sim_hostnames()`, `sim_access_point()`); `sim_watch(hook)` runs a
hook before each look at the station, where the simulator applies a change of the
surroundings. `sim_reset()` starts afresh. Each helper: docs/simulator.md, "The
simulated machine and network".
"""

from simhistory import History

CONNECTS_KEPT = 16

STA_IF = 0
AP_IF = 1

# The ESP32 port's status codes.
STAT_IDLE = 1000
STAT_CONNECTING = 1001
STAT_GOT_IP = 1010
STAT_BEACON_TIMEOUT = 200
STAT_NO_AP_FOUND = 201
STAT_WRONG_PASSWORD = 202
STAT_ASSOC_FAIL = 203
STAT_HANDSHAKE_TIMEOUT = 204

_MAC = b"\x24\x0a\xc4\x12\x34\x56"
_IFCONFIG = ("192.168.4.2", "255.255.255.0", "192.168.4.1", "192.168.4.1")
_AP_IFCONFIG = ("192.168.4.1", "255.255.255.0", "192.168.4.1", "192.168.4.1")
AUTH_OPEN = 0
AUTH_WPA2_PSK = 3


class WLAN:
    def __init__(self, interface_id=STA_IF):
        self._if = interface_id
        if interface_id == AP_IF:
            self._config = _state["ap"]
        else:
            self._config = {"mac": _MAC, "ssid": "", "essid": "", "hostname": "umcp"}

    def active(self, is_active=None):
        if self._if == AP_IF:
            if is_active is not None:
                self._config["active"] = bool(is_active)
            return self._config["active"]
        if is_active is None:
            return _state["active"]
        _state["active"] = bool(is_active)
        if not is_active:
            _state["status"] = STAT_IDLE

    def connect(self, ssid=None, key=None, *, bssid=None):
        if self._if == AP_IF:
            raise OSError("the access point connects to nothing")
        _look()
        if not _state["active"]:
            raise OSError("Wifi Not Started")  # the ESP32 port's message
        _state["connects"].append((ssid, key))
        self._config["ssid"] = self._config["essid"] = ssid
        if _state["failures"] > 0:
            _state["failures"] -= 1
            _state["status"] = _state["fail_status"]
        elif ssid in _state["unreachable"]:
            _state["status"] = STAT_NO_AP_FOUND
        else:
            _state["status"] = STAT_GOT_IP
            _state["joined"] = ssid

    def scan(self):
        _look()
        if self._if == AP_IF or not _state["active"]:
            raise OSError("Wifi Not Started")
        return [(ssid.encode(), _MAC, 6, rssi, 3, False) for ssid, rssi in _state["scan"]]

    def disconnect(self):
        _state["status"] = STAT_IDLE

    def isconnected(self):
        _look()
        return _state["status"] == STAT_GOT_IP

    def status(self, param=None):
        _look()
        if param == "rssi":
            return -50
        return _state["status"]

    def ifconfig(self, config=None):
        if config is not None:
            return None
        if self._if == AP_IF:
            return _AP_IFCONFIG
        if not self.isconnected():
            return ("0.0.0.0", "0.0.0.0", "0.0.0.0", "0.0.0.0")
        return _IFCONFIG

    def config(self, *args, **kwargs):
        if args:
            return self._config[args[0]]
        if self._if == AP_IF:
            for key, value in kwargs.items():
                if key in ("essid", "ssid"):
                    key = "ssid"
                elif key in ("password", "key"):
                    key = "key"
                elif key in ("authmode", "security"):
                    key = "security"
                self._config[key] = value
            if self._config["security"] and not 8 <= len(self._config["key"] or "") <= 63:
                raise OSError("WPA2 needs a key of 8 to 63 characters")
            return
        self._config.update(kwargs)


def hostname(name=None):
    """The name DHCP and mDNS announce (`<name>.local`); set it before connecting."""
    if name is None:
        return _state["hostname"]
    if not isinstance(name, str):
        raise TypeError("hostname must be a str")
    if len(name) > 32:
        raise ValueError("hostname too long")
    _state["hostname"] = name
    _state["hostnames"].append(name)


# --- simulation control (not part of MicroPython's network) ---

def sim_reset():
    global _state
    _state = {"active": False, "status": STAT_IDLE, "failures": 0,
              "fail_status": STAT_NO_AP_FOUND, "connects": History(CONNECTS_KEPT),
              "hostname": "ESP32", "hostnames": History(CONNECTS_KEPT),
              "ap": {"active": False, "ssid": "", "key": "", "security": 0, "mac": _MAC},
              "unreachable": (), "scan": (), "joined": None, "hook": None}


def _look():
    if _state["hook"] is not None:
        _state["hook"]()


def sim_watch(hook):
    _state["hook"] = hook


def sim_unreachable(ssids):
    _state["unreachable"] = tuple(ssids)
    if _state["status"] == STAT_GOT_IP and _state["joined"] in _state["unreachable"]:
        _state["status"] = STAT_BEACON_TIMEOUT


def sim_scan(networks):
    _state["scan"] = tuple((ssid, rssi) for ssid, rssi in networks)


def sim_access_point():
    """What the access point was set to: {"active", "ssid", "key", "security"}."""
    ap = _state["ap"]
    return {"active": ap["active"], "ssid": ap["ssid"], "key": ap["key"],
            "security": ap["security"]}


def sim_hostnames():
    return _state["hostnames"]


def sim_fail_connects(n, status=STAT_NO_AP_FOUND):
    _state["failures"] = n
    _state["fail_status"] = status


def sim_drop():
    _state["status"] = STAT_IDLE


def sim_connects():
    return _state["connects"]


sim_reset()
