"""The umcp firmware application, which /main.py starts: `app` (settings, board, MCP server
and link on one loop, the station's upkeep). Resident besides: `commontools` (the self.*
tools a model calls, the recent log lines). Loaded for a phase: `boot` (`bootmore`: what
some configs need), `configcheck`, `eventcheck`, `toolbudget` (config.json checked),
`station` (Wi-Fi, clock), `linkconfig` (each link built), `commonsetup`, `commontexts` and
`commonschemas` (the common tools registered, a tools/list entry written). Loaded for a
call, a read or a mode: `sysinfo` (the system information), `systools` (the other user-only
tools), `upgrading`, `resources`, `vision`, `fleet` and `checkin` (the OTA check),
`mcphttp`, `mcpserial`, `wifisetup`, `statusview`, `turntext` (a turn's text on the
screen), `alarmtools`, `alarmlist`, `alarmring`, `alarmbell`, `alarmstart` (at boot),
`speak` (an alarm or event said), `events` (a watched reading outside its limits),
`toolbudget` (self.tools.set_enabled), `orders` (the server's system command and alert, a
reboot); `alarms` while there are some, `toolrule` while tools are hidden (DESIGN.md's map).
Here: what the application and the modules it loads share (ConfigError, log and
log_exception(), WIFI_CHECK_S), so that a loaded module never imports the one loading it.
"""

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
