"""What a xiaozhi link seldom meets: the messages besides MCP (system, alert, a turn's text:
stt, tts, llm; and the audio ones this device has no use for), and whether a message it could not read is an "mcp"
envelope (then owed an answer). Loaded for such a message and dropped again
(xiaozhi.link): a session's steady traffic is MCP."""

from umcp.compat import get_logger, iscoroutine

_log = get_logger("xiaozhi")


async def dispatch(message, link):
    """A message other than MCP, from `link` (xiaozhi.link.Link): system and alert go to
    its on_system and on_alert; stt, tts and llm (a turn's text) to its on_turn where one
    is set, else they are dropped without a word (they come at every turn); custom...
    are features this device does not have: logged and dropped."""
    kind = message.get("type")
    if kind == "system":
        await _call(link.on_system, message)
    elif kind == "alert":
        await _call(link.on_alert, message)
    elif kind in ("stt", "tts", "llm"):
        if link.on_turn is not None:
            await _call(link.on_turn, message)
    else:
        _log.info("ignored a %s message", kind)


def is_mcp(data):
    """Whether an unreadable message (str or bytes) is an "mcp" envelope: its "type" says
    so, or (cut short before it) the text names it."""
    if isinstance(data, str):
        return data.find('"mcp"') >= 0
    from umcp.jsonpeek import member

    span = member(data, b"type")
    if span is not None:
        return data[span[0]:span[1]] == b'"mcp"'
    return data.find(b'"mcp"') >= 0


async def _call(callback, message):
    if callback is None:
        _log.info("no handler for a %s message", message.get("type"))
        return
    try:
        result = callback(message)
        if iscoroutine(result):
            await result
    except Exception as e:  # an application bug must not take the link down
        _log.error("%s handler failed: %s %s", message.get("type"), type(e).__name__, e)
