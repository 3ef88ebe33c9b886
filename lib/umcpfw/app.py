# The application: settings, board, MCP server, the OTA check and the xiaozhi link on one
# asyncio loop.
import asyncio
import sys

import boards
from devsvc import ota
from devsvc.settings import Settings
from umcp import get_instance
from umcp.compat import get_logger
from umcpfw import wifi
from umcpfw.common_tools import CommonTools
from umcpfw.vision import VisionClient

VERSION = "0.1.0"
SETTINGS_FILE = "settings.json"
_LINK_RESTART_S = 2
_OTA_INTERVAL_S = 3600  # between OTA checks (config.json "ota_interval")
# Optional config.json keys handed to the link as they are (timings in seconds): to both
# transports, then to the WebSocket one only, then to the MQTT one only.
_LINK_OPTIONS = ("max_message", "hello_timeout", "idle_timeout", "backoff_min",
                 "backoff_max", "stable_after")
_WEBSOCKET_OPTIONS = ("protocol_version", "ping_interval")
_MQTT_OPTIONS = ("keepalive",)

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
        self.settings = Settings(SETTINGS_FILE)
        # The board puts the saved volume, brightness and theme back onto its hardware.
        self.board = boards.load(config["board"]).create(config, self.settings)
        self.device_id = config.get("device_id") or self.mac_address()
        self.client_id = self.settings.get("client_id")  # a UUID made once by Settings
        self.vision = VisionClient(self.device_id, self.client_id, config.get("ca"))
        self.tools = None
        self.server = self.build_server()
        self.ota = self.build_ota_check() if config.get("ota_url") else None
        if self.ota is None:
            self.transport()  # refuse a config without a server at once
        self.link = None  # built in run(), once the OTA check said where to connect
        self._reboot_task = None
        self._wifi_task = None
        self._ota_task = None

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
        self.tools = CommonTools(server, self.board, self.settings, self.vision, VERSION,
                                 self.reboot, self.config.get("ca"))
        self.tools.register()
        self.board.register_tools(server)
        return server

    # -- where to connect

    def transport(self):
        """{"websocket": {url, token}} or {"mqtt": {...}}: what the OTA server gave last
        (saved), else config.json's url and token, else a provisioned server_url/token."""
        config = self.config
        if self.ota is not None:
            saved = self.ota.saved_transport()
            if saved:
                return saved
        url = config.get("url") or self.settings.get("server_url")
        token = config.get("token") or self.settings.get("token")
        if url and token:
            return {"websocket": {"url": url, "token": token}}
        if self.ota is not None:
            raise ValueError("the OTA server at %s gave no websocket or mqtt settings yet"
                             % config["ota_url"])
        raise ValueError("config.json needs ota_url, or the server's url and token")

    def build_link(self):
        """The link for transport(); the application only uses run(), stop(), connected."""
        config = self.config
        transport = self.transport()
        options = {"ca": config.get("ca"), "on_system": self.on_system,
                   "on_alert": self.on_alert}
        for key in _LINK_OPTIONS:
            if key in config:
                options[key] = config[key]
        if "mqtt" in transport:
            from xiaozhi.mqtt_link import MqttLink  # imported only when used (heap)

            for key in _MQTT_OPTIONS:
                if key in config:
                    options[key] = config[key]
            return MqttLink(self.server, transport["mqtt"], self.device_id, self.client_id,
                            **options)
        from xiaozhi.link import XiaozhiLink

        websocket = transport["websocket"]
        for key in _WEBSOCKET_OPTIONS:
            if key in config:
                options[key] = config[key]
        if isinstance(websocket.get("version"), int) and "protocol_version" not in config:
            options["protocol_version"] = websocket["version"]
        return XiaozhiLink(self.server, websocket["url"], websocket.get("token") or "",
                           self.device_id, self.client_id, **options)

    # -- the OTA check

    def build_ota_check(self):
        from devsvc.otacheck import OtaCheck  # only where there is an ota_url (heap)

        config = self.config
        check_mqtt = None
        try:
            from xiaozhi.mqtt_link import check_settings as check_mqtt
        except ImportError:
            pass
        mac = self.device_id
        info = {
            "version": 2,
            "language": config.get("language", "en-US"),
            "mac_address": mac,
            "uuid": self.client_id,
            "chip_model_name": _chip(),
            "application": {"name": "umcp", "version": VERSION},
            "board": {"type": self.board.name, "name": self.board.name, "mac": mac},
        }
        free = _free_heap()
        if free is not None:
            info["minimum_free_heap_size"] = str(free)
        serial = config.get("serial_number")
        key = config.get("activation_key")
        return OtaCheck(config["ota_url"], self.settings, self.device_id, self.client_id,
                        "%s/%s" % (self.board.name, VERSION), info, ca=config.get("ca"),
                        language=config.get("language", "en-US"), serial_number=serial,
                        hmac_key=_unhex(key) if key else None, check_mqtt=check_mqtt,
                        set_time=set_clock, show_code=self.show_activation_code,
                        on_firmware=self.on_firmware, on_transport=self.on_transport,
                        version=VERSION)

    def show_activation_code(self, code, message):
        """The OTA check logs the code; a board with a screen may show it too."""
        show = getattr(self.board, "show_activation_code", None)
        if show is not None:
            show(code, message)

    def on_firmware(self, version, url):
        self.tools.offer = {"version": version, "url": url}
        if self.config.get("auto_upgrade") is True:
            if self.settings.get("auto_upgraded") == version:
                # Installed once already, yet the image still reports an older version: a
                # server that names the wrong version must not make the board loop.
                log.warning("firmware %s was installed once already and this image reports "
                            "%s: not again (call self.upgrade_firmware to force)", version, VERSION)
                return
            log.warning("auto_upgrade: installing firmware %s from %s", version, url)
            try:
                self.tools.start_upgrade(
                    url, installed=lambda: self.settings.set("auto_upgraded", version))
            except Exception as e:
                log_exception("auto upgrade", e)
        else:
            log.warning("firmware %s is available at %s: set auto_upgrade or call "
                        "self.upgrade_firmware", version, url)

    def on_transport(self, transport):
        """The server gave new settings: the running link makes way for one with them."""
        link = self.link
        if link is not None:
            log.warning("server settings changed: reconnecting")
            asyncio.create_task(link.stop())

    async def _ota_checks(self):
        interval = self.config.get("ota_interval", _OTA_INTERVAL_S)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.ota.check()
                if self.ota.activation is not None:
                    await self.ota.activate()
            except Exception as e:  # OtaCheckError says what went wrong
                log.warning("%s", e)

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
            self._wifi_task = asyncio.create_task(wifi.keep_connected(wlan, ssid, password))
        # Settings, board, tools and network are up: this image boots well.
        try:
            ota.mark_valid()
        except Exception as e:
            log_exception("marking the firmware valid", e)
        log.info("%s %s as %s, client %s", self.board.name, VERSION, self.device_id,
                 self.client_id)
        if self.ota is not None:
            await self._first_ota_check()
            self._ota_task = asyncio.create_task(self._ota_checks())
        while True:
            # The link reconnects by itself; this guards against a bug escaping it, and
            # starts a new link when the OTA check brought other server settings.
            try:
                self.link = self.build_link()
            except ValueError as e:
                log.error("cannot connect: %s", e)
                await asyncio.sleep(_LINK_RESTART_S)
                if self.ota is not None:
                    await self._first_ota_check()
                continue
            try:
                await self.link.run()
            except Exception as e:
                log_exception("link stopped", e)
            await asyncio.sleep(_LINK_RESTART_S)

    async def _first_ota_check(self):
        """Check and activate before connecting, as the reference does at boot; with no
        answer, the last good (saved) settings or config.json's url/token will do."""
        try:
            fixed = bool(self.config.get("url") and self.config.get("token"))
            await self.ota.until_done(retry_s=self.config.get("ota_retry", 10), fallback=fixed)
        except Exception as e:
            log_exception("OTA check", e)


