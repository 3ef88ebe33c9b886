"""A STAND-IN for the ESP32's network module, put on the QEMU board by the tests (the board
has no radio): a station that never finds its network, so the firmware's main.py keeps
retrying Wi-Fi, as a board out of its network's reach does. It says each connect() on
the line, which tells the tests that main.py runs the firmware.
"""
STA_IF = 0
AP_IF = 1
STAT_IDLE = 1000
STAT_NO_AP_FOUND = 201

_status = [STAT_IDLE]


class WLAN:
    def __init__(self, interface=STA_IF):
        self.interface = interface

    def active(self, on=None):
        return False if on is None else None

    def config(self, *args, **kwargs):
        if args == ("mac",):
            return b"\x02\x00\x51\x0e\x00\x01"
        if args:
            return ""
        return None

    def connect(self, ssid=None, key=None):
        print("network stand-in: WLAN.connect(%r)" % (ssid,))
        _status[0] = STAT_NO_AP_FOUND

    def disconnect(self):
        pass

    def isconnected(self):
        return False

    def status(self, param=None):
        if param is not None:
            raise ValueError("not connected")
        return _status[0]

    def ifconfig(self, *args):
        return ("0.0.0.0", "0.0.0.0", "0.0.0.0", "0.0.0.0")

    def scan(self):
        return []


def hostname(name=None):
    return "qemu-board"
