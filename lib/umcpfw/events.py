"""Part events from config.json's "events" (docs/speaking.md, "Events"): a button's press,
long press (held _LONG_MS) or release, a sensor's number going above or below a value,
told as the board speaking first. Loaded only where config.json has events (by
umcpfw.boot's watch_events()), then resident: one Watcher, whose seen() is each watched
part's `watch` (parts.sensor.serve calls it after each reading, at its interval_ms). A
threshold fires once when crossed, and again only after the reading came back past the
hysteresis; an event fires at most once in "every" seconds (a crossing meanwhile waits,
a button's move is dropped). A firing is umcpfw.speak's event(), loaded for it: the text
on the xiaozhi link, a notifications/message to MCP clients. The events are
config.json's, checked and completed ("field", "hysteresis", "every") by umcpfw.eventcheck."""

import asyncio

from umcp.compat import await_then_forget, const, ticks_diff, ticks_ms

_LONG_MS = const(1000)  # a press held this long is a long press


class Watcher:
    """The events (config.json's list) of the Application `app`: for each, whether its
    threshold may fire (`armed`) and when it last fired (`fired`, ticks_ms); for each
    watched button, [presses seen, ticks_ms since it is held or None, long press told]."""

    def __init__(self, app, events):
        self.app = app
        self.events = events
        self.armed = [True] * len(events)
        self.fired = [None] * len(events)
        self.buttons = {}

    def seen(self, part):
        """A good reading of `part` (a parts.sensor.Sensor): the events it fires, started."""
        reading = part.reading
        now = ticks_ms()
        moves = self._moves(part, reading, now) if part.kind == "button" else None
        for index, event in enumerate(self.events):
            if event["part"] != part.name:
                continue
            if moves is not None:
                if event["on"] in moves:
                    self._fire(index, event, now, None)
                continue
            number = reading.get(event["field"])
            if number is None:
                continue
            above = event["on"] == "above"
            limit = event["value"]
            if self.armed[index]:
                if (number > limit if above else number < limit) and self._fire(index, event, now, number):
                    self.armed[index] = False
            elif number <= limit - event["hysteresis"] if above else number >= limit + event["hysteresis"]:
                self.armed[index] = True  # back past the hysteresis: it may fire again

    def _moves(self, part, reading, now):
        # A button's moves since its last reading: its interrupt counts the presses, however
        # short; the level tells a hold and a release.
        state = self.buttons[part.name]
        moves = []
        pressed = reading["pressed"]
        if reading["presses"] != state[0]:
            state[0] = reading["presses"]
            moves.append("press")
            if not pressed:
                moves.append("release")  # pressed and let go between two readings
        elif not pressed and state[1] is not None:
            moves.append("release")
        if pressed:
            if state[1] is None:
                state[1] = now
            elif not state[2] and ticks_diff(now, state[1]) >= _LONG_MS:
                state[2] = True
                moves.append("long_press")
        else:
            state[1] = None
            state[2] = False
        return moves

    def _fire(self, index, event, now, number):
        # Started unless the event fired less than "every" seconds ago: whether it was.
        last = self.fired[index]
        if last is not None and 0 <= ticks_diff(now, last) < event["every"] * 1000:
            return False
        self.fired[index] = now
        asyncio.create_task(await_then_forget("umcpfw.speak", "event", self.app, index, event, number))
        return True
