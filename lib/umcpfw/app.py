# The application: settings, board, MCP server and xiaozhi link on one asyncio loop.
import asyncio
import sys

import boards
from devsvc import ota
from devsvc.settings import Settings
from umcp import get_instance
from umcp.compat import add_log_sink, get_logger
from umcpfw import wifi
from umcpfw.common_tools import CommonTools
from umcpfw.resources import DeviceResources, LogRing
from umcpfw.vision import VisionClient
from unet.conn import Trust
from xiaozhi.link import XiaozhiLink

VERSION = "0.1.0"
SETTINGS_FILE = "settings.json"
_LINK_RESTART_S = 2
# Optional config.json keys handed to XiaozhiLink as they are (timings in seconds).
_LINK_OPTIONS = ("protocol_version", "max_message", "hello_timeout", "idle_timeout",
                 "ping_interval", "backoff_min", "backoff_max", "stable_after")

log = get_logger("app")


def log_exception(what, e):
    log.error("%s: %r", what, e)
    if hasattr(sys, "print_exception"):
        sys.print_exception(e)


def format_mac(raw):
    return ":".join("%02x" % b for b in raw)


class Application:
    def __init__(self, config):
        self.config = config
        # The recent log lines, for device://log: from here on (a fixed-size ring).
        self.log_ring = LogRing()
        add_log_sink(self.log_ring.add)
        self.settings = Settings(SETTINGS_FILE)
        # The board puts the saved volume, brightness and theme back onto its hardware.
        self.board = boards.load(config["board"]).create(config, self.settings)
        self.device_id = config.get("device_id") or self.mac_address()
        self.client_id = self.settings.get("client_id")  # a UUID made once by Settings
        # Whom wss:// and https:// trust: the shipped roots plus config.json's "ca"; TLS goes
        # unverified only with "tls_verify": false (a warning at every connection). A broken
        # "ca" or a tls_verify that is not true/false stops the start here, saying so.
        self.trust = Trust(config.get("ca"), config.get("tls_verify", True))
        self.vision = VisionClient(self.device_id, self.client_id, self.trust)
        self.server = self.build_server()
        self.link = self.build_link()
        self._reboot_task = None
        self._wifi_task = None

    def mac_address(self):
        """Device-Id: the Wi-Fi MAC on a board, the simulated machine id on the host."""
        if self.board.wlan is not None:
            return format_mac(self.board.wlan.config("mac"))
        import machine

        return format_mac(machine.unique_id())

    def build_server(self):
        server = get_instance()
        server.name = self.board.name
        server.version = VERSION
        if self.config.get("max_payload"):
            server.page_limit = self.config["max_payload"]
        server.on_vision(self.vision.configure)
        tools = CommonTools(server, self.board, self.settings, self.vision, VERSION, self.reboot,
                            self.trust)
        tools.register()
        self.board.register_tools(server)
        tools.resources = DeviceResources(server, tools, self.board, self.log_ring)
        tools.resources.register()
        return server

    def build_link(self):
        config = self.config
        # config.json is what the user edits; settings may hold a provisioned server.
        url = config.get("url") or self.settings.get("server_url")
        token = config.get("token") or self.settings.get("token")
        if not url or not token:
            raise ValueError("config.json needs the server's url and token")
        options = {}
        for key in _LINK_OPTIONS:
            if key in config:
                options[key] = config[key]
        return XiaozhiLink(self.server, url, token, self.device_id, self.client_id,
                                   ca=self.trust, on_system=self.on_system,
                                   on_alert=self.on_alert, **options)

    def wifi_credentials(self):
        credentials = self.config.get("wifi") or {}
        return credentials.get("ssid"), credentials.get("password")

    def reboot(self, delay_ms=0):
        """Reset the device after delay_ms, on its own task so a reply can leave first."""
        if self._reboot_task is None:
            self._reboot_task = asyncio.create_task(self._reboot(delay_ms))

    async def _reboot(self, delay_ms):
        log.warning("rebooting in %d ms", delay_ms)
        await asyncio.sleep(delay_ms / 1000)
        try:
            await self.link.stop()  # a clean close tells the backend we are going
        except Exception as e:
            log_exception("closing the link", e)
        import machine

        machine.reset()

    def on_system(self, message):
        if message.get("command") == "reboot":
            log.warning("server asked for a reboot")
            self.reboot(0)
        else:
            log.warning("ignoring system command %r", message.get("command"))

    def on_alert(self, message):
        log.warning("alert from server: %s %s", message.get("status"), message.get("message"))

    async def run(self):
        wlan = self.board.wlan
        if wlan is not None:  # the host board has no radio
            ssid, password = self.wifi_credentials()
            await wifi.connect(wlan, ssid, password)
            wifi.set_clock()  # certificate dates need it
            self._wifi_task = asyncio.create_task(wifi.keep_connected(wlan, ssid, password))
        # Settings, board, tools and network are up: this image boots well.
        try:
            ota.mark_valid()
        except Exception as e:
            log_exception("marking the firmware valid", e)
        log.info("%s %s as %s, client %s", self.board.name, VERSION, self.device_id,
                 self.client_id)
        while True:
            # The link reconnects by itself; this guards against a bug escaping it.
            try:
                await self.link.run()
            except Exception as e:
                log_exception("link stopped", e)
            await asyncio.sleep(_LINK_RESTART_S)


async def main(config):
    await Application(config).run()
