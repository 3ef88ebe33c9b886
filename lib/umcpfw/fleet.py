"""The application's side of the OTA server (devsvc.otacheck): the first check and
activation at boot, the periodic checks, and what their answers lead to (clock, firmware
offer or auto upgrade, activation code, new server settings). Imported only where
config.json has an ota_url, and resident there; the check's own code (devsvc.otacheck and
its HTTP client: unet.http, httpcore, conn) is loaded for each check and dropped after it,
as a board checks at its start and then once an interval (an hour). What the rest of the
application reads between checks is here: the Fleet is app.ota (saved_transport(),
activation)."""

import asyncio
import sys

from devsvc.settings import TRANSPORT_KEY
from umcp.compat import forget_modules, get_logger

_OTA_INTERVAL_S = 3600  # between OTA checks (config.json "ota_interval")

log = get_logger("app")


# What a check loads, forgotten after it (a photo's upload running meanwhile keeps what it
# runs until it ends, and forgets the same modules then).
_CHECK_MODULES = ("devsvc.otacheck", "unet.http", "unet.httpcore", "unet.conn")


class Fleet:
    def __init__(self, app):
        """ValueError: config.json's activation_key is not hex (checked now, not at each check)."""
        self.app = app
        self._check = None  # the check running now (devsvc.otacheck.OtaCheck), if one is
        self._activation = None  # the last check's pending activation block, if any
        key = app.config.get("activation_key")
        if key:
            try:
                _unhex(key)
            except (TypeError, ValueError):
                raise ValueError("activation_key must be the device's key in hex")

    @property
    def activation(self):
        """The pending activation block (its code on the status screen), or None: the running
        check's, else the last one's."""
        check = self._check
        return self._activation if check is None else check.activation

    def saved_transport(self):
        """The transport the OTA server gave last ({"websocket": ...} or {"mqtt": ...}), or None."""
        return self.app.settings.get(TRANSPORT_KEY)

    async def _with_check(self, work):
        """`await work(check)` with a devsvc.otacheck.OtaCheck made for it; its outcome kept
        here, its code dropped after."""
        from devsvc.otacheck import OtaCheck

        self._check = check = self._build(OtaCheck)
        try:
            return await work(check)
        finally:
            self._activation = check.activation
            self._check = check = OtaCheck = None
            forget_modules(*_CHECK_MODULES)

    def _build(self, OtaCheck):
        app = self.app
        config = app.config
        mac = app.device_id
        info = {
            "version": 2,
            "language": config.get("language", "en-US"),
            "mac_address": mac,
            "uuid": app.client_id,
            "chip_model_name": getattr(app.board, "chip", None) or _chip(),
            "application": {"name": "umcp", "version": app.version},
            "board": {"type": app.board.name, "name": app.board.name, "mac": mac},
        }
        free = _free_heap()
        if free is not None:
            info["minimum_free_heap_size"] = str(free)
        serial = config.get("serial_number")
        key = config.get("activation_key")
        return OtaCheck(config["ota_url"], app.settings, app.device_id, app.client_id,
                        "%s/%s" % (app.board.name, app.version), info, ca=app.trust,
                        language=config.get("language", "en-US"), serial_number=serial,
                        hmac_key=_unhex(key) if key else None, check_mqtt=_check_mqtt,
                        set_time=set_clock, show_code=self.show_activation_code,
                        on_firmware=self.on_firmware, on_transport=self.on_transport,
                        version=app.version)

    def show_activation_code(self, code, message):
        """The OTA check logs the code; a board with a screen may show it too (the status
        view, which reads it from the check, or the board's own way)."""
        if self.app.status_view is not None:
            self.app.status_view.changed()
            return
        show = getattr(self.app.board, "show_activation_code", None)
        if show is not None:
            show(code, message)

    def on_firmware(self, version, url):
        app = self.app
        app.tools.offer = {"version": version, "url": url}
        if app.config.get("auto_upgrade") is True:
            if app.settings.get("auto_upgraded") == version:
                # Installed once already, yet the image still reports an older version: a
                # server that names the wrong version must not make the board loop.
                log.warning("firmware %s was installed once already and this image reports "
                            "%s: not again (call self.upgrade_firmware to force)", version, app.version)
                return
            log.warning("auto_upgrade: installing firmware %s from %s", version, url)
            try:
                app.tools.start_upgrade(
                    url, installed=lambda: app.settings.set("auto_upgraded", version))
            except Exception as e:
                log.error("auto upgrade: %r", e)
        else:
            log.warning("firmware %s is available at %s: set auto_upgrade or call "
                        "self.upgrade_firmware", version, url)

    def on_transport(self, transport):
        """The server gave new settings: the running link makes way for one with them."""
        link = self.app.link
        if link is not None:
            log.warning("server settings changed: reconnecting")
            asyncio.create_task(link.stop())

    async def periodic(self):
        interval = self.app.config.get("ota_interval", _OTA_INTERVAL_S)
        while True:
            await asyncio.sleep(interval)
            try:
                await self._with_check(_check_and_activate)
            except Exception as e:  # OtaCheckError says what went wrong
                log.warning("%s", e)

    async def first_check(self):
        """Check and activate before connecting, as the reference does at boot; with no
        answer, the last good (saved) settings or config.json's url/token will do."""
        config = self.app.config
        fixed = bool(config.get("url") and config.get("token"))
        retry_s = config.get("ota_retry", 10)
        try:
            await self._with_check(lambda check: check.until_done(retry_s=retry_s, fallback=fixed))
        except Exception as e:
            log.error("OTA check: %r", e)


async def _check_and_activate(check):
    await check.check()
    if check.activation is not None:
        await check.activate()


def _check_mqtt(block):
    """An answer's mqtt block as the MQTT link will need it (loaded only for one)."""
    from xiaozhi.mqttlink import check_settings

    check_settings(block)


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
