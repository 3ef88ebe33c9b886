"""The start's work for a board, loaded while umcpfw.boot makes it and dropped after
(umcpfw.app): a board module's create() (which umcpfw.boot.load_board() finds) uses
add_parts(), optional(), restore() and, for a board's own LCD, board_screen() (imported
inside create(): a resident board module must not hold them). It loads no board module
itself: a board module imports it.
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


def board_screen(board, panel, pins, settings, reset=None, init=()):
    """A board's own LCD (the BOX-3's, the CoreS3's, the camera board's) as its status screen:
    an Lcd named "screen" among the board's parts (after config.json's: a screen part marked
    "status" comes first), of a kind no tools are made for (self.screen.* stays the board's),
    from the board module's `panel` (width, height, rotation, x_offset, y_offset, invert,
    bgr, spi, freq, polarity, phase) and `pins` (lcd_sclk, lcd_mosi, lcd_dc; lcd_cs and
    lcd_rst, active low, where the chip drives them). `reset`: a callable that resets the
    panel instead of lcd_rst (an active-high line, an I/O expander's); `init`: (command,
    bytes) pairs sent after the driver's start-up (power, gamma). A panel that does not come
    up is logged: the board runs without a screen. Where no brightness was saved, the
    backlight goes to the reference firmware's 75 %. Call it after restore()."""
    entry = dict(panel)
    entry.update(name="screen", type="display", index=-1, where="the board's LCD", status=True,
                 sck=pins["lcd_sclk"], mosi=pins["lcd_mosi"], dc=pins["lcd_dc"], cs=pins.get("lcd_cs"),
                 rst=None if reset is not None else pins.get("lcd_rst"), bl=None, reset=reset, init=init)
    try:
        # Made and set up as config.json's parts are (parts.setup, dropped after).
        board.parts.append(call_then_forget("parts.setup", "make", [entry])[0])
    except (OSError, ValueError) as e:
        from parts import log  # (loaded with the part)

        log.warning("the board's LCD did not start, running without a screen: %r", e)
        return
    if board.backlight is not None and (settings is None or settings.get("brightness") is None):
        board.backlight.set_brightness(75)
