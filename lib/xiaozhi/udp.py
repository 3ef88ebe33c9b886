"""The xiaozhi MQTT+UDP audio channel: AudioCodec (the packets, AES-128-CTR, the sequence
rules) and UdpAudio (the socket), unchanged on CPython 3.11+ and MicroPython 1.24+.

The packet format follows the reference firmware (78/xiaozhi-esp32 docs/mqtt-udp.md,
main/protocols/mqtt_protocol.cc); docs/mqtt.md, "The UDP audio packets", lays it out.

The cipher, AES-128-CTR, is xiaozhi.aesctr's, imported by the first packet encrypted or
decrypted: a device that plays no audio only checks what arrives (UdpAudio.discard()).
"""

import binascii
import struct

from umcp.compat import const, get_logger

PACKET_TYPE = const(1)
HEADER_SIZE = const(16)
MAX_PAYLOAD = const(0xFFFF)
_MASK32 = const(0xFFFFFFFF)
_RECV_SIZE = const(1500)  # one Ethernet MTU: an Opus frame of 60 ms is far smaller

_log = get_logger("xiaozhi.udp")

_aes = None  # xiaozhi.aesctr, once a packet was encrypted or decrypted


def _unhex(value, what):
    if isinstance(value, str):
        try:
            value = binascii.unhexlify(value)
        except ValueError:
            raise ValueError("%s is not hex" % what)
    if len(value) != 16:
        raise ValueError("%s must be 16 bytes" % what)
    return bytes(value)


def ctr_crypt(key, iv, data):
    """AES-128-CTR of `data` (encryption and decryption are the same) -> bytes
    (xiaozhi.aesctr, imported at the first call)."""
    global _aes
    if _aes is None:
        import xiaozhi.aesctr as _aes
    return _aes.ctr_crypt(key, iv, data)


def parse_header(packet):
    """(payload_len, ssrc, timestamp, sequence) of a packet; ValueError if malformed."""
    if len(packet) < HEADER_SIZE:
        raise ValueError("packet shorter than its header (%d bytes)" % len(packet))
    if packet[0] != PACKET_TYPE:
        raise ValueError("bad packet type 0x%02x" % packet[0])
    size, ssrc, timestamp, sequence = struct.unpack(">HIII", bytes(packet[2:HEADER_SIZE]))
    if len(packet) != HEADER_SIZE + size:
        raise ValueError("payload length %d, datagram carries %d" % (size, len(packet) - HEADER_SIZE))
    return size, ssrc, timestamp, sequence


class AudioCodec:
    """Encrypts outgoing and checks/decrypts incoming audio packets of one session
    (the `udp` object of one server hello).

    Sequence rules (as the reference): the first outgoing packet has sequence 1 and each
    next one +1; an incoming packet whose sequence is not above the last accepted one is
    dropped (duplicate or replay); a jump forward is accepted and counted as a gap. Both
    counters restart at 0 with every server hello (a new AudioCodec).

    :param key: The hello's AES-128 key, hex.
    :param nonce: The hello's 16-byte nonce, hex: the header outgoing packets start from.
    :raises ValueError: When either is not hex of the right length.
    """

    def __init__(self, key, nonce):
        self.key = _unhex(key, "key")
        self.nonce = _unhex(nonce, "nonce")
        self.local_sequence = 0  # last sequence sent
        self.remote_sequence = 0  # last sequence accepted
        self.gaps = 0  # forward jumps seen
        self.lost = 0  # sequence numbers skipped by those jumps
        self.dropped = 0  # packets refused (malformed, old, duplicate)

    def encode(self, payload, timestamp):
        """One packet for `payload` (bytes-like) with the next sequence number."""
        if len(payload) > MAX_PAYLOAD:
            raise ValueError("audio payload too long")
        self.local_sequence = (self.local_sequence + 1) & _MASK32
        header = bytearray(self.nonce)
        struct.pack_into(">H", header, 2, len(payload))
        struct.pack_into(">II", header, 8, timestamp & _MASK32, self.local_sequence)
        return bytes(header) + ctr_crypt(self.key, header, payload)

    def decode(self, packet):
        """(timestamp, payload) of an incoming packet, or None when it is dropped."""
        timestamp = self.check(packet)
        if timestamp is None:
            return None
        return timestamp, ctr_crypt(self.key, bytes(packet[:HEADER_SIZE]), memoryview(packet)[HEADER_SIZE:])

    def check(self, packet):
        """An incoming packet's timestamp once its header and sequence are accepted (and
        counted), its payload left encrypted; None when it is dropped."""
        try:
            _, _, timestamp, sequence = parse_header(packet)
        except ValueError as e:
            self.dropped += 1
            _log.warning("audio packet dropped: %s", e)
            return None
        expected = self.remote_sequence + 1
        if sequence < expected:
            self.dropped += 1
            _log.warning("audio packet dropped: old sequence %d, expected %d", sequence, expected)
            return None
        if sequence != expected:
            self.gaps += 1
            self.lost += sequence - expected
            _log.warning("audio sequence gap: got %d, expected %d", sequence, expected)
        self.remote_sequence = sequence
        return timestamp


class UdpAudio:
    """A connected, non-blocking UDP socket carrying AudioCodec packets.

    Neither runtime's asyncio has a datagram API in common: CPython awaits
    loop.sock_recv(); MicroPython wraps the socket in an asyncio Stream, whose read()
    waits on the poller and then returns one datagram."""

    def __init__(self, codec):
        self.codec = codec
        self._sock = None
        self._stream = None  # MicroPython: the Stream recv() reads a datagram from
        self._loop = None  # CPython: the loop whose sock_recv() recv() awaits

    def open(self, host, port):
        import socket

        addr = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)[0][-1]
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.connect(addr)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        import asyncio

        # Called on the running loop: which way recv() reads is decided here, once.
        loop = asyncio.get_event_loop()
        if hasattr(loop, "sock_recv"):  # CPython
            self._loop = loop
        else:  # MicroPython: its loop has no datagram API
            self._stream = asyncio.StreamReader(sock)

    def send(self, payload, timestamp):
        """Send one audio frame; False when the socket cannot take it now (dropped:
        late audio is worthless, so this never waits)."""
        try:
            self._sock.send(self.codec.encode(payload, timestamp))
            return True
        except OSError as e:
            _log.warning("audio frame not sent: %r", e)
            return False

    async def _datagram(self):
        if self._stream is not None:  # MicroPython: one datagram per read
            return await self._stream.read(_RECV_SIZE)
        return await self._loop.sock_recv(self._sock, _RECV_SIZE)

    async def recv(self):
        """Next accepted (timestamp, payload); dropped packets are skipped."""
        while True:
            data = await self._datagram()
            if data:
                result = self.codec.decode(data)
                if result is not None:
                    return result

    async def discard(self):
        """Wait for the next datagram and let it go, checked and counted by the codec
        (AudioCodec.check) but not decrypted: what a device that plays no audio does."""
        data = await self._datagram()
        if data:
            self.codec.check(data)

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._stream = self._loop = None
