"""xiaozhi.udp: packet format, AES-128-CTR against vectors computed with `cryptography`,
sequence rules, and the same code under the MicroPython unix port (cryptolib, ECB
fallback: its cryptolib has no CTR mode)."""

import asyncio
import os
import socket
import subprocess

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from tests.support import ROOT
from tests.support.mpyclients import MICROPYTHON
from tools.mpy import micropython_env
from xiaozhi import aesctr, udp

LIB = os.path.join(ROOT, "lib")
from xiaozhi.udp import AudioCodec, UdpAudio

KEY = "000102030405060708090a0b0c0d0e0f"
NONCE = "0100000012345678aabbccddeeff0011"  # type 1, flags 0, len 0, ssrc 0x12345678, ...


def reference_packet(key, nonce, payload, timestamp, sequence):
    """What mqtt_protocol.cc SendAudio produces, written out independently."""
    header = bytearray(bytes.fromhex(nonce))
    header[2:4] = len(payload).to_bytes(2, "big")
    header[8:12] = timestamp.to_bytes(4, "big")
    header[12:16] = sequence.to_bytes(4, "big")
    enc = Cipher(algorithms.AES(bytes.fromhex(key)), modes.CTR(bytes(header))).encryptor()
    return bytes(header) + enc.update(payload) + enc.finalize()


def test_encode_matches_reference():
    codec = AudioCodec(KEY, NONCE)
    for seq, size in ((1, 0), (2, 1), (3, 16), (4, 17), (5, 333), (6, 4000)):
        payload = os.urandom(size)
        packet = codec.encode(payload, 960 * seq)
        assert packet == reference_packet(KEY, NONCE, payload, 960 * seq, seq)
        assert packet[:2] == b"\x01\x00" and packet[4:8] == b"\x12\x34\x56\x78"
        assert udp.parse_header(packet) == (size, 0x12345678, 960 * seq, seq)


def test_counter_carries_across_128_bits():
    nonce = "01000000ffffffffffffffffffffffff"  # the counter wraps inside the payload
    payload = os.urandom(100)
    codec = AudioCodec(bytes.fromhex(KEY), bytes.fromhex(nonce))
    codec.local_sequence = 0xFFFFFFFE
    packet = codec.encode(payload, 0xFFFFFFFF)
    assert packet == reference_packet(KEY, nonce, payload, 0xFFFFFFFF, 0xFFFFFFFF)
    # the software CTR (MicroPython without mode 6) computes the same with AES-ECB
    class Ecb:
        def __init__(self, key, mode):
            assert mode == 1
            self.enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()

        def encrypt(self, src, dst):
            dst[:] = self.enc.update(bytes(src))

    saved = aesctr.cryptolib
    aesctr.cryptolib = type("cryptolib", (), {"aes": Ecb})
    try:
        assert aesctr._ctr_software(bytes.fromhex(KEY), packet[:16], payload) == packet[16:]
    finally:
        aesctr.cryptolib = saved


def test_decode_and_sequence_rules():
    tx = AudioCodec(KEY, NONCE)
    rx = AudioCodec(KEY, NONCE)
    frames = [(os.urandom(50 + i), 60 * i) for i in range(6)]
    packets = [tx.encode(p, ts) for p, ts in frames]
    assert rx.decode(packets[0]) == (frames[0][1], frames[0][0])
    assert rx.decode(packets[0]) is None  # duplicate
    assert rx.decode(packets[1]) == (frames[1][1], frames[1][0])
    assert rx.decode(packets[4]) == (frames[4][1], frames[4][0])  # gap: accepted, counted
    assert (rx.gaps, rx.lost) == (1, 2)
    assert rx.decode(packets[2]) is None  # late: below the expected sequence
    assert rx.decode(packets[5])[1] == frames[5][0]
    assert rx.remote_sequence == 6 and rx.dropped == 2
    # check(): the same rules, the payload left encrypted (a device that plays no audio)
    checker = AudioCodec(KEY, NONCE)
    assert [checker.check(packets[i]) for i in (0, 0, 1, 4, 2, 5)] == [0, None, 60, 240, None, 300]
    assert (checker.remote_sequence, checker.dropped, checker.gaps, checker.lost) == (6, 2, 1, 2)
    assert checker.check(b"\x02" + bytes(15)) is None and checker.dropped == 3


@pytest.mark.parametrize("packet", [
    b"\x01\x00\x00",  # shorter than a header
    b"\x02" + bytes(15),  # wrong type
    b"\x01\x00\x00\x05" + bytes(12) + b"abc",  # length says 5, carries 3
])
def test_malformed_dropped(packet):
    rx = AudioCodec(KEY, NONCE)
    assert rx.decode(packet) is None and rx.dropped == 1 and rx.remote_sequence == 0


def test_bad_key_or_nonce():
    for key, nonce in (("00", NONCE), (KEY, "zz" * 16), (KEY, bytes(15))):
        with pytest.raises(ValueError):
            AudioCodec(key, nonce)


def test_udp_socket_roundtrip():
    async def main():
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("127.0.0.1", 0))
        server.setblocking(False)
        loop = asyncio.get_running_loop()
        ch = UdpAudio(AudioCodec(KEY, NONCE))
        ch.open("127.0.0.1", server.getsockname()[1])
        assert ch.send(b"opus frame", 60)
        data, addr = await loop.sock_recvfrom(server, 2048)
        assert data == reference_packet(KEY, NONCE, b"opus frame", 60, 1)
        peer = AudioCodec(KEY, NONCE)  # the server's side
        for i in (1, 1, 2):  # the duplicate is skipped by recv()
            peer.local_sequence = i - 1
            await loop.sock_sendto(server, peer.encode(b"tts %d" % i, i * 60), addr)
        assert await asyncio.wait_for(ch.recv(), 2) == (60, b"tts 1")
        assert await asyncio.wait_for(ch.recv(), 2) == (120, b"tts 2")
        # discard(): a datagram read, checked and counted, not decrypted
        await loop.sock_sendto(server, peer.encode(b"tts 3", 180), addr)
        await loop.sock_sendto(server, b"\x01\x00", addr)
        for _ in range(2):
            assert await asyncio.wait_for(ch.discard(), 2) is None
        assert (ch.codec.remote_sequence, ch.codec.dropped) == (3, 2)
        ch.close()
        server.close()

    asyncio.run(main())


def test_micropython_codec_and_socket():
    script = os.path.join(ROOT, "tests", "support", "mpyclients", "udpclient.py")
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    peer.settimeout(10)
    proc = subprocess.Popen([str(MICROPYTHON), script, KEY, NONCE, str(peer.getsockname()[1])],
                            env=micropython_env([LIB]),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        data, addr = peer.recvfrom(2048)
        assert data == reference_packet(KEY, NONCE, b"hello", 60, 1)
        server_side = AudioCodec(KEY, NONCE)
        peer.sendto(server_side.encode(b"from server", 99), addr)
        out = proc.communicate(timeout=10)[0]
    finally:
        proc.kill()
        peer.close()
    assert proc.returncode == 0, out
    enc = [l for l in out.splitlines() if l.startswith("ENC ")][0].split()[1]
    assert bytes.fromhex(enc) == reference_packet(KEY, NONCE, bytes(range(200)), 1234, 1)
    assert "RECV 99 b'from server'" in out, out
    assert "CHECKED 7 aesctr False" in out, out  # a packet checked: the cipher not loaded
