# The self.* tools every board gets. They are registered before the board's own tools so
# the head of tools/list is the same on every board (LLM prompt caches stay warm), and each
# appears only where the board has the hardware behind it. Names and descriptions follow
# the reference firmware (xiaozhi-esp32 main/mcp_server.cc).
import asyncio
import gc
import sys
import time

from drivers.display import THEMES
from umcp import INTEGER, STRING, ImageContent, McpTool, Property, PropertyList
from umcp.compat import const, get_logger
from umcpfw.resources import STATUS_URI
from unet import conn

# umcpfw.upgrading (and with it devsvc.upgrade and unet.http) is imported by the upgrade
# itself: most sessions never upgrade, and on a board without PSRAM its bytecode is heap
# that the session needs.

REBOOT_DELAY_MS = const(1000)  # as the reference: the reply leaves first
_BOOT_S = time.time()
_log = get_logger("tools")

STATUS_DESCRIPTION = (
    "Provides the real-time information of the device, including the current status of "
    "the audio speaker, screen, battery, network, etc.\n"
    "Use this tool for: \n"
    "1. Answering questions about current condition (e.g. what is the current volume of "
    "the audio speaker?)\n"
    "2. As the first step to control the device (e.g. turn up / down the volume of the "
    "audio speaker, etc.)")
PHOTO_DESCRIPTION = (
    "Take a photo and explain it. Use this tool after the user asks you to see something.\n"
    "Args:\n"
    "  `question`: The question that you want to ask about the photo.\n"
    "Return:\n"
    "  A JSON object that provides the photo information.")


# What the JSON-returning tools return, for clients of 2025-06-18 and later (outputSchema,
# structuredContent). JSON text, not dicts: a literal is in flash when frozen, and text takes
# less heap than nested dicts. Objects may carry more than listed (a board's own facts).
STATUS_SCHEMA = (
    '{"type":"object","properties":{'
    '"network":{"type":"object","properties":{"type":{"type":"string"},'
    '"connected":{"type":"boolean"},"ssid":{"type":"string"},"rssi":{"type":"integer"}}},'
    '"audio_speaker":{"type":"object","properties":{"volume":{"type":"integer"}}},'
    '"screen":{"type":"object","properties":{"brightness":{"type":"integer"},'
    '"theme":{"type":"string"}}},'
    '"board":{"type":"string"}},"required":["network","board"]}')
SYSTEM_SCHEMA = (
    '{"type":"object","properties":{"firmware_version":{"type":"string"},'
    '"board":{"type":"string"},"runtime":{"type":"string"},"platform":{"type":"string"},'
    '"device_id":{"type":"string"},"client_id":{"type":"string"},'
    '"uptime_s":{"type":"integer"},"max_message":{"type":"integer"},'
    '"free_heap":{"type":"integer"},"heap_used":{"type":"integer"},'
    '"ota":{"type":"object","properties":{"running":{"type":"string"},"boot":{"type":"string"}}},'
    '"firmware_offer":{"type":"object"},"rtc":{"type":"array","items":{"type":"integer"}},'
    '"mcp_url":{"type":"string"}},'
    '"required":["firmware_version","board","runtime","device_id","uptime_s"]}')
SCREEN_SCHEMA = (
    '{"type":"object","properties":{"width":{"type":"integer"},"height":{"type":"integer"},'
    '"type":{"type":"string"},"monochrome":{"type":"boolean"},"theme":{"type":"string"}},'
    '"required":["width","height"]}')


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
        s, b = self.server, self.board
        s.add_tool(McpTool("self.get_device_status", STATUS_DESCRIPTION, None,
                           self.get_device_status, read_only=True, output_schema=STATUS_SCHEMA))
        if b.speaker:
            s.add_tool(
                "self.audio_speaker.set_volume",
                "Set the volume of the audio speaker. If the current volume is unknown, you must "
                "call `self.get_device_status` tool first and then call this tool.",
                PropertyList([Property("volume", INTEGER, minimum=0, maximum=100)]),
                self.set_volume, destructive=False, idempotent=True, open_world=False)
        if b.backlight:
            s.add_tool(
                "self.screen.set_brightness", "Set the brightness of the screen.",
                PropertyList([Property("brightness", INTEGER, minimum=0, maximum=100)]),
                self.set_brightness, destructive=False, idempotent=True, open_world=False)
        if b.display:
            s.add_tool(
                "self.screen.set_theme",
                "Set the theme of the screen. The theme can be `light` or `dark`.",
                PropertyList([Property("theme", STRING, enum=THEMES)]),
                self.set_theme, destructive=False, idempotent=True, open_world=False)
        if b.camera:
            s.add_tool("self.camera.take_photo", PHOTO_DESCRIPTION,
                       PropertyList([Property("question", STRING)]),
                       self.take_photo, read_only=True, open_world=True)
        self._register_user_only()

    def _register_user_only(self):
        s = self.server
        s.add_tool(McpTool("self.get_system_info", "Get the system information", None,
                           self.get_system_info, user_only=True, read_only=True,
                           output_schema=SYSTEM_SCHEMA))
        s.add_user_only_tool("self.reboot", "Reboot the system", PropertyList([]),
                             self.reboot_tool, destructive=True, open_world=False)
        s.add_user_only_tool(
            "self.upgrade_firmware",
            "Upgrade firmware from a specific URL. This will download and install the "
            "firmware, then reboot the device.",
            PropertyList([
                Property("url", STRING,
                         description="The URL of the firmware binary file to download and install"),
                Property("sha256", STRING, default="",
                         description="Optional SHA-256 of the firmware image, 64 hex "
                         "digits; without it the image's own appended SHA-256 is checked"),
            ]),
            self.upgrade_firmware, destructive=True, open_world=True)
        if self.board.camera:
            # The picture itself, for MCP clients that see images (through the bridge);
            # user-only because xiaozhi backends read only text results.
            s.add_user_only_tool(
                "self.camera.get_photo", "Take a photo and return it as a JPEG image.",
                PropertyList([]), self.get_photo, read_only=True, open_world=False)
        if self.board.display:
            s.add_tool(McpTool(
                "self.screen.get_info",
                "Information about the screen, including width, height, etc.",
                None, self.screen_info, user_only=True, read_only=True,
                output_schema=SCREEN_SCHEMA))
        if self.board.wlan is not None:
            from umcpfw.wifi import add_reconfigure_tool  # loaded on a board with a radio

            add_reconfigure_tool(s, self.settings, self.reboot, REBOOT_DELAY_MS)
        s.add_user_only_tool(
            "self.assets.set_download_url", "Set the download url for the assets",
            PropertyList([Property("url", STRING)]),
            self.set_assets_url, destructive=False, idempotent=True, open_world=False)

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
