"""self.get_system_info (and the device://system resource): what the firmware, the runtime,
the heap, the OTA partitions and the MCP endpoints are now. Loaded for each call
(umcp.compat.OnDemand, registered by umcpfw.commonsetup) and dropped after, apart from
the other user-only tools (umcpfw.systools): the heap it reports is read with as little
of the firmware's own code loaded as can be. `tools` is the board's CommonTools
(umcpfw.commontools)."""

import gc
import sys
import time


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
