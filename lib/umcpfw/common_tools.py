# The self.* tools every board gets. They are registered before the board's own tools so
# the head of tools/list is the same on every board (LLM prompt caches stay warm), and each
# appears only where the board has the hardware behind it. Names and descriptions follow
# the reference firmware (xiaozhi-esp32 main/mcp_server.cc).
import gc
import sys
import time

from umcp import ImageContent
from umcp.compat import call_then_forget, const, get_logger
from umcpfw.resources import STATUS_URI
from unet import conn

# umcpfw.upgrading (and with it devsvc.upgrade and unet.download) is imported by the upgrade
# itself: most sessions never upgrade, and on a board without PSRAM its bytecode is heap
# that the session needs.

REBOOT_DELAY_MS = const(1000)  # as the reference: the reply leaves first
_BOOT_S = time.time()
_log = get_logger("tools")

def _runtime():
    v = sys.implementation.version
    name = "MicroPython" if sys.implementation.name == "micropython" else "CPython"
    return "%s %d.%d.%d" % (name, v[0], v[1], v[2])


def _partitions():
    """Which app partition runs and which boots next, where there are OTA partitions."""
    try:
        from esp32 import Partition

        return {"running": Partition(Partition.RUNNING).info()[4],
                "boot": Partition(Partition.BOOT).info()[4]}
    except (ImportError, AttributeError, OSError):
        return None


def _rtc():
    """The RTC's (year, month, day, weekday, hours, minutes, seconds, subseconds)."""
    try:
        import machine

        return list(machine.RTC().datetime())
    except (ImportError, AttributeError, OSError):
        return None


class CommonTools:
    """The common tools over one board. reboot(delay_ms) is how the app restarts the device;
    ca is what https downloads trust (a unet.conn.Trust, or CA certificates; None: the
    shipped roots), verified unless the Trust says otherwise."""

    def __init__(self, server, board, settings, vision, version, reboot, ca=None):
        self.server = server
        self.board = board
        self.settings = settings
        self.vision = vision
        self.version = version
        self.reboot = reboot
        self.ca = ca
        # The background upgrade's task, from its start until it fails. An upgrade inside
        # the call needs no guard: the server runs calls one at a time.
        self._upgrade = None
        # The DeviceResources that keeps the last photo (set by the app), or None.
        self.resources = None
        self.offer = None  # {"version", "url"}: a newer firmware the OTA server offers
        self.mcp_url = None  # the board's own MCP endpoint, where config.json enables it
        self.endpoints = ()  # the app's MCP endpoint links (get_system_info: status(), masked)

    def register(self):
        """Register the common tools on the server (umcpfw.common_setup: loaded for that,
        then dropped: it runs once, at boot)."""
        call_then_forget("umcpfw.common_setup", "register", self)

    # Visible tools

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
        self.settings.set("volume", args["volume"])
        self.server.resource_updated(STATUS_URI)  # a no-op unless a client subscribed
        return True

    def set_brightness(self, args):
        self.board.backlight.set_brightness(args["brightness"])
        self.settings.set("brightness", args["brightness"])
        self.server.resource_updated(STATUS_URI)
        return True

    def set_theme(self, args):
        theme = args["theme"]  # one of THEMES: the enum is checked before the call
        self.board.display.set_theme(theme)  # the driver refuses anything but light/dark
        self.settings.set("theme", theme)
        self.server.resource_updated(STATUS_URI)
        return True

    async def take_photo(self, args):
        jpeg = self._capture()  # raises OSError when the capture fails
        return await self.vision.explain(args["question"], jpeg)

    # User-only tools

    def get_system_info(self, args):
        info = {
            "firmware_version": self.version,
            "board": self.board.name,
            "runtime": _runtime(),
            "platform": sys.platform,
            "device_id": self.vision.device_id,
            "client_id": self.vision.client_id,
            "uptime_s": int(time.time() - _BOOT_S),
            "max_message": self.server.max_message,
        }
        if hasattr(gc, "mem_free"):
            gc.collect()  # live data only, not garbage awaiting the next collection
            info["free_heap"] = gc.mem_free()
            info["heap_used"] = gc.mem_alloc()
        partitions = _partitions()
        if partitions:
            info["ota"] = partitions
        if self.offer:
            info["firmware_offer"] = self.offer
        if self.mcp_url:
            info["mcp_url"] = self.mcp_url
        if self.endpoints:
            states = info["mcp_endpoints"] = []
            for link in self.endpoints:
                states.append(link.status())
        rtc = _rtc()
        if rtc:
            info["rtc"] = rtc
        return info

    def reboot_tool(self, args):
        # The reply leaves before the reset: the reboot waits on its own task.
        self.reboot(REBOOT_DELAY_MS)
        return True

    def reconfigure_wifi(self, args):
        # A flag for the next boot, then a reboot: the setup (umcpfw.wifisetup) starts on a
        # fresh heap, and a board that loses power meanwhile boots normally again.
        self.settings.set("wifi_setup", True)
        self.reboot(REBOOT_DELAY_MS)
        return ("restarting into Wi-Fi setup: join the board's access point (its name and "
                "password are on its screen and in its log)")

    async def upgrade_firmware(self, args):
        from umcpfw import upgrading  # only while an upgrade is asked for

        return await upgrading.upgrade_firmware(self, args["url"], args["sha256"] or None)

    def start_upgrade(self, url, sha256=None, installed=None):
        """Upgrade on a task of its own (the OTA check's auto_upgrade, or a call without a
        progress token); the outcome is logged and sent as a notifications/message.
        installed(): called once the image is verified and set to boot, before the reboot."""
        from umcpfw import upgrading

        upgrading.start(self, url, sha256, installed)

    def get_photo(self, args):
        return ImageContent(self._capture(), "image/jpeg")

    def _capture(self):
        jpeg = self.board.camera.capture()
        if self.resources is not None:
            self.resources.keep_photo(jpeg)  # device://photo/last
        return jpeg

    def screen_info(self, args):
        return self.board.display.info()

    def set_assets_url(self, args):
        url = args["url"]
        # Checked before it is stored: the download that reads it later must not find a URL
        # that adds header lines to its request, or one no download can use.
        if conn.parse_url(url)[0] not in ("http", "https"):
            raise ValueError("not an HTTP URL: " + url)
        self.settings.set("asset_url", url)
        return True
