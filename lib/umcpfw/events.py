"""Part events from config.json's "events" (docs/speaking.md, "Events"): a button's press,
long press (held _LONG_MS) or release, a sensor's number going above or below a value, told
as the board speaking first. None of this stays on the heap: umcpfw.boot loads it to give
each watched part its `watch` (watch()), and the part's upkeep (parts.sensor.serve) loads it
again only for a reading outside the limits that watch holds (seen()): where a reading
changes nothing (a threshold's side of its value while it may fire, the side past the
hysteresis while it may not, a button's press count and level; none while a long press is
timed). Each event's state is in its own dict (config.json's, completed by
umcpfw.eventcheck): "armed", "fired" (ticks_ms), a button's "button" ([presses seen,
ticks_ms since held or None, long press told]). A threshold fires once when crossed, again
only once back past the hysteresis; an event fires at most once in "every" seconds (a
crossing meanwhile waits, this loaded at each reading until it fires; a button's move is
dropped). A firing is umcpfw.speak's event(), loaded for it."""

import asyncio

from umcp.compat import OnDemand, await_then_forget, const, ticks_diff, ticks_ms

_LONG_MS = const(1000)  # a press held this long is a long press


def watch(app):
    """umcpfw.boot's: each part of the Application `app`'s board that config.json's events
    name watched (its `watch` set), each event's state made."""
    seen = OnDemand("umcpfw.events", "seen", app)
    for part in app.board.parts:
        limits = []
        for event in app.config["events"]:
            if event["part"] == part.name and part.poll_ms:
                if part.kind == "button":
                    event["button"] = [(part.reading or {}).get("presses", 0), None, False]
                else:
                    event["armed"] = True
                limits += _limits(event)
        if limits:
            part.watch = (limits, seen)


def seen(app, part):
    """A good reading of `part` (a parts.sensor.Sensor) outside its watch's limits: the
    events it fires started, each event's state and the part's limits as they follow."""
    reading = part.reading
    now = ticks_ms()
    limits = []
    for index, event in enumerate(app.config["events"]):
        if event["part"] != part.name:
            continue
        if part.kind == "button":
            if event["on"] in _moves(event["button"], reading, now):
                _fire(app, index, event, now, None)
        else:
            number = reading[event["field"]]
            above = event["on"] == "above"
            limit = event["value"]
            if event["armed"]:
                if (number > limit if above else number < limit) and _fire(app, index, event, now, number):
                    event["armed"] = False
            elif number < limit - event["hysteresis"] if above else number > limit + event["hysteresis"]:
                event["armed"] = True  # back past the hysteresis: it may fire again
        limits += _limits(event)
    part.watch = (limits, part.watch[1])


def _limits(event):
    # Where a reading of the event's part changes nothing for it: [(key, low, high)].
    on = event["on"]
    if on == "above" or on == "below":
        field, limit, far = event["field"], event["value"], float("inf")
        if event["armed"]:  # until it is crossed
            return [(field, -far, limit) if on == "above" else (field, limit, far)]
        back = event["hysteresis"]  # until it is back past the hysteresis
        return [(field, limit - back, far) if on == "above" else (field, -far, limit + back)]
    presses, held, told = event["button"]
    if on == "press":
        return [("presses", presses, presses)]
    if on == "long_press" and held is not None and not told:
        return [("pressed", True, False)]  # no reading is within: each one, until it is long
    down = held is not None
    return [("presses", presses, presses), ("pressed", down, down)]


def _moves(state, reading, now):
    # A button's moves since the event's last look (`state`, its "button"): its interrupt
    # counts the presses, however short; the level tells a hold and a release.
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


def _fire(app, index, event, now, number):
    # Started unless the event fired less than "every" seconds ago: whether it was.
    last = event.get("fired")
    if last is not None and 0 <= ticks_diff(now, last) < event["every"] * 1000:
        return False
    event["fired"] = now
    asyncio.create_task(await_then_forget("umcpfw.speak", "event", app, index, event, number))
    return True
