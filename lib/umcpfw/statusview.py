"""The status screen (StatusView): what the board is doing, in a few lines of text on a
small screen (an OLED or LCD part with "status": true). Imported only on a board that
has one.

It shows the connection state, an alarm's label while it rings (`note`), a turn's text
for a minute after it came (`talk`: umcpfw.turntext), the activation code while one is
pending (nothing else then: the owner needs it), the Wi-Fi setup's access point and
password while that mode runs, the last tool called and whether it worked, the volume
and the brightness. The theme (light/dark) is the panel's.

Updates never make anyone wait: changed() only sets an Event, and the view's own task
draws once for any number of changes meanwhile. A second small task sets it every
_POLL_S, for the link's state: a look makes only the Event's wait (no wait_for task,
coroutine or TimeoutError; whole seconds: no float).
"""

import asyncio

from umcp.compat import const, get_logger, ticks_diff, ticks_ms

_POLL_S = const(2)  # how often the link's state is looked at without a change announced
_TALK_MS = const(60000)  # how long a turn's text stays on the screen


class StatusView:
    """The status view on one screen, for the application `app`.

    It draws only when the text differs from what the panel shows, and also looks every
    _POLL_S, for the link's state. The screen: any object with `rows`,
    `columns`, show(lines) (OSError/RuntimeError when the panel does not answer),
    `theme` and set_theme(theme), and `held` (True while a maker's text is on it: the
    view leaves the panel alone until it is cleared), as parts.screen.Screen is. The
    theme is the board's display's (a board's own Display, or the screen itself where
    the board has none: umcpfw.boot sets it up).
    """

    # Class attributes: an instance holds its own only once they change.
    tool = None  # the last tool called (its name, the server's: nothing made for it)
    ok = True  # whether it worked
    setup = None  # (access point, password, address) while Wi-Fi setup runs
    note = None  # a text shown under the state for a while (an alarm's label: umcpfw.alarmbell)
    talk = None  # a turn's text, lines for under the state, since talk_at (umcpfw.turntext)
    talk_at = 0
    turns = None  # the last turns [(role, text)...] and emotion: device://conversation's
    emotion = None
    shown = None  # the lines on the panel, None: not drawn yet
    failed = False  # the panel did not answer at the last draw (logged once)

    def __init__(self, screen, app):
        self.screen = screen
        self.app = app
        self._changed = asyncio.Event()

    def changed(self):
        """Something shown may have changed: the view's task redraws soon."""
        self._changed.set()

    def on_call(self, name, ok):
        """McpServer.on_call: the last tool and how it went (kept as they come: a call
        makes nothing here; lines() names the tool)."""
        self.tool = name
        self.ok = ok
        self._changed.set()

    def lines(self):
        """The text for the panel now."""
        app = self.app
        if self.setup is not None:
            ssid, password, address = self.setup
            return ["Wi-Fi setup", "Join " + ssid, "Key " + password, address]
        activation = app.ota.activation if app.ota is not None else None
        if activation and activation.get("code"):
            from parts.screen import wrap

            return ["Activation code", activation["code"]] + wrap(
                activation.get("message") or "", self.screen.columns)
        link = app.link
        if link is not None and link.connected.is_set():
            state = "Online"
        elif app.ota is not None and app.link is None:
            state = "Checking in"
        else:
            state = "Connecting"
        lines = [state]
        if self.note is not None:
            from parts.screen import wrap

            return lines + wrap(self.note, self.screen.columns)[:max(1, self.screen.rows - 1)]
        if self.talk is not None:
            if ticks_diff(ticks_ms(), self.talk_at) < _TALK_MS:
                return lines + self.talk
            self.talk = None
        if self.tool is not None:
            lines.append("%s %s" % (short(self.tool), "ok" if self.ok else "error"))
        board = app.board
        if board.speaker is not None:
            lines.append("Volume %d" % board.speaker.volume)
        if board.backlight is not None:
            lines.append("Brightness %d" % board.backlight.brightness)
        return lines

    def draw(self):
        """Show lines() and the display's theme if either differs from what is shown."""
        screen = self.screen
        if screen.held:
            self.shown = None  # drawn again once the maker's text is cleared
            return
        theme = self.app.board.display.theme
        lines = self.lines()
        try:
            if theme != screen.theme:  # a board's own Display's (the screen's is its own)
                screen.set_theme(theme)
            if lines != self.shown:
                screen.show(lines)
                self.shown = lines
            self.failed = False
        except (OSError, RuntimeError) as e:
            if not self.failed:
                get_logger("status").warning("status screen: %s", e)
            self.failed = True
            self.shown = None

    async def run(self):
        """Draw at each change (coalesced) and every _POLL_S, until cancelled. A heap too
        full for a draw or a wait (a connection's peak on a board without PSRAM) skips that
        draw: the screen is drawn again at the next look, the view never stops for it."""
        ticker = asyncio.create_task(self._tick())
        changed = self._changed
        try:
            while True:
                changed.clear()
                try:
                    self.draw()
                except MemoryError:
                    self.shown = None
                try:
                    await changed.wait()
                except MemoryError:  # no heap for the wait's coroutine: look again after a pause
                    await asyncio.sleep(_POLL_S)
        finally:
            ticker.cancel()

    async def _tick(self):
        while True:
            await asyncio.sleep(_POLL_S)
            self._changed.set()


def short(name):
    """A tool's name for a 16-character line: without "self.", its last two parts
    ("lamp.turn_on"), or the last one when they are long."""
    parts = name.split(".")
    if parts[0] == "self":
        parts = parts[1:]
    both = ".".join(parts[-2:])
    return both if len(both) <= 12 else parts[-1][:12]
