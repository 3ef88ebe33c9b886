"""python3 -m tools.bench.transport: a tools/call round trip over each xiaozhi transport.

The device's own link (lib/xiaozhi: XiaozhiLink over WebSocket, MqttLink over MQTT) with
a real umcp.McpServer runs on CPython on this machine; the backend side is a `websockets`
server, or the MQTT client the hub uses (lib/unet/mqtt.py, the device's own) through the
in-process amqtt broker and through mosquitto (the path a broker adds). It times ROUNDS calls of a tool that does nothing, from the
backend's send to the result's arrival, and prints median and 90th percentile, beside
each broker's floor: the same message echoed through it by a bare client, no device.
Figures only: nothing is asserted.
"""

import asyncio
import json
import logging
import os
import socket
import statistics
import sys
import threading
import time

from .. import devicelib  # noqa: F401 (lib/ on sys.path: the device's link and MQTT client)

ROUNDS = 200
HELLO = {"type": "hello", "session_id": "bench", "transport": "udp",
         "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1,
                          "frame_duration": 60}}


def _server():
    from umcp import McpServer, PropertyList

    server = McpServer(name="bench", version="1")
    server.add_tool("self.noop", "Does nothing", PropertyList([]), lambda args: True)
    return server


def _call(i):
    return json.dumps({"session_id": "bench", "type": "mcp", "payload": {
        "jsonrpc": "2.0", "id": i, "method": "tools/call",
        "params": {"name": "self.noop", "arguments": {}}}})


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _time_calls(send, recv):
    times = []
    for i in range(ROUNDS + 10):
        start = time.perf_counter()
        await send(_call(i))
        while True:
            message = json.loads(await recv())
            if message.get("type") == "mcp" and message["payload"].get("id") == i:
                break
        if i >= 10:  # the first ones warm up
            times.append((time.perf_counter() - start) * 1000)
    return times


async def websocket_rtt():
    from websockets.asyncio.server import serve

    from xiaozhi.link import XiaozhiLink

    result = asyncio.get_running_loop().create_future()

    async def handler(ws):
        await ws.recv()  # the device's hello
        await ws.send(json.dumps(dict(HELLO, transport="websocket")))
        result.set_result(await _time_calls(ws.send, ws.recv))
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0, ping_interval=None) as srv:
        port = srv.sockets[0].getsockname()[1]
        link = XiaozhiLink(_server(), "ws://127.0.0.1:%d/xiaozhi/v1/" % port, "t", "aa", "c")
        task = asyncio.create_task(link.run())
        times = await asyncio.wait_for(result, 120)
        await link.stop()
        await task
    return times


async def mqtt_rtt(port):
    from unet.mqtt import MqttClient
    from xiaozhi.mqttlink import MqttLink

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    hello = dict(HELLO, udp={"server": "127.0.0.1", "port": udp.getsockname()[1],
                             "key": "00" * 16, "nonce": "01" + "00" * 15})
    # The backend's side with the client the hub talks to the broker with.
    received = asyncio.Queue()
    backend = MqttClient("bench-backend", on_message=lambda topic, payload: received.put_nowait(payload))
    await backend.connect("127.0.0.1", port)
    await backend.subscribe("device-server")

    async def send(text):
        await backend.publish("devices/p2p/aa", text)

    async def recv():
        return bytes(await received.get()).decode()

    link = MqttLink(_server(), {"endpoint": "127.0.0.1:%d" % port, "client_id": "bench-dev",
                                "publish_topic": "device-server",
                                "subscribe_topic": "devices/p2p/aa"}, "aa", "c")
    task = asyncio.create_task(link.run())
    while json.loads(await recv()).get("type") != "hello":
        pass
    await send(json.dumps(hello))
    times = await _time_calls(send, recv)
    await link.stop()
    await task
    await backend.close()
    udp.close()
    return times


async def broker_echo_rtt(port):
    """The floor a broker sets: a message of a call's size from the backend's client through
    the broker to a bare client that publishes it straight back (no device, no MCP)."""
    from unet.mqtt import MqttClient

    received = asyncio.Queue()
    backend = MqttClient("floor-backend", on_message=lambda topic, payload: received.put_nowait(payload))
    echo = MqttClient("floor-echo")
    await backend.connect("127.0.0.1", port)
    await echo.connect("127.0.0.1", port)
    await backend.subscribe("floor/out")
    await echo.subscribe("floor/in")

    async def echo_back():  # one call at a time: echo's queue never fills
        while True:
            await echo.publish("floor/out", (await echo.recv())[1])

    async def send(text):
        await backend.publish("floor/in", text)

    async def recv():
        payload = bytes(await received.get()).decode()
        request = json.loads(payload)["payload"]
        # Shaped as _time_calls waits for it: an mcp message carrying the same id.
        return json.dumps({"type": "mcp", "payload": {"id": request["id"]}})

    echoing = asyncio.create_task(echo_back())
    times = await _time_calls(send, recv)
    echoing.cancel()
    await backend.close()
    await echo.close()
    return times


def _broker():
    from amqtt.broker import Broker

    for name in ("amqtt", "transitions"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    port = _free_port()
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    config = {"listeners": {"default": {"type": "tcp", "bind": "127.0.0.1:%d" % port}},
              "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin":
                          {"allow_anonymous": True}}}

    async def start():  # on the broker's own loop: Broker() looks for the running one
        await Broker(config, loop=loop).start()

    asyncio.run_coroutine_threadsafe(start(), loop).result(15)
    return port


def _mosquitto():
    """Debian's mosquitto on a free port (a subprocess), or None if not installed."""
    import shutil
    import subprocess
    import tempfile

    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    if not os.path.exists(binary):
        return None, None
    port = _free_port()
    conf = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    conf.write("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n" % port)
    conf.close()
    proc = subprocess.Popen([binary, "-c", conf.name], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    os.unlink(conf.name)
    return port, proc


def _line(name, times):
    times = sorted(times)
    return "%-32s %8.2f %8.2f   (%d calls)" % (name, statistics.median(times),
                                              times[int(len(times) * 0.9)], len(times))


def main():
    logging.basicConfig(level=logging.ERROR)
    port = _broker()
    ws = asyncio.run(websocket_rtt())
    mqtt = asyncio.run(mqtt_rtt(port))
    print("tools/call round trip on this machine, device link on CPython   median ms   p90 ms")
    print(_line("WebSocket (backend direct)", ws))
    print(_line("MQTT (amqtt broker in between)", mqtt))
    print(_line("  floor: bare echo through amqtt", asyncio.run(broker_echo_rtt(port))))
    ratios = ["amqtt %.2fx" % (statistics.median(mqtt) / statistics.median(ws))]
    mosquitto_port, proc = _mosquitto()
    if proc is not None:
        try:
            through = asyncio.run(mqtt_rtt(mosquitto_port))
            print(_line("MQTT (mosquitto in between)", through))
            print(_line("  floor: bare echo through mosquitto", asyncio.run(broker_echo_rtt(mosquitto_port))))
            ratios.append("mosquitto %.2fx" % (statistics.median(through) / statistics.median(ws)))
        finally:
            proc.terminate()
            proc.wait()
    print("MQTT / WebSocket, median: %s (target <= 1.5; each broker's floor, a bare echo through\n"
          "it with no device, is what its relay alone costs)" % ", ".join(ratios))
    return 0


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(prog="python -m tools.bench.transport", description=__doc__.split("\n")[0]).parse_args()
    sys.exit(main())
