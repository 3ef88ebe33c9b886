"""The Wi-Fi station's bring-up on a board with a radio: connect with retries, the Wi-Fi
setup entered when that fails (umcpfw.wifisetup), the clock from NTP (start(), at boot),
and a lost network brought back (recover()). Loaded for each call (the application at
boot, umcpfw.app's resident upkeep when the network is lost), dropped after: none of
this code stays on the heap while the network is up."""

import asyncio

from umcp.compat import const, forget_modules, get_logger, ticks_diff, ticks_ms

_POLL_S = 0.1
# config.json's wifi_lost_setup_after when it has none (seconds)
_LOST_SETUP_AFTER_S = const(300)
log = get_logger("wifi")


def _failed(wlan):
    """True once the radio reports a definitive failure (no AP, wrong password, ...).

    The ESP32 port's failure codes are 200-299 (STAT_BEACON_TIMEOUT .. STAT_HANDSHAKE_TIMEOUT
    and the driver's other disconnect reasons); STAT_CONNECTING and STAT_IDLE are 1000+.
    """
    status = wlan.status()
    return isinstance(status, int) and 200 <= status < 300


async def _attempt(wlan, ssid, password, timeout_s):
    """One connect(): True when an address came, False on failure or after timeout_s."""
    try:
        wlan.connect(ssid, password)
    except OSError as e:
        log.warning("Wi-Fi connect: %r", e)
        return False
    started = ticks_ms()
    while ticks_diff(ticks_ms(), started) < timeout_s * 1000:
        if wlan.isconnected():
            return True
        if _failed(wlan):
            return False  # no point waiting out the timeout
        await asyncio.sleep(_POLL_S)
    return wlan.isconnected()


async def connect(wlan, ssid, password, attempt_s=15, pause_s=1, pause_max_s=60,
                  give_up_s=None):
    """Bring the station up, retrying with a doubling pause (capped) until it connects
    (True), or until give_up_s seconds have passed without (False; None: never)."""
    wlan.active(True)
    started = ticks_ms()
    while not wlan.isconnected():
        log.info("connecting to Wi-Fi %s", ssid)
        if await _attempt(wlan, ssid, password, attempt_s):
            break
        wlan.disconnect()
        if give_up_s is not None and ticks_diff(ticks_ms(), started) >= give_up_s * 1000:
            log.warning("Wi-Fi %s not connected within %s s (status %s)", ssid, give_up_s,
                        wlan.status())
            return False
        log.warning("Wi-Fi %s not connected (status %s); retrying in %s s", ssid, wlan.status(),
                    pause_s)
        await asyncio.sleep(pause_s)
        pause_s = min(pause_s * 2, pause_max_s)
    log.info("Wi-Fi up: %s", wlan.ifconfig()[0])
    return True


async def start(app, wlan):
    """The boot's bring-up: the station up and the clock set (True), or the Wi-Fi setup
    entered (False once it ends: the board restarts)."""
    ssid, password = app.wifi_credentials()
    if not await bring_up(app, wlan, ssid, password):
        return False
    set_clock()  # certificate dates need it
    return True


async def recover(app, wlan, attempt_s=15, pause_s=1, pause_max_s=60):
    """The station found down while running (umcpfw.app.keep_connected): brought back (True),
    or, when it is not back within config.json's wifi_lost_setup_after seconds (0 or null:
    never give up), the Application `app` restarted into the Wi-Fi setup (a flag for
    bring_up() at the next start; False)."""
    log.warning("Wi-Fi lost")
    ssid, password = app.wifi_credentials()
    lost_after_s = app.config.get("wifi_lost_setup_after", _LOST_SETUP_AFTER_S) or None
    if await connect(wlan, ssid, password, attempt_s, pause_s, pause_max_s, lost_after_s):
        return True
    log.warning("Wi-Fi %s not back within %s s: restarting into the Wi-Fi setup", ssid,
                lost_after_s)
    app.settings.set("wifi_setup", "lost")  # bring_up() at the next start
    app.reboot(0)
    return False


async def bring_up(app, wlan, ssid, password):
    """The station up (True), or the Wi-Fi setup entered (umcpfw.wifisetup, which retries a
    configured network: False once it ends): when asked for by self.system.reconfigure_wifi
    or recover() (once: a flag in the settings), with no network configured, or when the
    configured one did not connect within config.json's wifi_setup_after seconds (120)."""
    reason = app.settings.get("wifi_setup")  # True (reconfigure_wifi) or "lost" (recover())
    if reason:
        app.settings.set("wifi_setup", None)  # once: the next boot is a normal one
    elif not ssid:
        reason = "no Wi-Fi configured"
    elif await connect(wlan, ssid, password, give_up_s=app.config.get("wifi_setup_after", 120)):
        return True
    else:
        reason = "Wi-Fi %s not reachable" % ssid
    from umcpfw import wifisetup  # only in that mode (heap)

    await wifisetup.serve(app, reason, connect)
    return False


def set_clock(ntp=None, attempts=3):
    """Set the clock from NTP once the station is up -> whether it was set.

    Verified TLS checks each certificate's validity dates against this clock, and an
    ESP32 starts at 2000-01-01 (MicroPython's mbedTLS has the time check on): until it is
    set, every wss:// and https:// connection is refused ("validity starts in the future").
    `ntp`: the ntptime module (frozen into the ESP32 firmware); a port without it keeps
    its clock (the host's is right). Blocks up to `attempts` NTP timeouts (1 s each)."""
    if ntp is None:
        try:
            import ntptime as ntp
        except ImportError:
            return False
        try:
            return set_clock(ntp, attempts)
        finally:
            forget_modules("ntptime")  # used once: its module leaves the heap
    problem = None
    for _ in range(attempts):
        try:
            ntp.settime()
            log.info("clock set from NTP")
            return True
        except (OSError, OverflowError, IndexError, ValueError) as e:  # timeout, bad answer
            problem = e
    log.warning("clock not set from NTP (%r): verified TLS will refuse certificates until "
                "it is", problem)
    return False
