"""The settings file read as the board starts (Settings() loads it once, then drops this
module: the read, its checks and the client id's making never run again in a session)."""

import binascii
import json
import os

from umcp.compat import get_logger

_log = get_logger("settings")


def _exists(path):
    # Asked of the file system rather than read from errno: ports number ENOENT
    # differently (the WebAssembly build reports 44 while its errno.ENOENT is 2).
    try:
        os.stat(path)
        return True
    except OSError:
        return False


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


def load(settings):
    """The values of `settings` (a Settings: its path and defaults) from its file; a missing,
    unreadable or corrupt file gives the defaults, and `settings.problem` says why."""
    values = dict(settings.defaults)
    path = settings.path
    tmp = path + ".tmp"
    if not _exists(path) and _exists(tmp):
        _log.warning("settings: completing a save that was cut short")
        os.rename(tmp, path)
    try:
        with open(path) as f:
            loaded = json.loads(f.read())
    except OSError as e:
        if not _exists(path):  # the first boot
            _log.info("settings: no %s yet: using defaults", path)
            return values
        return _use_defaults(settings, values, "cannot read %s (%s)" % (path, e))
    except ValueError as e:  # also covers a file that is not UTF-8
        return _use_defaults(settings, values, "%s is corrupt (%s)" % (path, e))
    if not isinstance(loaded, dict):
        return _use_defaults(settings, values, "%s holds no JSON object" % path)
    for key, value in loaded.items():
        default = settings.defaults.get(key)
        if default is not None and type(value) is not type(default):
            _log.warning("settings: ignoring %s=%r, expected a %s", key, value,
                         type(default).__name__)
            continue
        values[key] = value
    return values


def _use_defaults(settings, values, problem):
    settings.problem = problem + ": using defaults"
    _log.warning("settings: %s", settings.problem)
    return values