def _unhex(text):
    import binascii

    return binascii.unhexlify(text)


def _chip():
    """The chip's name as the reference reports it (esp32s3...), from the platform."""
    machine = getattr(sys.implementation, "_machine", "") or ""
    for name in ("ESP32S3", "ESP32S2", "ESP32C3", "ESP32C6", "ESP32"):
        if machine.upper().replace("-", "").find(name) >= 0:
            return name.lower()
    return sys.platform


def _free_heap():
    try:
        import gc

        return gc.mem_free()
    except AttributeError:
        return None


def civil(epoch_s):
    """(year, month, day, weekday (0 = Monday), hours, minutes, seconds) of a Unix time."""
    days, rest = divmod(int(epoch_s), 86400)
    weekday = (days + 3) % 7  # 1970-01-01 was a Thursday
    # Howard Hinnant's days_from_civil, inverted
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return (year, month, day, weekday, rest // 3600, rest % 3600 // 60, rest % 60)


def set_clock(epoch_ms):
    """Set the RTC to the server's (local) time, where the board has one."""
    try:
        import machine

        rtc = machine.RTC()
    except (ImportError, AttributeError):
        log.info("no RTC: the clock stays as it is")
        return
    t = civil(epoch_ms // 1000)
    rtc.datetime(t + ((epoch_ms % 1000) * 1000,))
    log.info("clock set to %04d-%02d-%02d %02d:%02d:%02d", t[0], t[1], t[2], t[4], t[5], t[6])


async def main(config):
    app = Application(config)
    try:
        await app.run()
    finally:  # stopped (cancelled, Ctrl-C): say goodbye where the transport has one
        link = app.link
        if link is not None:
            try:
                await asyncio.wait_for(link.stop(), 1)
            except BaseException:
                pass
