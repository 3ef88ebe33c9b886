"""The umcp firmware application: `app` (settings, board, MCP server and link on one
loop), `boot` (what app builds once at the start: loaded for that only), `linkconfig`
(where the board connects, and the link for it: loaded for each), `commontools` (the
self.* tools a model calls: status, volume, brightness, theme), `commonsetup` (their
registration, loaded at boot only), `commontexts` and `commonschemas` (their long
descriptions and output schemas, loaded only while a tools/list entry is written),
`systools` (the user-only tools: system information, reboot, Wi-Fi setup, assets URL,
screen facts; loaded for each call), `upgrading` (self.upgrade_firmware and auto_upgrade,
loaded only while an upgrade runs), `logring` (the recent log lines, resident),
`resources` (device://status, system, log, alarms, photo/last: registered at the first
resources/* request, loaded for each read), `vision` (the camera's tools and the photo
upload: on a board with a camera, loaded for each call), `wifi` (the station's upkeep, resident),
`station` (its bring-up and the clock, loaded for that only), `fleet` (the OTA check's
side of the application, loaded only with ota_url), `checkin` (one OTA check and what its
answers lead to, loaded for each check), `mcphttp` (the board's own MCP
endpoint as a service, loaded only with mcp_http), `mcpserial` (the firmware served over
the serial line instead of a network: the bridge's --serial starts it through the raw
REPL; main.py never loads it), `wifisetup` (the access point and
setup page, loaded only in that mode), `statusview` (the status screen, loaded only on a
board with one), `alarms` (alarms kept in flash, loaded only while there are some), `alarmring`
(their time, store and schedule, and the board speaking first when one is due: loaded
for each change and each one due) and `alarmtools` (the self.alarms.* calls, loaded for
each). /main.py
starts it.

Here: what the application and the modules it loads share (ConfigError, log and
log_exception(), WIFI_CHECK_S), so that a loaded module never imports the module that
loads it."""

import sys

from umcp.compat import const, get_logger

WIFI_CHECK_S = const(10)  # config.json's wifi_check_interval when it has none (seconds)

log = get_logger("app")  # the application's log (its start's too)


class ConfigError(ValueError):
    """config.json is missing or unusable; the message says what to fix."""


def log_exception(what, e):
    """An error line for the log (and device://log), and the traceback on the console (not
    for a MemoryError: a traceback needs heap; the heap is collected instead)."""
    log.error("%s: %r", what, e)
    if isinstance(e, MemoryError):
        import gc

        gc.collect()
        return
    try:
        if hasattr(sys, "print_exception"):
            sys.print_exception(e)
        else:
            import traceback

            traceback.print_exception(e)
    except Exception:
        pass
