"""Devices over MQTT: the hub's second acceptor, beside XiaozhiServer (WebSocket).

MqttServer logs in to a broker (the embedded amqtt one, or mosquitto/EMQX given as
mqtt://user:password@host:port), subscribes to `umcp/+/up` and gives every device that
says hello there a tools.hub.xiaozhi.Device, the same object WebSocket devices get: the
backend, its console and the bridge use it without knowing the transport. It talks to the
broker with the device's own client (lib/unet/mqtt.py).

The session per device follows the xiaozhi MQTT+UDP protocol (docs/mqtt.md, "What the
backend does"): a hello starts it and is answered with the session id and a `udp` block,
`mcp` messages go both ways as over WebSocket, `goodbye` ends it either way, an idle
device is pinged and then dropped, and losing the broker ends every session until the
server logs in again. MqttServer takes the same callbacks as XiaozhiServer and can share
its `devices` dict (tools.hub.front does).
"""

import asyncio
import json
import secrets
import time

from websockets.exceptions import ConnectionClosed

from .. import devicelib  # noqa: F401 (lib/ on sys.path: the device's own MQTT client)
from .broker import PREFIX, down_topic
from .udpaudio import UdpAudioReceiver
from .xiaozhi import (AUDIO_PARAMS, HELLO_TIMEOUT, MAX_MESSAGE, REQUEST_TIMEOUT, Device, DeviceHost,
                               background)
from unet.mqtt import MqttClient, MqttError

IDLE_TIMEOUT = 120.0
KEEPALIVE = 30  # seconds, our login's: a broker gone silent is noticed within 1.125 times that
FLUSH_S = 5.0  # how long close() lets the goodbyes it queued leave
UP_TOPICS = "%s/+/up" % PREFIX


class MqttLinkClosed(ConnectionClosed):
    """Raised by MqttConnection.send after the session ended: it is a websockets
    ConnectionClosed, so Device treats it exactly as a closed WebSocket."""

    def __init__(self, reason="session ended"):
        super().__init__(None, None)
        self.why = reason

    def __str__(self):
        return self.why


class MqttConnection:
    """What Device needs of its connection, over a broker: send(text), close()."""

    def __init__(self, server, name, session_id):
        self.server = server
        self.name = name
        self.session_id = session_id
        self.closed = False
        self.last_rx = self.last_tx = time.monotonic()
        self.pinging = False

    async def send(self, text):
        if self.closed:
            raise MqttLinkClosed()
        try:
            self.server.publish(self.name, text)
            self.last_tx = time.monotonic()
        except MqttError as error:
            raise MqttLinkClosed("broker link lost: %s" % error) from None

    async def close(self, code=1000, reason=""):
        """End the session: the device hears `goodbye` (it may say hello again)."""
        if not self.closed:
            self.server.end(self.name, reason or "closed", tell_device=True)


