"""The audio side of the xiaozhi MQTT+UDP protocol, as the hub receives it.

UdpAudioReceiver, the host's end of what lib/xiaozhi/udp.py's UdpAudio sends: one socket
for every device; a packet names its session by the ssrc in bytes 4-7 (the server's nonce
carries it, as the gateway does), is decrypted with AES-128-CTR under the session key with
its 16-byte header as counter block, and counted; a sequence not above the last accepted
one is dropped. No audio is played or sent.
"""

import asyncio
import os
import secrets
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class UdpAudioReceiver(asyncio.DatagramProtocol):
    """Counts the audio packets of every session (see the module doc)."""

    def __init__(self):
        self.sessions = {}  # ssrc -> stats dict (key, packets, bytes, dropped, sequence)
        self.transport = None

    def open(self, stats):
        while True:
            ssrc = secrets.randbits(32)
            if ssrc and ssrc not in self.sessions:
                break
        key = os.urandom(16)
        stats.update(ssrc=ssrc, key=key, packets=0, bytes=0, dropped=0, sequence=0)
        self.sessions[ssrc] = stats
        nonce = struct.pack(">BBHIII", 1, 0, 0, ssrc, 0, 0)
        return key.hex(), nonce.hex()

    def close(self, stats):
        self.sessions.pop(stats.get("ssrc"), None)

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, address):
        if len(data) < 16 or data[0] != 1:
            return
        size, ssrc, _timestamp, sequence = struct.unpack(">HIII", data[2:16])
        stats = self.sessions.get(ssrc)
        if stats is None or len(data) < 16 + size:
            return
        if sequence <= stats["sequence"]:
            stats["dropped"] += 1
            return
        decryptor = Cipher(algorithms.AES(stats["key"]), modes.CTR(data[:16])).decryptor()
        plain = decryptor.update(data[16:16 + size]) + decryptor.finalize()
        stats["sequence"] = sequence
        stats["packets"] += 1
        stats["bytes"] += len(plain)
        stats["last"] = plain
