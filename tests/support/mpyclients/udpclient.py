"""lib/xiaozhi/udp.py under MicroPython: micropython udpclient.py KEY NONCE PORT
Prints a checked packet's timestamp and whether the cipher (xiaozhi.aesctr) was loaded for
it, the packet it encodes, whether cryptolib had CTR, then sends one packet to PORT and
prints the one the test's peer sends back.
"""
import asyncio
import socket
import sys

from xiaozhi.udp import AudioCodec, UdpAudio

codec = AudioCodec(sys.argv[1], sys.argv[2])
checked = codec.check(b"\x01\x00\x00\x03" + bytes(4) + b"\x00\x00\x00\x07\x00\x00\x00\x01abc")
print("CHECKED", checked, "aesctr", "xiaozhi.aesctr" in sys.modules)
pkt = codec.encode(bytes(range(200)), 1234)
print("ENC", "".join("%02x" % b for b in pkt))
import xiaozhi.aesctr as aesctr  # noqa: E402 (loaded by encode())

print("CTRMODE", aesctr._ctr_mode)


async def main():
    ch = UdpAudio(AudioCodec(sys.argv[1], sys.argv[2]))
    ch.open("127.0.0.1", int(sys.argv[3]))
    ch.send(b"hello", 60)
    ts, payload = await asyncio.wait_for(ch.recv(), 3)
    print("RECV", ts, payload)
    ch.close()


asyncio.run(main())
