"""The start of an MQTT+UDP session (xiaozhi.mqttlink's MqttLink), on a connected client: the
device's hello, the server's, whose udp block opens the audio channel, and meanwhile the MCP
requests xiaozhi-mqtt-gateway sends before it answers a hello. Loaded for each session and
dropped once it is up (umcp.compat.await_then_forget): a session's steady traffic needs none
of it."""

import asyncio

from umcp.compat import ticks_diff, ticks_ms
from xiaozhi.link import describe, parse
from xiaozhi.udp import AudioCodec, UdpAudio


async def open_session(link, client, log):
    """Say hello on `client` (`link`'s connection) and wait hello_timeout for a server hello
    with a usable udp block; anything else is dropped, but MCP, which is served. Returns
    (the server's hello, the UdpAudio channel opened for it); OSError when none came."""
    link.hellos += 1
    await link.publish_json(link.hello_message())
    started = ticks_ms()
    while True:
        left = link.hello_timeout * 1000 - ticks_diff(ticks_ms(), started)
        if left <= 0:
            raise OSError("no usable server hello within %s s" % link.hello_timeout)
        try:
            topic, payload = await asyncio.wait_for(client.recv(), left / 1000)
        except asyncio.TimeoutError:
            continue
        message, problem = parse(payload)  # the bytes as they came: UTF-8 is checked there
        if message is None:
            log.warning("dropped %s", problem)
            continue
        kind = message.get("type")
        if kind == "hello":
            channel = _open_audio(message, log)
            if channel is not None:
                return message, channel
        elif kind == "mcp":  # the gateway asks for initialize and tools/list at once
            await link.mcp.handle(message.get("payload"), payload, b"payload")
        else:
            log.warning("ignored a %s message before the server hello", kind)


def _open_audio(hello, log):
    """The audio channel the server's hello describes, open; None (logged) if it describes
    none usable: the hello is then dropped."""
    udp = hello.get("udp")
    if not isinstance(udp, dict):
        log.warning("dropped a server hello without a udp block")
        return None
    try:
        server, port = udp.get("server"), udp.get("port")
        if not isinstance(server, str) or not server or not isinstance(port, int) \
                or not 0 < port < 65536:
            raise ValueError("udp server/port missing or bad")
        channel = UdpAudio(AudioCodec(udp.get("key") or "", udp.get("nonce") or ""))
        channel.open(server, port)
    except (ValueError, TypeError, OSError) as e:
        log.warning("dropped a server hello with an unusable udp block: %s", describe(e))
        return None
    log.info("audio channel to %s:%d", server, port)
    return channel
