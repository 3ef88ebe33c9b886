"""The user-only common tools: system information, reboot, Wi-Fi setup, the assets URL and
the screen's facts. Each is registered as an umcp.compat.OnDemand (umcpfw.commonsetup):
this module is loaded for the call and dropped after, as a session seldom calls them.
`tools` is the board's CommonTools (umcpfw.commontools)."""

import gc
import sys
import time

from umcp.compat import call_then_forget


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


def get_system_info(tools, args):
    info = {
        "firmware_version": tools.version,
        "board": tools.board.name,
        "runtime": _runtime(),
        "platform": sys.platform,
        "device_id": tools.device_id,
        "client_id": tools.client_id,
        "uptime_s": int(time.time() - tools.started),
        "max_message": tools.server.max_message,
    }
    if hasattr(gc, "mem_free"):
        gc.collect()  # live data only, not garbage awaiting the next collection
        info["free_heap"] = gc.mem_free()
        info["heap_used"] = gc.mem_alloc()
    partitions = _partitions()
    if partitions:
        info["ota"] = partitions
    if tools.offer:
        info["firmware_offer"] = tools.offer
    if tools.mcp_url:
        info["mcp_url"] = tools.mcp_url
    if tools.endpoints:
        states = info["mcp_endpoints"] = []
        for link in tools.endpoints:
            states.append(link.status())
    rtc = _rtc()
    if rtc:
        info["rtc"] = rtc
    return info


def reboot(tools, args):
    # The reply leaves before the reset: the reboot waits on its own task.
    tools.reboot(tools.reboot_delay_ms)
    return True


def reconfigure_wifi(tools, args):
    # A flag for the next boot, then a reboot: the setup (umcpfw.wifisetup) starts on a
    # fresh heap, and a board that loses power meanwhile boots normally again.
    tools.settings.set("wifi_setup", True)
    tools.reboot(tools.reboot_delay_ms)
    return ("restarting into Wi-Fi setup: join the board's access point (its name and "
            "password are on its screen and in its log)")


def screen_info(tools, args):
    return tools.board.display.info()


def set_assets_url(tools, args):
    url = args["url"]
    # Checked before it is stored: the download that reads it later must not find a URL
    # that adds header lines to its request, or one no download can use.
    if call_then_forget("unet.conn", "parse_url", url)[0] not in ("http", "https"):
        raise ValueError("not an HTTP URL: " + url)
    tools.settings.set("asset_url", url)
    return True
