"""The xiaozhi session over MQTT+UDP (the reference's mqtt_protocol.cc, docs/mqtt-udp.md).
The same interface as the WebSocket link (xiaozhi.link.Link): run(), stop(), connected,
session_id, on_system/on_alert. JSON messages travel as MQTT PUBLISH (QoS 0) on the
topics the OTA server gave: the device publishes on publish_topic and hears on
subscribe_topic. The device's hello says version 3 and transport "udp"; the server's
hello must carry session_id and a udp block {server, port, key, nonce}, with which the
device opens the (AES-128-CTR) audio channel, as the protocol says, although it sends no
audio. MCP is served whenever the MQTT connection is up, session or not:
xiaozhi-mqtt-gateway sends initialize and tools/list right after CONNECT (no session id)
to cache the device's tools, and waits 10 s for each answer. Both hellos, and the audio
channel opened, are xiaozhi.mqttopening's, loaded for each session. A server goodbye ends
the session but not the MQTT connection: the device says hello again to come back (as
xiaozhi-mqtt-gateway expects); 120 s (idle_timeout) without a message from the server
counts as a dead session the same way. The MQTT keepalive (240 s by default) watches the
broker; any loss reconnects with the backoff."""

import asyncio

from umcp.compat import (await_then_forget, call_then_forget, const, dumps, forget_modules, get_logger,
                          ticks_diff, ticks_ms)
from unet.mqtt import MqttClient, MqttError, MqttRefused
from xiaozhi.link import Link, describe, parse

_log = get_logger("xiaozhi.mqtt")

_TLS_PORT = const(8883)  # the reference's port (xiaozhi.mqttsettings): TLS there
GATEWAY_MAX_PACKET = 8192  # xiaozhi-mqtt-gateway closes the connection above this


class SessionEnded(Exception):
    """The server said goodbye, or was silent for idle_timeout: hello again."""


