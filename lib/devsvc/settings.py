"""Persistent device settings: one JSON object in a file, replaced atomically.

A save writes `<path>.tmp` and renames it over `<path>`; rename replaces the old file in
one step on LittleFS (the ESP32 default) and POSIX, so a power cut leaves either the old
or the new settings, never half a file. FAT refuses to rename onto an existing file: there
the old file is removed first, and a load that finds only `<path>.tmp` (power lost between
the two steps) takes the new settings from it. A missing, unreadable or corrupt file is logged,
noted in `problem`, and the defaults are used; the next save replaces it. The first boot
(no file yet) simply starts from the defaults.
"""

import binascii
import errno
import json
import os

from umcp.compat import get_logger

_log = get_logger("settings")

DEFAULTS = {
    "volume": 70,
    "brightness": 75,
    "theme": "light",
    "client_id": None,  # created on first load, then kept
    "asset_url": None,
    "server_url": None,
    "token": None,
}


def _exists(path):
    # Asked of the file system rather than read from errno: ports number ENOENT
    # differently (the WebAssembly build reports 44 while its errno.ENOENT is 2).
    try:
        os.stat(path)
        return True
    except OSError:
        return False


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


def uuid4():
    """A random (version 4) UUID string."""
    if hasattr(os, "urandom"):
        raw = bytearray(os.urandom(16))
    else:  # the WebAssembly port has no os.urandom; a client id needs no crypto strength
        import random
        raw = bytearray(random.getrandbits(8) for _ in range(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = binascii.hexlify(raw).decode()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


class Settings:
    def __init__(self, path="settings.json", defaults=DEFAULTS):
        self.path = path
        self.problem = None  # why the file could not be used, if it could not
        self._defaults = defaults
        self._values = self._load()
        if not self._values.get("client_id"):
            self._values["client_id"] = uuid4()
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

    def _load(self):
        values = dict(self._defaults)
        tmp = self.path + ".tmp"
        if not _exists(self.path) and _exists(tmp):
            _log.warning("settings: completing a save that was cut short")
            os.rename(tmp, self.path)
        try:
            with open(self.path) as f:
                loaded = json.loads(f.read())
        except OSError as e:
            if not _exists(self.path):  # the first boot
                _log.info("settings: no %s yet: using defaults", self.path)
                return values
            return self._use_defaults(values, "cannot read %s (%s)" % (self.path, e))
        except ValueError as e:  # also covers a file that is not UTF-8
            return self._use_defaults(values, "%s is corrupt (%s)" % (self.path, e))
        if not isinstance(loaded, dict):
            return self._use_defaults(values, "%s holds no JSON object" % self.path)
        for key, value in loaded.items():
            default = self._defaults.get(key)
            if default is not None and type(value) is not type(default):
                _log.warning("settings: ignoring %s=%r, expected a %s", key, value,
                             type(default).__name__)
                continue
            values[key] = value
        return values

    def _use_defaults(self, values, problem):
        self.problem = problem + ": using defaults"
        _log.warning("settings: %s", self.problem)
        return values
