"""A scripted xiaozhi backend speaking MQTT, as xiaozhi-mqtt-gateway does towards a device:
it listens on the devices' publish topic, answers each hello on the device's reply topic
with a session id and a udp block (a real UDP socket here, which records the device's
packets), and hands the test a firmwareharness.Device to drive MCP with. The MQTT side
is amqtt's own client (not the device's unet.mqtt), against a real broker
(tests/support/brokers.py)."""

import asyncio
import itertools
import json
import socket

from tests.support.firmwareharness import AUDIO_PARAMS, WAIT_S, Device

UDP_KEY = "000102030405060708090a0b0c0d0e0f"
UDP_NONCE = "0100000012345678aabbccddeeff0011"


class _Channel:
    """What firmwareharness.Device needs of a WebSocket, over MQTT topics."""

    class request:
        headers = {}

    def __init__(self, backend):
        self.backend = backend
        self.inbox = asyncio.Queue()

    async def send(self, text):
        await self.backend.publish(text)

    async def recv(self):
        return await self.inbox.get()


class MqttBackend:
    def __init__(self, port, device_topic="device-server", reply_topic="devices/p2p/aa_bb",
                 udp=True, credentials=None):
        self.port = port
        self.credentials = credentials  # "user:password" for a broker that wants them
        self.device_topic = device_topic
        self.reply_topic = reply_topic
        self.udp = udp  # False: hellos answered without a udp block; "bad": with a bad one
        # gateway: before answering the first hello, ask initialize and tools/list without
        # a session, as xiaozhi-mqtt-gateway does right after the device's CONNECT
        self.gateway = False
        self.cached_tools = None  # what that prefetch got
        self._waiting = {}  # request id -> future, for the prefetch
        self.answer = True  # False: hellos go unanswered
        self.hellos = []
        self.goodbyes = []
        self.other = []  # messages outside any session
        self.devices = asyncio.Queue()
        self.current = None  # _Channel of the current session
        self.session_ids = itertools.count(1)
        self.udp_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp_sock.bind(("127.0.0.1", 0))
        self.udp_sock.setblocking(False)
        self.client = None
        self._task = None

    async def start(self):
        from amqtt.client import MQTTClient

        self.client = MQTTClient(client_id="scripted-backend", config={"auto_reconnect": False})
        auth = self.credentials + "@" if self.credentials else ""
        await self.client.connect("mqtt://%s127.0.0.1:%d/" % (auth, self.port))
        await self.client.subscribe([(self.device_topic, 0)])
        self._task = asyncio.create_task(self._loop())
        return self

    async def stop(self):
        if self._task:
            self._task.cancel()
        try:
            await asyncio.wait_for(self.client.disconnect(), 2)
        except Exception:
            pass
        self.udp_sock.close()

    async def publish(self, text):
        data = text if isinstance(text, bytes) else text.encode()
        await self.client.publish(self.reply_topic, data, qos=0)

    async def _loop(self):
        while True:
            message = await self.client.deliver_message()
            text = bytes(message.publish_packet.payload.data).decode()
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            kind = parsed.get("type") if isinstance(parsed, dict) else None
            payload = parsed.get("payload") if kind == "mcp" else None
            if isinstance(payload, dict) and payload.get("id") in self._waiting:
                self._waiting.pop(payload["id"]).set_result((parsed, payload))
            elif kind == "hello":
                self.hellos.append(parsed)
                if self.gateway and self.cached_tools is None:
                    asyncio.create_task(self._prefetch_then_answer())
                elif self.answer:
                    await self._answer_hello()
            elif kind == "goodbye":
                self.goodbyes.append(parsed)
            elif self.current is not None:
                await self.current.inbox.put(text)
            else:
                self.other.append(text)

    async def _request(self, request_id, method, params):
        future = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        await self.publish(json.dumps({"type": "mcp", "payload": {
            "jsonrpc": "2.0", "id": request_id, "method": method, "params": params}}))
        return await asyncio.wait_for(future, 10)  # the gateway's 10 s

    async def _prefetch_then_answer(self):
        envelope, init = await self._request(10000, "initialize", {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "xiaozhi-mqtt-client", "version": "1.0.0"}})
        self.prefetch_envelope = envelope
        await self.publish(json.dumps({"type": "mcp", "payload": {
            "jsonrpc": "2.0", "method": "notifications/initialized"}}))
        tools, cursor, request_id = [], None, 10001
        while True:
            _, page = await self._request(request_id, "tools/list",
                                          {"cursor": cursor} if cursor else {})
            tools += page["result"]["tools"]
            cursor = page["result"].get("nextCursor")
            request_id += 1
            if not cursor:
                break
        self.cached_tools = tools
        if self.answer:
            await self._answer_hello()

    async def _answer_hello(self):
        session_id = "mqtt-session-%d" % next(self.session_ids)
        hello = {"type": "hello", "transport": "udp", "session_id": session_id,
                 "audio_params": AUDIO_PARAMS}
        if self.udp == "bad":
            hello["udp"] = {"server": "127.0.0.1", "port": 1, "key": "zz", "nonce": UDP_NONCE}
        elif self.udp:
            hello["udp"] = {"server": "127.0.0.1", "port": self.udp_sock.getsockname()[1],
                            "key": UDP_KEY, "nonce": UDP_NONCE}
        channel = _Channel(self)
        self.current = channel
        await self.publish(json.dumps(hello))
        if self.udp is True:  # a device takes no a session without a usable udp block
            await self.devices.put(Device(channel, self.hellos[-1], session_id))

    async def next_device(self, timeout=WAIT_S):
        return await asyncio.wait_for(self.devices.get(), timeout)

    async def goodbye(self, device):
        """The server ends the session (the gateway does so when the backend closes)."""
        self.current = None
        await self.publish(json.dumps({"type": "goodbye", "session_id": device.session_id}))
