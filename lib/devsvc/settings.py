"""Persistent device settings: one JSON object in a file, replaced atomically.

A save writes `<path>.tmp` and renames it over `<path>`; rename replaces the old file in
one step on LittleFS (the ESP32 default) and POSIX, so a power cut leaves either the old
or the new settings, never half a file. FAT refuses to rename onto an existing file: there
the old file is removed first, and a load that finds only `<path>.tmp` (power lost between
the two steps) takes the new settings from it. A missing, unreadable or corrupt file is logged,
noted in `problem`, and the defaults are used; the next save replaces it. The first boot
(no file yet) simply starts from the defaults.
"""

import errno
import json
import os

from umcp.compat import forget_modules, get_logger

_log = get_logger("settings")

# The transport the OTA server gave last: {"websocket": {...}} or {"mqtt": {...}}, saved by
# devsvc.otacheck and read by the application between checks (umcpfw.fleet).
TRANSPORT_KEY = "transport"
DEFAULTS = {
    "volume": 70,
    "brightness": 75,
    "theme": "light",
    "client_id": None,  # created on first load, then kept
    "asset_url": None,
    "server_url": None,
    "token": None,
}


def write_atomically(path, values):
    """`values` as JSON into `path`: written to `<path>.tmp`, then renamed over it (see
    above; config.json's Wi-Fi setup saves the same way)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(values))
        if hasattr(os, "fsync"):  # CPython; MicroPython commits the file on close
            f.flush()
            os.fsync(f.fileno())
    try:
        os.rename(tmp, path)
    except OSError as e:
        if e.args[0] != errno.EEXIST:
            raise
        os.remove(path)  # FAT: the new file is complete in tmp, which _load knows
        os.rename(tmp, path)


class Settings:
    def __init__(self, path="settings.json", defaults=DEFAULTS):
        self.path = path
        self.problem = None  # why the file could not be used, if it could not
        self.defaults = defaults
        from devsvc import settingsload  # boot only: dropped again below

        try:
            self._values = values = settingsload.load(self)
            made = not values.get("client_id")
            if made:
                values["client_id"] = settingsload.uuid4()
        finally:
            settingsload = None
            forget_modules("devsvc.settingsload")
        if made:
            try:
                self.save()
            except OSError as e:
                _log.warning("settings: cannot save %s: %s", path, e)

    def get(self, key, default=None):
        return self._values.get(key, default)

    def set(self, key, value):
        self.update({key: value})

    def update(self, values):
        """Change several settings with one save (none if nothing changed)."""
        changed = False
        for key, value in values.items():
            if key not in self._values or self._values[key] != value:
                self._values[key] = value
                changed = True
        if changed:
            self.save()

    def save(self):
        write_atomically(self.path, self._values)
