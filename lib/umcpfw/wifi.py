# The Wi-Fi station on a board with a radio, as the application uses it: the main loop's
# upkeep (resident while the firmware runs) and the entry points to the bring-up. The
# bring-up itself (connect with retries, the Wi-Fi setup, NTP) is umcpfw.station's, loaded
# for each call and dropped after: it runs at boot and when the network is lost, and its
# code would otherwise stay on the heap for the whole session.
import asyncio

from umcp.compat import await_then_forget, call_then_forget, const, get_logger

# config.json's wifi_lost_setup_after and wifi_check_interval when it has none (seconds)
_LOST_SETUP_AFTER_S = const(300)
CHECK_S = const(10)
_STATION = const("umcpfw.station")

log = get_logger("wifi")


async def connect(*args, **kwargs):
    """umcpfw.station.connect(): True once the station is up, False when it gave up."""
    return await await_then_forget(_STATION, "connect", *args, **kwargs)


async def bring_up(app, wlan, ssid, password):
    """umcpfw.station.bring_up(): the station up (True), or the Wi-Fi setup entered (False
    once it ends)."""
    return await await_then_forget(_STATION, "bring_up", app, wlan, ssid, password)


def set_clock(*args, **kwargs):
    """umcpfw.station.set_clock(): the clock from NTP -> whether it was set."""
    return call_then_forget(_STATION, "set_clock", *args, **kwargs)


async def keep_connected(wlan, ssid, password, check_s=10, attempt_s=15, pause_s=1,
                         pause_max_s=60, lost_after_s=None, app=None):
    """Periodic work of the main loop: bring the station back when the link drops; when it
    is not back within lost_after_s seconds (None: never), restart the Application `app`
    into the Wi-Fi setup (on a fresh heap, as self.system.reconfigure_wifi does), which
    keeps trying the network (umcpfw.wifisetup).

    The xiaozhi link notices the lost connection by itself and reconnects with its own
    backoff once the network is back.
    """
    while True:
        await asyncio.sleep(check_s)
        try:
            if not wlan.isconnected():
                log.warning("Wi-Fi lost")
                if not await connect(wlan, ssid, password, attempt_s, pause_s, pause_max_s,
                                     lost_after_s):
                    log.warning("Wi-Fi %s not back within %s s: restarting into the Wi-Fi "
                                "setup", ssid, lost_after_s)
                    app.settings.set("wifi_setup", "lost")  # bring_up() at the next start
                    app.reboot(0)
        except OSError as e:  # a radio fault must not end the upkeep
            log.warning("Wi-Fi upkeep: %r", e)


def upkeep(app, wlan, ssid, password):
    """keep_connected() for the application, with config.json's wifi_check_interval and
    wifi_lost_setup_after (checked at the start by umcpfw.boot; 0 or null: never)."""
    config = app.config
    return keep_connected(wlan, ssid, password, config.get("wifi_check_interval", CHECK_S),
                          lost_after_s=config.get("wifi_lost_setup_after", _LOST_SETUP_AFTER_S)
                          or None, app=app)


def reconfigure(settings, reboot, delay_ms):
    """self.system.reconfigure_wifi's callback (umcpfw.common_setup registers the tool,
    user-only): a flag for the next boot, then a reboot, so the setup starts on a fresh
    heap, and a board that loses power meanwhile boots normally again."""

    def call(args):
        settings.set("wifi_setup", True)
        reboot(delay_ms)
        return ("restarting into Wi-Fi setup: join the board's access point (its name and "
                "password are on its screen and in its log)")

    return call
