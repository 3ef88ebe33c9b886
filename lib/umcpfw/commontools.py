"""The self.* tools every board gets. They are registered before the board's own tools so
the head of tools/list is the same on every board (LLM prompt caches stay warm), and each
appears only where the board has the hardware behind it. Names and descriptions follow
the reference firmware (xiaozhi-esp32 main/mcp_server.cc).

What a model calls (the status, the volume, the brightness, the theme) is here, resident.
The user-only tools are umcpfw.sysinfo's (system information) and umcpfw.systools' (reboot,
Wi-Fi setup, the assets URL, the screen's facts), the upgrade umcpfw.upgrading's: each loaded for its call
(umcp.compat.OnDemand) and dropped after, as are the camera's (umcpfw.vision). Their
registration is umcpfw.commonsetup's (boot only). The alarms' calls are umcpfw.alarmtools' and
alarmlist's, loaded for each; the alarms' task umcpfw.alarms', loaded only while there are some.
Also here, resident from the start: LogRing, the recent log lines (device://log)."""

import time

from umcp.compat import OnDemand, call_then_forget, const, ticks_diff, ticks_ms

STATUS_URI = "device://status"  # umcpfw.resources: the resource the status tools change


class CommonTools:
    """The common tools over one board: what their callbacks (here and in the modules
    loaded for them) share. reboot(delay_ms) is how the app restarts the device; ca is
    what https downloads trust (a unet.Trust, or CA certificates; None: the shipped
    roots), verified unless the Trust says otherwise."""

    reboot_delay_ms = 1000  # a tool's reboot, as the reference's: its reply leaves first
    # Class defaults: what is not set yet (or at all) takes no room in each instance's dict.
    app = None  # the Application (umcpfw.boot sets it): its link and screen, for an alarm
    alarms = None  # the alarms' clock (umcpfw.alarmring's) while there are alarms
    log_ring = None  # the recent log lines (LogRing, below), for device://log
    vision = None  # (url, token): where photos go, as the backend said (umcpfw.vision)
    vision_refused = None  # why the backend's vision URL was refused, if it was
    photo = None  # the last JPEG the camera took (device://photo/last), or None
    # The background upgrade's task, from its start until it fails. An upgrade inside
    # the call needs no guard: the server runs calls one at a time.
    upgrade_task = None
    offer = None  # {"version", "url"}: a newer firmware the OTA server offers
    mcp_url = None  # the board's own MCP endpoint, where config.json enables it
    endpoints = ()  # the app's MCP endpoint links (get_system_info: status(), masked)

    def __init__(self, server, board, settings, version, reboot, device_id, client_id, ca=None):
        self.server = server
        self.board = board
        self.settings = settings
        self.version = version
        self.reboot = reboot
        self.device_id = device_id
        self.client_id = client_id
        self.ca = ca
        self.started = time.time()  # get_system_info's uptime

    def register(self):
        """Register the common tools on the server (umcpfw.commonsetup: loaded for that,
        then dropped: it runs once, at boot)."""
        call_then_forget("umcpfw.commonsetup", "register", self)

    def callback(self, target):
        """The callback a tool catalogue's target names (umcp.catalogue; written by
        tools/board/catalogue.py): ["tools", method] of these tools, ["board", method],
        ["part", name, method] of a part, ["load", module, function] loaded for each call."""
        kind = target[0]
        if kind == "tools":
            return getattr(self, target[1])
        if kind == "board":
            return getattr(self.board, target[1])
        if kind == "part":
            return getattr(self.board.part(target[1]), target[2])
        return OnDemand(target[1], target[2], self)

    def get_device_status(self, args):
        b = self.board
        status = {"network": self._network()}
        if b.speaker:
            status["audio_speaker"] = {"volume": b.speaker.volume}
        screen = {}
        if b.backlight:
            screen["brightness"] = b.backlight.brightness
        if b.display:
            screen["theme"] = b.display.theme
        if screen:
            status["screen"] = screen
        status.update(b.status())
        return status

    def _network(self):
        wlan = self.board.wlan
        if wlan is None:
            return {"type": "host"}
        net = {"type": "wifi", "connected": wlan.isconnected()}
        if net["connected"]:
            net["ssid"] = wlan.config("essid")
            try:
                net["rssi"] = wlan.status("rssi")
            except (OSError, ValueError):
                pass  # not every port reports it
        return net

    def set_volume(self, args):
        self.board.speaker.set_volume(args["volume"])
        self._saved("volume", args["volume"])
        return True

    def set_brightness(self, args):
        self.board.backlight.set_brightness(args["brightness"])
        self._saved("brightness", args["brightness"])
        return True

    def set_theme(self, args):
        theme = args["theme"]  # one of THEMES: the enum is checked before the call
        self.board.display.set_theme(theme)  # the driver refuses anything but light/dark
        self._saved("theme", theme)
        return True

    def _saved(self, key, value):
        self.settings.set(key, value)
        self.server.resource_updated(STATUS_URI)  # a no-op unless a client subscribed

    def start_upgrade(self, url, sha256=None, installed=None):
        """Upgrade on a task of its own (the OTA check's auto_upgrade); the outcome is
        logged and sent as a notifications/message. installed(): called once the image is
        verified and set to boot, before the reboot."""
        from umcpfw import upgrading

        upgrading.start(self, url, sha256, installed)


