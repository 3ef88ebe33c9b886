"""config.json's "events" checked (umcpfw.configcheck loads this module for them, and only
where config.json has events: a board without interns none of its names): each event names
a part of "parts", an "on" that part can do, a "value" for above and below, one "say" or
"ask" text, and its optional "field", "hysteresis" and "every". A mistake is one
ConfigError naming the event's index and key:

    config.json events[1] "on": a button's is press, long_press or release, not 'above'
"""

from umcp.compat import const
from umcpfw import ConfigError

# What an event may watch (umcpfw.events): a button's moves, and the numbers a sensor
# type reads (the first is the one watched unless "field" names another).
_BUTTON_ONS = const(("press", "long_press", "release"))
_FIELDS = {"analog": ("value", "raw"), "battery": ("level", "voltage"),
           "dht": ("temperature_c", "humidity"), "ds18b20": ("temperature_c",)}
_EVENT_KEYS = const(("part", "on", "value", "say", "ask", "field", "hysteresis", "every"))


def check(config, key, events):
    """umcpfw.configcheck's check of config.json's "events" (`key`), against its parts (the
    entries, unchecked here): ConfigError naming the event's index and key. Fills in each
    event's defaults ("field": the first number its part reads, "hysteresis": 1, "every":
    60 seconds) for umcpfw.events. (Named as configcheck's own: no name of its own interned.)"""
    parts = config.get("parts")
    if not isinstance(events, list):
        raise ConfigError('config.json: "events" must be a list of objects like '
                          '{"part": "door", "on": "press", "say": "someone is at the door"}')
    kinds = {}
    for entry in parts if isinstance(parts, list) else ():
        if isinstance(entry, dict):
            kinds[entry.get("name")] = entry.get("type")
    for index, event in enumerate(events):
        _check_event(index, event, kinds)


def _check_event(index, event, kinds):
    def bad(key, words):
        return ConfigError('config.json events[%d] "%s": %s' % (index, key, words))

    if not isinstance(event, dict):
        raise ConfigError("config.json events[%d] must be an object like "
                          '{"part": "door", "on": "press", "say": "..."}' % index)
    for key in event:
        if key not in _EVENT_KEYS:
            raise bad(key, "unknown key (the keys: %s)" % ", ".join(_EVENT_KEYS))
    part, on = event.get("part"), event.get("on")
    kind = kinds.get(part) if isinstance(part, str) else None
    if kind is None:
        raise bad("part", "no part named %r in \"parts\"" % (part,))
    if kind == "button":
        if on not in _BUTTON_ONS:
            raise bad("on", "a button's is press, long_press or release, not %r" % (on,))
    elif kind in _FIELDS:
        if on != "above" and on != "below":
            raise bad("on", "a %s's is above or below, not %r" % (kind, on))
        if not _number(event.get("value")):
            raise bad("value", "%s needs a number to cross, not %r" % (on, event.get("value")))
        field = event.setdefault("field", _FIELDS[kind][0])
        if field not in _FIELDS[kind]:
            raise bad("field", "a %s reads %s, not %r" % (kind, ", ".join(_FIELDS[kind]), field))
        if not _number(event.setdefault("hysteresis", 1)) or event["hysteresis"] <= 0:
            raise bad("hysteresis", "a number above 0, not %r" % (event["hysteresis"],))
    else:
        raise bad("part", "a %s has no events (buttons and sensors have)" % kind)
    if not _number(event.setdefault("every", 60)) or event["every"] <= 0:
        raise bad("every", "seconds above 0, not %r" % (event["every"],))
    if ("say" in event) == ("ask" in event):
        raise bad("say", 'one of "say" (said as it is) or "ask" (a turn for the model)')
    key = "say" if "say" in event else "ask"
    text = event[key]
    if not isinstance(text, str) or not 1 <= len(text) <= 120:
        raise bad(key, "text of 1 to 120 characters, not %r" % (text,))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