class MqttLink(Link):
    """mqtt: the OTA answer's mqtt block {endpoint, client_id, username, password,
    publish_topic, subscribe_topic[, keepalive]}. max_send: the largest packet the broker
    takes (the tools/list page limit is lowered to fit it)."""

    transport = "udp"

    def __init__(self, server, mqtt, device_id, client_id, protocol_version=3, ca=None,
                 max_message=16384, on_system=None, on_alert=None, hello_timeout=10,
                 idle_timeout=120, backoff_min=1, backoff_max=60, stable_after=30,
                 keepalive=None, max_send=GATEWAY_MAX_PACKET):
        # The block's checks (xiaozhi.mqttsettings, the OTA check's too) are not kept.
        host, port = call_then_forget("xiaozhi.mqttsettings", "check_settings", mqtt)
        Link.__init__(self, server, device_id, client_id, protocol_version, ca, max_message,
                      on_system, on_alert, hello_timeout, idle_timeout, backoff_min,
                      backoff_max, stable_after)
        self.mqtt = mqtt
        self.host, self.port = host, port
        self.publish_topic = mqtt["publish_topic"]
        self.subscribe_topic = mqtt.get("subscribe_topic") or None
        self.keepalive = mqtt.get("keepalive", 240) if keepalive is None else keepalive
        self.max_send = max_send
        if server.page_limit > max_send:
            _log.info("tools/list pages limited to %d bytes (the broker's packet limit)", max_send)
            self.mcp.page_limit = max_send
        self.refused = None  # MqttRefused: the broker's last refusal (bad credentials...)
        self.udp = None  # UdpAudio of the current session
        self.hellos = 0  # hellos published
        self._client = None
        self._udp_task = None

    def _set_session_envelope(self, session_id):
        self._prefix = '{"session_id":%s,"type":"mcp","payload":' % dumps(session_id)
        self.mcp.set_sender(self._send_mcp, len(self._prefix.encode()) + 1 + self._overhead())

    def _can_send(self):
        """MCP goes out while the MQTT connection is up, inside a session or not (the
        gateway asks for the tools before it answers any hello)."""
        client = self._client
        return client is not None and client.connected and self._prefix is not None

    def _overhead(self):
        # MQTT fixed header (at most 5 bytes) and the topic (2-byte length + its bytes).
        return 5 + 2 + len(self.publish_topic.encode())

    async def _close(self):
        client = self._client
        if client is not None and client.connected:
            if self.connected.is_set():
                try:
                    await self.publish_json({"session_id": self.session_id, "type": "goodbye"})
                except Exception as e:
                    _log.info("goodbye not sent: %s", describe(e))
            await client.close()

    async def _hang_up(self):
        self.connected.clear()
        self._close_audio()
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- one MQTT connection, one or more sessions

    async def _session(self):
        mqtt = self.mqtt
        self._client = client = MqttClient(mqtt["client_id"], mqtt.get("username"),
                                           mqtt.get("password"), self.keepalive,
                                           max_packet=self.message_limit(), max_send=self.max_send)
        try:
            try:
                await client.connect(self.host, self.port, self.port == _TLS_PORT, self.ca,
                                     self.hello_timeout)
            except MqttRefused as e:
                # Bad credentials do not get better by asking again at once: wait the longest.
                self.refused = e
                self.backoff.slow_down()
                _log.error("MQTT broker %s:%d refused the device: %s (check the mqtt credentials"
                           " the OTA server gave)", self.host, self.port, e.reason)
                raise
            self.refused = None
            if self.stopping:
                return
            self._set_session_envelope("")  # MCP before any session: the gateway's own requests
            if self.subscribe_topic:
                await client.subscribe(self.subscribe_topic, 0, self.hello_timeout)
        finally:
            # The connection's and its opening's code (unet.mqtt's): not resident.
            forget_modules("unet.conn", "unet.mqttopen")
        while not self.stopping:
            try:
                await self._one_session(client)
            except SessionEnded as e:
                _log.info("session %s ended: %s", self.session_id, e)
                self.connected.clear()
                self._set_session_envelope("")
                self._close_audio()
                if self._up_since is not None and ticks_diff(ticks_ms(), self._up_since) \
                        >= self.stable_after * 1000:
                    self.backoff.reset()
                self._up_since = None
                self.last_delay = self.backoff.next()
                await self._pause(self.last_delay)

    async def _one_session(self, client):
        # Both hellos (xiaozhi.mqttopening, loaded for them), then the session's traffic.
        message, channel = await await_then_forget("xiaozhi.mqttopening", "open_session", self,
                                                   client, _log)
        self._close_audio()
        self.udp = channel
        self._udp_task = asyncio.create_task(self._drain_audio(channel))
        channel = None
        self.session_up(message, self._overhead())
        idle_ms = int(self.idle_timeout * 1000)
        last_rx = ticks_ms()
        while True:
            wait = 3600 if not idle_ms else (idle_ms - ticks_diff(ticks_ms(), last_rx)) / 1000
            if wait <= 0:
                raise SessionEnded("nothing from the server for %d ms" % idle_ms)
            try:
                topic, payload = await asyncio.wait_for(client.recv(), wait)
            except asyncio.TimeoutError:
                continue
            last_rx = ticks_ms()
            await self._incoming(payload)

    async def _incoming(self, payload):
        message, problem = parse(payload)  # the bytes as they came: UTF-8 is checked there
        if message is None:
            await self._unreadable(payload, problem)  # the same answer as over WebSocket
            return
        kind = message.get("type")
        if kind == "goodbye":
            sid = message.get("session_id")
            if sid is None or sid == self.session_id:
                raise SessionEnded("server goodbye")
            _log.info("ignored a goodbye for session %s", sid)
        elif kind == "hello":
            _log.warning("ignored a server hello inside session %s", self.session_id)
        else:
            await self._dispatch(message, payload)

    # -- the UDP audio channel

    async def _drain_audio(self, channel):
        """This device plays no audio: read what arrives (bad packets are logged and
        counted by the codec) and let it go, never decrypted."""
        try:
            while True:
                await channel.discard()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            _log.info("audio channel closed: %s", describe(e))

    def _close_audio(self):
        task, self._udp_task = self._udp_task, None
        if task is not None:
            task.cancel()
        channel, self.udp = self.udp, None
        if channel is not None:
            channel.close()

    # -- traffic

    async def publish_json(self, message):
        """Publish one message of the xiaozhi protocol (a dict) on publish_topic, if the
        connection is up (a failure is logged, not raised)."""
        await self._send_frame(dumps(message))

    async def _send_frame(self, frame):
        client = self._client
        if client is None or not client.connected:
            _log.warning("link down: dropped a message")
            return
        try:
            await client.publish(self.publish_topic, frame)
        except ValueError as e:  # over the broker's packet limit: never sent
            _log.error("message not sent: %s", e)
        except MqttError as e:
            _log.warning("message not sent: %s", e.reason)