# -- the recent log lines (device://log): a log sink of umcp.compat, resident from the start
# (boot adds it before anything else), so the lines of the whole session are there when a
# client asks (umcpfw.resources reads them). Here, not in a module of its own: a resident
# module is a module object, its dict and its path's name on the heap for good.

LOG_LINES = const(12)  # 120 bytes of heap each, for the whole session
LOG_LINE_CHARS = const(120)  # UTF-8 bytes; at most 255
_LOST = const(b"(a log line was lost: out of memory)")


class LogRing:
    """The last `lines` log lines, each cut to `line_chars` bytes of UTF-8: slots in one
    bytearray allocated up front, so it never grows and leaves no long-lived strings
    scattered over the heap (they would fragment it). `add` is a umcp.compat log sink:
    it writes each piece of the line into its slot where it lies (no line is built first)
    and never raises; with no heap even for that, the slot says a line was lost."""

    def __init__(self, lines=LOG_LINES, line_chars=LOG_LINE_CHARS):
        self.capacity = lines
        self._buf = bytearray(lines * line_chars)
        self._lens = bytearray(lines)  # 0: an empty slot (a line has its timestamp at least)
        self._next = 0
        self._chars = line_chars
        self._start = ticks_ms()

    def add(self, level, logger, message):
        at = self._next * self._chars
        try:
            n = self._write(at, level, logger, message)
        except Exception:  # MemoryError above all: a log sink must not raise
            n = len(_LOST)
            self._buf[at:at + n] = _LOST
        self._lens[self._next] = n
        self._next = (self._next + 1) % self.capacity

    def _write(self, at, level, logger, message):
        """Write the line into the slot at `at`; returns its length in bytes."""
        buf = self._buf
        end = at + self._chars
        ms = ticks_diff(ticks_ms(), self._start)
        pos = at
        for piece in ("%d.%03d " % (ms // 1000, ms % 1000), level, " ", logger, ": ", message):
            data = _utf8(piece)
            n = len(data)
            if pos + n > end:  # cut, at a character's start, and say so
                buf[pos:end] = data[:end - pos]
                pos = end - 3
                while pos > at and buf[pos] & 0xC0 == 0x80:
                    pos -= 1
                buf[pos:pos + 3] = b"..."
                pos += 3
                break
            buf[pos:pos + n] = data
            pos += n
        k = buf.find(b"\n", at, pos)
        while k >= 0:  # one line each
            buf[k] = 32
            k = buf.find(b"\n", k + 1, pos)
        return pos - at

    def lines(self):
        """The kept lines, oldest first."""
        count = self.capacity
        chars = self._chars
        kept = []
        for i in range(count):
            slot = (self._next + i) % count
            n = self._lens[slot]
            if n:
                kept.append(str(self._buf[slot * chars:slot * chars + n], "utf-8"))
        return kept

    def text(self):
        lines = self.lines()
        return "\n".join(lines) + "\n" if lines else ""


def _utf8(text):
    """The UTF-8 bytes of `text`: on MicroPython a view of the str itself (no copy)."""
    try:
        return memoryview(text)
    except TypeError:  # CPython: str has no buffer
        return text.encode()
