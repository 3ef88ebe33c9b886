"""A scripted xiaozhi device over MQTT, on amqtt's own client (an MQTT implementation that
is not ours): checks in at the OTA endpoint, connects with the credentials it got, says
hello (version 3, transport udp), sends UDP audio packets the way the protocol has them,
and answers MCP requests with `answer(request)` (None: stay silent)."""

import asyncio
import json
import struct
import urllib.request

from amqtt.client import MQTTClient
from amqtt.mqtt.constants import QOS_0
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HELLO = {"type": "hello", "version": 3, "transport": "udp", "features": {"mcp": True},
         "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}}
TOOLS = [{"name": "self.echo", "description": "echo", "inputSchema": {"type": "object",
          "properties": {"text": {"type": "string"}}, "required": ["text"]}}]


def ota_check(ota_url, mac, client_id="5b0c3a4e-0000-4000-8000-000000000001"):
    body = json.dumps({"application": {"version": "0.1.0"}, "board": {"type": "host"}, "mac_address": mac}).encode()
    headers = {"Device-Id": mac, "Client-Id": client_id, "Content-Type": "application/json",
               "Activation-Version": "1", "User-Agent": "host/0.1.0"}
    with urllib.request.urlopen(urllib.request.Request(ota_url, body, headers), timeout=10) as response:
        return json.load(response)


def standard_answer(request):
    method = request.get("method")
    if method == "initialize":
        return {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted-mqtt", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "echo: " + request["params"]["arguments"]["text"]}],
                "isError": False}
    if method == "ping":
        return {}
    return None


class ScriptedMqttDevice:
    def __init__(self, mqtt, answer=standard_answer, will=True):
        self.mqtt = mqtt  # the OTA answer's mqtt block
        self.answer = answer
        self.will = will
        self.client = None
        self.received = []  # every message from the backend, decoded
        self.hello = None
        self.session_id = None
        self._arrived = asyncio.Event()
        self._task = None
        self.sequence = 0

    def uri(self, password=None):
        return "mqtt://%s:%s@%s" % (self.mqtt["username"], password or self.mqtt["password"], self.mqtt["endpoint"])

    async def connect(self, password=None):
        config = {"auto_reconnect": False, "keep_alive": 30}
        if self.will:
            config["will"] = {"topic": self.mqtt["publish_topic"], "message": json.dumps({"type": "goodbye"}),
                              "qos": QOS_0, "retain": False}
        self.client = MQTTClient(client_id=self.mqtt["client_id"], config=config)
        await self.client.connect(self.uri(password))
        return await self.client.subscribe([(self.mqtt["subscribe_topic"], QOS_0)])

    async def say_hello(self, timeout=10):
        self.hello = None
        self._task = self._task or asyncio.create_task(self._serve())
        before = len(self.received)
        await self.publish(HELLO)
        await self.wait_for(lambda m: m.get("type") == "hello", timeout, start=before)
        self.hello = next(m for m in reversed(self.received) if m.get("type") == "hello")
        self.session_id = self.hello["session_id"]
        self.sequence = 0
        return self.hello

    async def publish(self, message):
        await self.client.publish(self.mqtt["publish_topic"], json.dumps(message).encode(), qos=QOS_0)

    async def wait_for(self, test, timeout=10, start=0):
        async def waiting():
            while not any(test(m) for m in self.received[start:]):
                self._arrived.clear()
                await self._arrived.wait()
        await asyncio.wait_for(waiting(), timeout)

    async def _serve(self):
        while True:
            try:
                message = await self.client.deliver_message()
            except Exception:
                return
            if message is None:
                return
            decoded = json.loads(message.data)
            self.received.append(decoded)
            self._arrived.set()
            payload = decoded.get("payload") if decoded.get("type") == "mcp" else None
            if payload and "id" in payload and "method" in payload:
                result = self.answer(payload)
                if result is not None:
                    await self.publish({"session_id": self.session_id, "type": "mcp",
                                        "payload": {"jsonrpc": "2.0", "id": payload["id"], "result": result}})

    def udp_packet(self, payload, timestamp=0, sequence=None):
        """An audio packet as the device builds it from the server's nonce."""
        udp = self.hello["udp"]
        if sequence is None:
            self.sequence += 1
            sequence = self.sequence
        header = bytearray(bytes.fromhex(udp["nonce"]))
        struct.pack_into(">H", header, 2, len(payload))
        struct.pack_into(">II", header, 8, timestamp, sequence)
        encryptor = Cipher(algorithms.AES(bytes.fromhex(udp["key"])), modes.CTR(bytes(header))).encryptor()
        return bytes(header) + encryptor.update(payload) + encryptor.finalize()

    async def close(self, goodbye=False):
        if goodbye and self.client is not None:
            await self.publish({"session_id": self.session_id, "type": "goodbye"})
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self.client is not None:
            try:
                await self.client.disconnect()
            except Exception:
                pass
