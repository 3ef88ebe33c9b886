"""The Wi-Fi station's upkeep on a board with a radio, resident while the firmware runs: a
look every few seconds. Everything else (the bring-up at boot, a lost network brought
back, the setup, NTP) is umcpfw.station's, loaded for each call and dropped after: it
runs at boot and when the network is lost, and its code would otherwise stay on the heap
for the whole session. The tool that asks for the setup is a common tool
(CommonTools.reconfigure_wifi)."""

import asyncio

from umcp.compat import await_then_forget, get_logger
from umcpfw import WIFI_CHECK_S


async def keep_connected(app, wlan, **retry):
    """The main loop's upkeep: every wifi_check_interval seconds (config.json's), whether
    the station is up; when it is not, umcpfw.station.recover() brings it back, or after
    wifi_lost_setup_after seconds restarts the Application `app` into the Wi-Fi setup.
    `retry`: recover()'s timings (tests shorten them).

    The xiaozhi link notices the lost connection by itself and reconnects with its own
    backoff once the network is back.
    """
    check_s = app.config.get("wifi_check_interval", WIFI_CHECK_S)
    while True:
        await asyncio.sleep(check_s)
        try:
            if not wlan.isconnected():
                await await_then_forget("umcpfw.station", "recover", app, wlan, **retry)
        except OSError as e:  # a radio fault must not end the upkeep
            get_logger("wifi").warning("Wi-Fi upkeep: %r", e)
