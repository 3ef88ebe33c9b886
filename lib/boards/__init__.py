"""Board descriptions: one module per board with NAME, PINS and create(config, settings):
`esp32_s3_box3`, `m5stack_cores3`, `esp32s3_cam`, and `host`, the simulated board (it
needs tools/sim/hwsim). On a board only this file and the chosen board's module are copied.

create() returns a Board whose peripherals are driver objects, or None where the board has
none (or where one did not answer at start-up: that is logged, and the device carries on
without it). It restores the saved volume, brightness and theme.
"""

from umcp.compat import const, get_logger

_log = get_logger("boards")
_NAME_CHARS = const("abcdefghijklmnopqrstuvwxyz0123456789_")


def load(name):
    """The module boards.<name>."""
    if not name or [c for c in name if c not in _NAME_CHARS]:
        raise ImportError("bad board name %r" % (name,))
    return getattr(__import__("boards." + name), name)


class Board:
    """What the firmware sees of a board; board modules fill in what they have."""

    def __init__(self, name):
        self.name = name
        self.speaker = None  # set_volume(0..100), .volume
        self.backlight = None  # set_brightness(0..100), .brightness
        self.display = None  # set_theme("light" | "dark"), .theme, info()
        self.camera = None  # capture() -> JPEG bytes
        self.wlan = None  # network.WLAN, or None where the board needs no Wi-Fi
        # The chip ("esp32s3"...) firmware images must be built for; None: the platform
        # says (sys.implementation._machine on a board).
        self.chip = None
        # show_activation_code(code, message): a board with a way to show text defines it;
        # the code is logged on every board.

    def status(self):
        """Extra facts for self.get_device_status."""
        return {"board": self.name}

    def register_tools(self, server):
        """Board-only tools, registered after the common ones."""


def optional(what, make):
    """make(), or None if the part is missing or silent (logged: the device runs on)."""
    try:
        return make()
    except (OSError, ImportError) as e:
        _log.warning("%s unavailable: %r", what, e)
        return None


def restore(board, settings):
    """Apply the saved volume, brightness and theme to the board's parts."""
    if settings is None:
        return
    for part, setter, key in ((board.speaker, "set_volume", "volume"),
                              (board.backlight, "set_brightness", "brightness"),
                              (board.display, "set_theme", "theme")):
        value = settings.get(key)
        if part is None or value is None:
            continue
        try:
            getattr(part, setter)(value)
        except (ValueError, OSError) as e:
            _log.warning("cannot restore %s=%r: %r", key, value, e)
