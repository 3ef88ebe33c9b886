"""A small asyncio MQTT 3.1.1 client (CPython): what the hub needs to meet its devices
through a broker, and what tools.bench's simulated fleet uses (a thousand in one loop).

QoS 0 only (the xiaozhi gateway accepts nothing else), CONNECT with client id, user name,
password, keepalive and an optional last will; SUBSCRIBE; PUBLISH; PINGREQ every
keepalive/2; DISCONNECT. Received messages go to `on_message(topic, payload)` (plain
function, called in the reader: keep it short). `closed` is set when the link ends;
`error` says why. A refused CONNECT raises MqttRefused with the return code.
"""

import asyncio
import struct
from urllib.parse import unquote, urlsplit

REFUSALS = {1: "unacceptable protocol version", 2: "client identifier rejected", 3: "server unavailable",
            4: "bad user name or password", 5: "not authorized"}


class MqttError(Exception):
    pass


class MqttRefused(MqttError):
    def __init__(self, code):
        self.code = code
        super().__init__("connection refused: %d %s" % (code, REFUSALS.get(code, "unknown return code")))


def parse_mqtt_url(url):
    """mqtt://[user[:password]@]host[:port] -> (host, port, user, password)."""
    parts = urlsplit(url if "://" in url else "mqtt://" + url)
    if parts.scheme != "mqtt":
        raise ValueError("expected mqtt://host:port, got %r" % url)
    return (parts.hostname or "127.0.0.1", parts.port or 1883,
            unquote(parts.username) if parts.username else None,
            unquote(parts.password) if parts.password else None)


def _string(text):
    data = text.encode() if isinstance(text, str) else bytes(text)
    return struct.pack(">H", len(data)) + data


def _length(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _packet(kind, body):
    return bytes((kind,)) + _length(len(body)) + body


class MqttClient:
    def __init__(self, client_id, on_message=None, username=None, password=None, keepalive=60,
                 will=None, clean_session=True):
        self.client_id = client_id
        self.on_message = on_message
        self.username = username
        self.password = password
        self.keepalive = keepalive
        self.will = will  # (topic, payload) or None
        self.clean_session = clean_session
        self.closed = asyncio.Event()
        self.error = None
        self._reader = self._writer = None
        self._tasks = []
        self._ids = 0
        self._acks = {}

    async def connect(self, host, port, timeout=10):
        self._reader, self._writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        flags = 0x02 if self.clean_session else 0
        payload = _string(self.client_id)
        if self.will:
            flags |= 0x04
            payload += _string(self.will[0]) + _string(self.will[1])
        if self.username is not None:
            flags |= 0x80
            payload += _string(self.username)
            if self.password is not None:
                flags |= 0x40
                payload += _string(self.password)
        body = _string("MQTT") + bytes((4, flags)) + struct.pack(">H", self.keepalive) + payload
        self._writer.write(_packet(0x10, body))
        try:
            kind, data = await asyncio.wait_for(self._read_packet(), timeout)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError) as error:
            self._writer.close()
            raise MqttError("no CONNACK: %s" % (error.__class__.__name__,)) from None
        if kind >> 4 != 2 or len(data) != 2:
            self._writer.close()
            raise MqttError("expected CONNACK")
        if data[1]:
            self._writer.close()
            raise MqttRefused(data[1])
        self._tasks = [asyncio.create_task(self._read_loop())]
        if self.keepalive:
            self._tasks.append(asyncio.create_task(self._ping_loop()))

    async def _read_packet(self):
        head = await self._reader.readexactly(1)
        length, shift = 0, 0
        while True:
            byte = (await self._reader.readexactly(1))[0]
            length |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
            if shift > 21:
                raise MqttError("malformed remaining length")
        return head[0], await self._reader.readexactly(length)

    async def _read_loop(self):
        try:
            while True:
                kind, data = await self._read_packet()
                code = kind >> 4
                if code == 3:  # PUBLISH
                    qos = (kind >> 1) & 3
                    size = struct.unpack(">H", data[:2])[0]
                    topic = data[2:2 + size].decode()
                    offset = 2 + size
                    if qos:
                        packet_id = data[offset:offset + 2]
                        offset += 2
                        self._writer.write(_packet(0x40, packet_id))  # PUBACK (QoS 2 unsupported)
                    if self.on_message:
                        self.on_message(topic, data[offset:])
                elif code == 9:  # SUBACK
                    waiter = self._acks.pop(struct.unpack(">H", data[:2])[0], None)
                    if waiter and not waiter.done():
                        waiter.set_result(data[2:])
        except (asyncio.IncompleteReadError, ConnectionError, MqttError) as error:
            self.error = error.__class__.__name__ if not str(error) else str(error)
        except asyncio.CancelledError:
            pass
        finally:
            self._close()

    async def _ping_loop(self):
        while True:
            await asyncio.sleep(self.keepalive / 2)
            self._write(b"\xc0\x00")

    def _write(self, data):
        if self.closed.is_set():
            raise MqttError("not connected: %s" % (self.error or "closed"))
        self._writer.write(data)

    async def subscribe(self, topics, timeout=10):
        """Subscribe at QoS 0; returns the granted codes (0x80: refused)."""
        self._ids = self._ids % 65535 + 1
        body = struct.pack(">H", self._ids) + b"".join(_string(t) + b"\x00" for t in topics)
        waiter = asyncio.get_running_loop().create_future()
        self._acks[self._ids] = waiter
        self._write(_packet(0x82, body))
        return list(await asyncio.wait_for(waiter, timeout))

    def publish(self, topic, payload):
        """QoS 0: queued on the socket at once; raises MqttError when the link is down."""
        if isinstance(payload, str):
            payload = payload.encode()
        self._write(_packet(0x30, _string(topic) + payload))

    async def drain(self):
        if not self.closed.is_set():
            await self._writer.drain()

    async def disconnect(self):
        if not self.closed.is_set():
            try:
                self._writer.write(b"\xe0\x00")
                await self._writer.drain()
            except ConnectionError:
                pass
        self._close()
        for task in self._tasks:
            task.cancel()

    def abort(self):
        """Drop the TCP connection without DISCONNECT (the broker then sends the will)."""
        if self._writer is not None:
            self._writer.transport.abort()
        self._close()

    def _close(self):
        if self.closed.is_set():
            return
        self.closed.set()
        for waiter in self._acks.values():
            if not waiter.done():
                waiter.set_exception(MqttError("connection closed"))
        if self._writer is not None:
            self._writer.close()
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()
