"""Drives lib/unet/mqtt.py under MicroPython against a real broker or a silent server:
  micropython mqttclient.py roundtrip PORT | micropython mqttclient.py halfopen PORT
Prints one JSON object per check (tests/net/test_unet_mqtt_mpy.py asserts on them).
"""
import asyncio
import json
import sys

from umcp.compat import ticks_diff, ticks_ms
from unet.mqtt import MqttClient, MqttError


async def roundtrip(port):
    sub = MqttClient("mpy-sub", keepalive=1, max_packet=40000)
    pub = MqttClient("mpy-pub", keepalive=30)
    await sub.connect("127.0.0.1", port)
    await pub.connect("127.0.0.1", port)
    result = {"granted": await sub.subscribe("mpy/#", 1), "received": {}}
    await pub.publish("mpy/a", "qos0 text")
    await pub.publish("mpy/b", b"qos1 bytes", 1)
    await pub.publish("mpy/c", ['{"k":', b'"\xc3\xa9"', "}"], 1)
    big = bytes(range(256)) * 120  # 30720 bytes
    await pub.publish("mpy/big", big, 1)
    for _ in range(4):
        topic, payload = await asyncio.wait_for(sub.recv(), 5)
        if topic == "mpy/big":
            result["received"][topic] = [len(payload), bytes(payload) == big]
        else:
            result["received"][topic] = bytes(payload).decode()
    await asyncio.sleep(2.5)  # keepalive 1 s: the pings keep the link up
    result["alive"] = sub.connected
    await sub.close()
    await pub.close()
    result["closed"] = not sub.connected
    return result


async def halfopen(port):
    c = MqttClient("mpy-half", keepalive=2)
    await c.connect("127.0.0.1", port)
    t0 = ticks_ms()
    try:
        await c.recv()
    except MqttError as e:
        return {"dead_after_ms": ticks_diff(ticks_ms(), t0), "reason": e.reason}
    return {"dead_after_ms": None}


async def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    result = await (roundtrip(port) if mode == "roundtrip" else halfopen(port))
    result["check"] = mode
    print(json.dumps(result))


asyncio.run(main())