class MqttServer(DeviceHost):
    """Accepts devices through an MQTT broker. Callbacks as XiaozhiServer's."""

    def __init__(self, on_device=None, on_notification=None, on_gone=None, log=None, trace=None,
                 request_timeout=REQUEST_TIMEOUT, idle_timeout=IDLE_TIMEOUT, devices=None, names=None,
                 public_host="127.0.0.1", keepalive=KEEPALIVE):
        super().__init__(devices, on_device, on_notification, on_gone, log, trace, request_timeout)
        self.names = names if names is not None else {}  # topic name -> device id (issued)
        self.sessions = {}  # topic name -> Device
        self.hello_timeout = HELLO_TIMEOUT
        self.idle_timeout = idle_timeout
        self.public_host = public_host
        self.keepalive = keepalive
        self.udp = UdpAudioReceiver()
        self.udp_port = None
        self.connected = asyncio.Event()  # logged in to the broker and subscribed
        self._client = None  # unet.mqtt.MqttClient of the current login
        self._outbox = None  # (topic, text) queued by publish(), sent in order by _sender
        self._sender = None
        self._broker = None
        self._tasks = []
        self._starting = {}
        self._udp_transport = None

    # ---- life cycle ----

    async def start(self, broker_host, broker_port, username=None, password=None, udp_host="127.0.0.1",
                    udp_port=0, client_id=None):
        """Log in to the broker (the first time must work: raises MqttError otherwise) and
        open the UDP socket; returns the UDP port."""
        self._broker = (broker_host, broker_port, username, password, client_id or "umcp-backend-" + secrets.token_hex(4))
        if self._udp_transport is None:
            loop = asyncio.get_running_loop()
            self._udp_transport, _ = await loop.create_datagram_endpoint(lambda: self.udp,
                                                                         local_addr=(udp_host, udp_port))
            self.udp_port = self._udp_transport.get_extra_info("sockname")[1]
        await self._login()
        self._tasks = [asyncio.create_task(self._keep_logged_in()), asyncio.create_task(self._idle_rule())]
        return self.udp_port

    async def close(self):
        for name in list(self.sessions):
            self.end(name, "backend shutting down", tell_device=True)
        if self._sender is not None and self.connected.is_set():
            try:  # the goodbyes first
                await asyncio.wait_for(self._outbox.join(), FLUSH_S)
            except asyncio.TimeoutError:
                pass
        tasks = self._tasks + ([self._sender] if self._sender is not None else [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.close()
        if self._udp_transport is not None:
            self._udp_transport.close()

    async def _login(self):
        host, port, username, password, client_id = self._broker
        client = MqttClient(client_id, username, password, keepalive=self.keepalive, max_packet=MAX_MESSAGE,
                            on_message=self._on_message)
        await client.connect(host, port, tls=False)  # mqtt:// is plain TCP, whatever the port
        try:
            await client.subscribe(UP_TOPICS)
        except MqttError:
            await client.close()
            raise
        self._client = client
        self._outbox = asyncio.Queue()
        self._sender = asyncio.create_task(self._send_queued(client, self._outbox))
        self.connected.set()

    async def _send_queued(self, client, outbox):
        """Publish what publish() queued, in order, while this login lasts."""
        while True:
            topic, text = await outbox.get()
            try:
                await client.publish(topic, text)
            except ValueError as error:  # over a topic or packet limit: that message alone
                self.log("mqtt: not sent on %s: %s" % (topic, error))
            except MqttError:
                return  # the login ended: _keep_logged_in logs in again
            finally:
                outbox.task_done()

    async def _keep_logged_in(self):
        while True:
            try:
                while True:  # on_message takes every message: recv() only raises, once the login ends
                    await self._client.recv()
            except MqttError as error:
                lost = error
            self.connected.clear()
            self._sender.cancel()
            self.log("mqtt: lost the broker (%s): ending %d sessions" % (lost, len(self.sessions)))
            for name in list(self.sessions):
                self.end(name, "broker lost", tell_device=False)
            delay = 1.0
            while True:
                await asyncio.sleep(delay)
                try:
                    await self._login()
                    self.log("mqtt: logged in to the broker again")
                    break
                except (OSError, MqttError, asyncio.TimeoutError) as error:
                    self.log("mqtt: broker still unreachable: %s" % (error or error.__class__.__name__))
                    delay = min(delay * 2, 10.0)

    async def _idle_rule(self):
        while True:
            await asyncio.sleep(max(self.idle_timeout / 8, 0.05))
            now = time.monotonic()
            for name, device in list(self.sessions.items()):
                quiet = now - device.connection.last_rx
                if quiet > self.idle_timeout:
                    self.log("%s: nothing from it for %d s: session ended" % (device.id, quiet))
                    self.end(name, "idle", tell_device=True)
                elif not device.connection.pinging and (
                        quiet > self.idle_timeout / 2 or now - device.connection.last_tx > self.idle_timeout / 2):
                    # the device keeps the same 120 s rule for what it hears from us
                    background(self._ping(device))

    async def _ping(self, device):
        device.connection.pinging = True
        try:
            await device.request("ping", timeout=self.idle_timeout / 2)
        except Exception:  # the idle rule decides; a failed ping only says nothing came
            pass
        finally:
            device.connection.pinging = False

    def publish(self, name, text):
        """Queue `text` for the down topic of `name` (sent in order); MqttError without a broker."""
        if not self.connected.is_set() or not self._client.connected:
            raise MqttError("no broker")
        self._outbox.put_nowait((down_topic(name), text))

    # ---- messages from devices ----

    def _on_message(self, topic, payload):
        parts = topic.split("/")
        if len(parts) != 3 or parts[0] != PREFIX or parts[2] != "up":
            return
        name = parts[1]
        try:
            message = json.loads(payload)
        except ValueError:
            self.log("%s: dropped a message that is not JSON" % name)
            return
        if not isinstance(message, dict):
            self.log("%s: dropped a message that is not a JSON object" % name)
            return
        kind = message.get("type")
        device = self.sessions.get(name)
        if device is not None:
            device.connection.last_rx = time.monotonic()
        if kind == "hello":
            self._hello(name, message)
        elif device is None:
            if kind != "goodbye":  # no session: tell it to say hello (as the gateway does)
                background(self._say_goodbye(name, message.get("session_id")))
        elif kind == "mcp":
            device.on_payload(message.get("payload"))
        elif kind == "goodbye":
            self.end(name, "the device said goodbye", tell_device=False)
        else:
            self.log("%s: ignored a %r message" % (device.id, kind))

    async def _say_goodbye(self, name, session_id):
        try:
            self.publish(name, json.dumps({"type": "goodbye", "session_id": session_id}))
        except MqttError:
            pass

    def _hello(self, name, hello):
        if name in self.sessions:
            self.log("%s said hello again: its previous session ends" % self.sessions[name].id)
            self.end(name, "replaced by a new hello", tell_device=False)
        device_id = self.names.get(name, name)
        connection = MqttConnection(self, name, None)
        device = Device(connection, device_id, "%s-%s" % (PREFIX, name), hello, self)
        device.transport = "mqtt"
        connection.session_id = device.session_id
        device.udp = {}
        key, nonce = self.udp.open(device.udp)
        answer = {"type": "hello", "transport": "udp", "session_id": device.session_id,
                  "audio_params": AUDIO_PARAMS,
                  "udp": {"server": self.public_host, "port": self.udp_port, "key": key, "nonce": nonce}}
        try:
            self.publish(name, json.dumps(answer, separators=(",", ":")))
        except MqttError:
            self.udp.close(device.udp)
            return
        previous = self.devices.get(device_id)
        if previous is not None:
            self.log("%s reconnected: closing its previous connection" % device_id)
            background(previous.connection.close(1000, "replaced by a new connection"))
        self.sessions[name] = device
        self.devices[device_id] = device
        if self._on_device:
            self._starting[name] = background(self._on_device(device))

    def end(self, name, reason, tell_device):
        """End the session of `name` (if any): the device is gone for its users."""
        device = self.sessions.pop(name, None)
        if device is None:
            return
        device.connection.closed = True
        if tell_device:
            try:
                self.publish(name, json.dumps({"type": "goodbye", "session_id": device.session_id}))
            except MqttError:
                pass
        self.udp.close(device.udp)
        device.closed.set()
        device.fail_pending()
        if self.devices.get(device.id) is device:
            del self.devices[device.id]
        starting = self._starting.pop(name, None)
        if starting is not None and not starting.done():
            starting.cancel()
        self.log("%s disconnected (%s)" % (device.id, reason))
        if self._on_gone:
            self._on_gone(device)
