"""The xiaozhi MQTT+UDP audio channel: AudioCodec (the packets, AES-128-CTR, the sequence
rules) and UdpAudio (the socket), unchanged on CPython 3.11+ and MicroPython 1.24+.

The packet format follows the reference firmware (78/xiaozhi-esp32 docs/mqtt-udp.md,
main/protocols/mqtt_protocol.cc); docs/mqtt.md, "The UDP audio packets", lays it out.

Crypto back ends: MicroPython's cryptolib in CTR mode (mode 6, only when the port was
built with MICROPY_PY_CRYPTOLIB_CTR), else cryptolib ECB (mode 1) with the counter
done here; CPython uses the `cryptography` package (imported only when needed).
"""

import binascii
import struct

from umcp.compat import const, get_logger

PACKET_TYPE = const(1)
HEADER_SIZE = const(16)
MAX_PAYLOAD = const(0xFFFF)
_MASK32 = const(0xFFFFFFFF)
_MASK128 = (1 << 128) - 1
_RECV_SIZE = const(1500)  # one Ethernet MTU: an Opus frame of 60 ms is far smaller

_log = get_logger("xiaozhi.udp")

try:
    import cryptolib
except ImportError:
    cryptolib = None

_ctr_mode = None  # MicroPython: whether cryptolib has mode 6 (probed on first use)


def _unhex(value, what):
    if isinstance(value, str):
        try:
            value = binascii.unhexlify(value)
        except ValueError:
            raise ValueError("%s is not hex" % what)
    if len(value) != 16:
        raise ValueError("%s must be 16 bytes" % what)
    return bytes(value)


def _ctr_software(key, iv, data):
    """AES-CTR from ECB: encrypt the counter blocks in one call, XOR as big integers."""
    n = len(data)
    if not n:
        return b""
    blocks = (n + 15) >> 4
    stream = bytearray(blocks << 4)
    counter = int.from_bytes(iv, "big")
    for i in range(blocks):
        stream[i << 4 : (i + 1) << 4] = ((counter + i) & _MASK128).to_bytes(16, "big")
    cryptolib.aes(key, 1).encrypt(stream, stream)
    keys = int.from_bytes(bytes(memoryview(stream)[:n]), "big")
    return (int.from_bytes(bytes(data), "big") ^ keys).to_bytes(n, "big")


def ctr_crypt(key, iv, data):
    """AES-128-CTR of `data` (encryption and decryption are the same) -> bytes."""
    global _ctr_mode
    if cryptolib is None:  # CPython
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        op = Cipher(algorithms.AES(bytes(key)), modes.CTR(bytes(iv))).encryptor()
        return op.update(bytes(data)) + op.finalize()
    if _ctr_mode is None:
        try:
            cryptolib.aes(b"\0" * 16, 6, b"\0" * 16)
            _ctr_mode = True
        except ValueError:  # built without MICROPY_PY_CRYPTOLIB_CTR
            _ctr_mode = False
    if _ctr_mode:
        out = bytearray(len(data))
        cryptolib.aes(key, 6, iv).encrypt(data, out)
        return bytes(out)
    return _ctr_software(key, iv, data)


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
        payload = ctr_crypt(self.key, bytes(packet[:HEADER_SIZE]), memoryview(packet)[HEADER_SIZE:])
        self.remote_sequence = sequence
        return timestamp, payload


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

    async def recv(self):
        """Next accepted (timestamp, payload); dropped packets are skipped."""
        while True:
            if self._stream is not None:  # MicroPython: one datagram per read
                data = await self._stream.read(_RECV_SIZE)
            else:
                data = await self._loop.sock_recv(self._sock, _RECV_SIZE)
            if data:
                result = self.codec.decode(data)
                if result is not None:
                    return result

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._stream = self._loop = None
