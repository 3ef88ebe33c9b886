"""lib/xiaozhi/udp.py under MicroPython: micropython udpclient.py KEY NONCE PORT
Prints the packet it encodes, whether cryptolib had CTR, then sends one packet to PORT
and prints the one the test's peer sends back.
"""
import asyncio
import socket
import sys

import xiaozhi.udp as u
from xiaozhi.udp import AudioCodec, UdpAudio

codec = AudioCodec(sys.argv[1], sys.argv[2])
pkt = codec.encode(bytes(range(200)), 1234)
print("ENC", "".join("%02x" % b for b in pkt))
print("CTRMODE", u._ctr_mode)


async def main():
    ch = UdpAudio(AudioCodec(sys.argv[1], sys.argv[2]))
    ch.open("127.0.0.1", int(sys.argv[3]))
    ch.send(b"hello", 60)
    ts, payload = await asyncio.wait_for(ch.recv(), 3)
    print("RECV", ts, payload)
    ch.close()


asyncio.run(main())
