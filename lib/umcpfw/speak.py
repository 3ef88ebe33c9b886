"""The board speaking first on the xiaozhi link, for what rings or happens on it (an alarm:
umcpfw.alarmbell; a part's event: umcpfw.events, event()), loaded for one message and
dropped after: {"type": "listen", "state": "detect", "text": ...}, which
xiaozhi-esp32-server's listenMessageHandler reads, the text after "[device_call]" said as
it is, a text without it a turn for the model (docs/speaking.md)."""

import asyncio

from umcp.compat import const, get_logger

DEVICE_CALL = "[device_call]"  # the prefix the server says the rest of as it is
_LINK_WAIT_S = const(120)  # a link still connecting is waited for this long


async def to_link(app, text, ask, who):
    """Send `text` on the xiaozhi link of the Application `app`: said as it is, or with
    `ask` a turn for the model. A link still connecting is waited for; `who` names the
    sender in the warning when it was not up. Returns whether it was sent."""
    if not app.xiaozhi:
        return False  # MCP endpoints only: no server to speak to
    for _ in range(_LINK_WAIT_S * 2):
        link = app.link
        if link is not None and link.connected.is_set():
            if await link.send_message({"type": "listen", "state": "detect",
                                        "text": text if ask else DEVICE_CALL + text}):
                return True
        await asyncio.sleep(0.5)
    get_logger("speak").warning("%s: the link was not up to say it", who)
    return False


async def event(app, index, event, number):
    """A part's event fired (umcpfw.events): config.json's events[`index`], `event` (its
    dict), `number` the reading that crossed its value (None: a button's). Logged, told to
    MCP clients (a notifications/message, logger "events") and sent on the link; one way
    failing does not keep the other silent."""
    ask = "ask" in event
    text = event["ask"] if ask else event["say"]
    log = get_logger("events")
    log.info("event %d (%s %s): %s", index, event["part"], event["on"], text)
    told = {"event": index, "part": event["part"], "on": event["on"], "text": text, "ask": ask}
    if number is not None:
        told["reading"] = number
    try:
        await app.server.log("notice", told, "events")
    except Exception as e:
        log.warning("event %d: %r", index, e)
    try:
        await to_link(app, text, ask, "event %d" % index)
    except Exception as e:
        log.warning("event %d: %r", index, e)
