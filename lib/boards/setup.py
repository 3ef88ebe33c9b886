"""The start's work for a board, loaded while umcpfw.boot makes it and dropped after
(umcpfw.app): a board module's create() (which umcpfw.boot.load_board() finds) uses
add_parts(), optional() and restore() (imported inside create(): a resident board module
must not hold them). It loads no board module itself: a board module imports it.
"""

from umcp.compat import call_then_forget, get_logger

_log = get_logger("boards")


def add_parts(board, config, pins=None, builtin=(), chip=None):
    """config.json's "parts" onto `board`, after the board's own `builtin` entries (in the
    same form): checked first (parts.PartError, a ValueError, names a bad entry), against
    the pins the board module's PINS names (their values; nested dicts too). Which pins
    exist: the running chip's, else `chip` (the board module's), else config.json's "chip"
    (the generic board in the simulator). Once the parts are made, config["parts"] is None:
    the entries leave the heap."""
    entries = config.get("parts")
    if not entries and not builtin:
        return
    used = [entry.get("pin") for entry in builtin]
    taken = {}
    for what, pin in _pins(pins or {}):
        if pin not in used:
            taken[pin] = what
    names = tuple(getattr(board, "tool_names", ()))
    # One boot module of parts at a time, each off the heap again after its call: the boot's
    # peak stays low and none of their code stays resident.
    checked = call_then_forget("parts.check", "entries", entries, chip or config.get("chip"), taken, names,
                               list(builtin))
    board.parts = call_then_forget("parts.setup", "make", checked)
    if entries:
        # The entries are boot work: the parts hold what they need of them, and the
        # application keeps its config for the session (main.run() reads config.json anew).
        config["parts"] = None


def _pins(pins, prefix=""):
    for what, pin in pins.items():
        if isinstance(pin, dict):
            for inner in _pins(pin, prefix + what + " "):
                yield inner
        # Addresses are no pins; a button (BOOT) stays free for a button part.
        elif isinstance(pin, int) and pin >= 0 and what.split("_")[-1] not in ("addr", "button"):
            yield prefix + what, pin


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
        except (ValueError, OSError, RuntimeError) as e:  # RuntimeError: a silent screen part
            _log.warning("cannot restore %s=%r: %r", key, value, e)
