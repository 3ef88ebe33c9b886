"""A turn's text on the status screen: what the xiaozhi server heard (its "stt" message),
what it says (each "tts" "sentence_start") and the emotion its "llm" message names. The
status view (umcpfw.statusview) keeps the last MAX_TURNS lines, each cut to MAX_TEXT
characters, and shows them for a minute after the last one; device://conversation
holds them too. Loaded for each such message (the link's on_turn, set only on a board
with a status screen: umcpfw.linkconfig) and for each read of the resource, dropped after.
Anything else (no text, text that is not a string, an unknown state) is ignored."""

from umcp.compat import const, get_logger, ticks_ms

MAX_TURNS = const(6)  # lines kept (the resource's; the screen shows what fits of them)
MAX_TEXT = const(120)  # characters kept of one line
_MAX_EMOTION = const(16)
URI = "device://conversation"

_log = get_logger("status")


def take(view, message):
    """One stt, tts or llm message (a dict) for the StatusView `view`."""
    kind = message.get("type")
    if kind == "llm":
        emotion = message.get("emotion")
        if not isinstance(emotion, str) or not emotion.strip():
            return _bad(kind)
        view.emotion = emotion.strip()[:_MAX_EMOTION]
    elif kind == "stt" or message.get("state") == "sentence_start":
        text = message.get("text")
        if not isinstance(text, str):
            return _bad(kind)
        text = " ".join(text[:MAX_TEXT].split())  # cut first: no copy of a huge text
        if not text:
            return _bad(kind)
        turns = view.turns = (view.turns or [])[1 - MAX_TURNS:]
        turns.append(("user" if kind == "stt" else "assistant", text))
    else:
        return  # tts start, stop, sentence_end...: nothing to show
    view.talk = _screen(view)
    view.talk_at = ticks_ms()
    view.changed()
    view.app.server.resource_updated(URI)


def _bad(kind):
    _log.info("ignored a %s message without usable text", kind)


def _screen(view):
    """The lines under the state line: the emotion, then the last turns that fit, "> "
    before what was heard."""
    from parts.screen import wrap

    screen = view.screen
    room = max(1, screen.rows - 1)
    lines = []
    for who, text in view.turns or ():
        lines += wrap(("> " if who == "user" else "") + text, screen.columns)
    if view.emotion:
        return ["(%s)" % view.emotion] + lines[1 - room:] if room > 1 else lines[-1:]
    return lines[-room:]


def read(view):
    """device://conversation: {"turns": [{"role": "user" or "assistant", "text"}...],
    "emotion": the last one named, or None}."""
    return {"turns": [{"role": who, "text": text} for who, text in view.turns or ()],
            "emotion": view.emotion}
