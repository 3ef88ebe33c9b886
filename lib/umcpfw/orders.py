"""What the application does seldom, loaded for it and dropped after: the server's system
command (a reboot) and alert, and the reboot itself (a tool's, the Wi-Fi setup's, the
server's). The link's on_system and on_alert are umcp.compat.OnDemand of these
(umcpfw.linkconfig); Application.reboot() starts reboot() on its own task. `app` is the
umcpfw.app Application."""

import asyncio

from umcpfw import log, log_exception


def on_system(app, message):
    if message.get("command") == "reboot":
        log.warning("server asked for a reboot")
        app.reboot(0)
    else:
        log.warning("ignoring system command %r", message.get("command"))


def on_alert(app, message):
    log.warning("alert from server: %s %s", message.get("status"), message.get("message"))


async def reboot(app, delay_ms):
    """Reset the device after delay_ms, once the links said goodbye."""
    log.warning("rebooting in %d ms", delay_ms)
    await asyncio.sleep(delay_ms / 1000)
    try:
        await app.stop()  # clean closes tell the backend and the endpoints we are going
    except Exception as e:
        log_exception("closing the links", e)
    import machine

    machine.reset()
