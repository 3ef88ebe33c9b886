"""What an alarm does when it rings (umcpfw.alarms, which loads this module for it and
drops it after): the board speaking first.

- On the board: a buzzer part beeps, the status screen shows the label for a minute.
- To MCP clients: a notifications/message (logger "alarms": the id, label, whether it is
  late, repeat) and resources/updated on device://alarms.
- On the xiaozhi link: {"type": "listen", "state": "detect", "text": "[device_call]" +
  label}, which xiaozhi-esp32-server says as it is (text to speech, no model), or the label
  alone where the alarm asks, which the server takes as the user's words: a turn for the
  model, which may call the board's tools back. A link still connecting (a board that
  found an alarm missed at boot) is waited for, up to _LINK_WAIT_S.

Each way is tried whatever the others did."""

import asyncio

from umcp.compat import const, get_logger

DEVICE_CALL = "[device_call]"  # the prefix the server says the rest of as it is
_BEEP = {"frequency": 2000, "duration_ms": 600}
_SHOWN_S = const(60)  # how long the status screen shows a label
_LINK_WAIT_S = const(120)

log = get_logger("alarms")


async def ring(app, alarm, late):
    """Say the alarm (a stored alarm's dict) on every way the Application `app` has."""
    label = alarm["label"]
    log.warning("alarm %d%s: %s", alarm["id"], " (late)" if late else "", label)
    for say in (_board, _clients, _link):
        try:
            await say(app, alarm, label, late)
        except Exception as e:  # one way failing must not keep the others silent
            log.warning("alarm %d: %r", alarm["id"], e)


async def _board(app, alarm, label, late):
    for part in app.board.parts:
        if part.kind == "buzzer":
            part.beep(_BEEP)
            break
    view = app.status_view
    if view is not None:
        view.note = label
        view.changed()
        asyncio.create_task(_unshow(view, label))


async def _unshow(view, label):
    await asyncio.sleep(_SHOWN_S)
    if view.note == label:
        view.note = None
        view.changed()


async def _clients(app, alarm, label, late):
    await app.server.log("notice", {"alarm": alarm["id"], "label": label, "late": late,
                                    "repeat": alarm["repeat"]}, "alarms")
    app.server.resource_updated("device://alarms")


async def _link(app, alarm, label, late):
    # What xiaozhi-esp32-server's listenMessageHandler reads: "type", "state", "text".
    if not app.xiaozhi:
        return  # MCP endpoints only: no server to speak to
    for _ in range(_LINK_WAIT_S * 2):
        link = app.link
        if link is not None and link.connected.is_set():
            if await link.send_message({"type": "listen", "state": "detect",
                                        "text": label if alarm["ask"] else DEVICE_CALL + label}):
                return
        await asyncio.sleep(0.5)
    log.warning("alarm %d: the link was not up to say it", alarm["id"])
