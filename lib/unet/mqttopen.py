"""What an MQTT 3.1.1 connection needs only as it opens (unet.mqtt's MqttClient loads it for
connect() and subscribe()): the CONNECT packet, the CONNACK read and a refusal's meaning,
the SUBSCRIBE packet. A caller that connects seldom (xiaozhi.mqttlink) forgets it after,
with unet.conn: a board without PSRAM needs that heap while the connection lasts."""

import struct

_CONNECT = 0x10
_CONNACK = 0x20
_SUBSCRIBE = 0x82  # SUBSCRIBE carries fixed-header flags 0b0010

REFUSALS = {
    1: "unacceptable protocol version",
    2: "client identifier rejected",
    3: "server unavailable",
    4: "bad user name or password",
    5: "not authorized",
}


def meaning(code):
    """What a CONNACK return code means."""
    return REFUSALS.get(code, "unknown return code")


def _packet(first, body):
    """A packet: its first byte, the remaining length (MQTT's variable-length integer), `body`."""
    head = bytearray((first,))
    n = len(body)
    while True:
        byte = n & 0x7F
        n >>= 7
        head.append(byte | 0x80 if n else byte)
        if not n:
            return bytes(head) + body


def _field(value):
    data = value.encode() if isinstance(value, str) else bytes(value)
    if len(data) > 0xFFFF:
        raise ValueError("field too long")
    return struct.pack("!H", len(data)) + data


def connect_packet(client_id, username, password, keepalive, clean_session):
    """CONNECT: protocol "MQTT" level 4 (3.1.1), the flags, keepalive (s), the client id and
    credentials (a password only with a username). ValueError for a field over 65535 bytes."""
    flags = 0x02 if clean_session else 0
    payload = _field(client_id)
    if username is not None:
        flags |= 0x80
        payload += _field(username)
        if password is not None:
            flags |= 0x40
            payload += _field(password)
    return _packet(_CONNECT, b"\x00\x04MQTT\x04" + struct.pack("!BH", flags, keepalive) + payload)


async def read_connack(reader):
    """The CONNACK's return code (0: accepted) from `reader`; ValueError for any other packet."""
    head = await reader.readexactly(2)
    if head[0] != _CONNACK or head[1] != 2:
        raise ValueError("expected CONNACK, got packet type 0x%02x" % head[0])
    return (await reader.readexactly(2))[1]


def subscribe_packet(pid, topic, qos):
    """SUBSCRIBE of one topic filter (bytes, checked) at `qos`, packet id `pid`."""
    return _packet(_SUBSCRIBE, struct.pack("!HH", pid, len(topic)) + topic + bytes((qos,)))
