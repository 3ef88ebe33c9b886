"""One OTA check of the application, loaded by umcpfw.fleet for each check and dropped
after it with devsvc.otacheck and its HTTP client: the check made for the board
(make_check()) and what its answers lead to: the clock set, a firmware offered or installed
(auto_upgrade), the activation code shown, the running link making way for new server
settings."""

import asyncio
import sys

from devsvc.otacheck import OtaCheck
from umcp.compat import call_then_forget, get_logger

log = get_logger("app")


def make_check(app, hmac_key=None):
    """The OtaCheck of `app`'s board, at config.json's ota_url; `hmac_key`: the activation
    key (bytes), or None."""
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
    return OtaCheck(config["ota_url"], app.settings, app.device_id, app.client_id,
                    "%s/%s" % (app.board.name, app.version), info, ca=app.trust,
                    language=config.get("language", "en-US"), serial_number=serial,
                    hmac_key=hmac_key, check_mqtt=_check_mqtt,
                    set_time=set_clock,
                    show_code=lambda code, message: show_activation_code(app, code, message),
                    on_firmware=lambda version, url: on_firmware(app, version, url),
                    on_transport=lambda transport: on_transport(app, transport),
                    version=app.version)


async def check_and_activate(check):
    """A periodic check: the check, and the activation where the answer asks for one."""
    await check.check()
    if check.activation is not None:
        await check.activate()


def show_activation_code(app, code, message):
    """The OTA check logs the code; a board with a screen may show it too (the status
    view, which reads it from the check, or the board's own way)."""
    if app.status_view is not None:
        app.status_view.changed()
        return
    show = getattr(app.board, "show_activation_code", None)
    if show is not None:
        show(code, message)


def on_firmware(app, version, url):
    """A newer firmware offered: get_system_info shows it; auto_upgrade installs it once."""
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


def on_transport(app, transport):
    """The server gave new settings: the running link makes way for one with them."""
    link = app.link
    if link is not None:
        log.warning("server settings changed: reconnecting")
        asyncio.create_task(link.stop())


def _check_mqtt(block):
    """An answer's mqtt block as the MQTT link will need it: its checks only, not the link's
    code (loaded only for one, and dropped again)."""
    call_then_forget("xiaozhi.mqttsettings", "check_settings", block)


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
