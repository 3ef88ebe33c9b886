"""make bench's floor for a tools/call over HTTP (tools/bench/httpcall.py): the smallest
JSON-RPC handler over HTTP a board could run, beside which the board's own MCP endpoint
is timed. Run in the board's folder as the firmware is (the simulated hardware on its
module path):
  minhttp.py PORT
It reads the request line and the headers (Content-Length and Connection only), then
Content-Length bytes, json.loads them, calls the tool the request names (the same
semantics as board (a)'s relay and DHT22 tools: the pin driven, the sensor read), and
writes json.dumps of the answer with a Content-Length; the connection stays for the next
request unless the client says close. No schema, no checks, no sessions, no logging.
Prints "listening" once it listens.
"""
import asyncio
import json
import sys

import dht
import hwsim
from machine import Pin

with open("config.json") as f:  # the parts' simulated chips, as scripts/partsboot.py solders them
    hwsim.solder(json.load(f).get("parts"))

relay = Pin(2, Pin.OUT)
sensor = dht.DHT22(Pin(27))


def turn_on(args):
    relay.value(1)
    return True


def turn_off(args):
    relay.value(0)
    return True


def read(args):
    sensor.measure()
    return {"temperature": sensor.temperature(), "humidity": sensor.humidity()}


TOOLS = {"self_lamp_turn_on": turn_on, "self_lamp_turn_off": turn_off, "self_room_read": read}


async def serve(reader, writer):
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            length = 0
            close = False
            while True:
                header = await reader.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection":
                    close = b"close" in value.lower()
            message = json.loads(await reader.readexactly(length))
            params = message["params"]
            value = TOOLS[params["name"]](params.get("arguments") or {})
            text = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "content": [{"type": "text", "text": json.dumps(value)}], "isError": False}})
            writer.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(text), text)).encode())
            await writer.drain()
            if close:
                break
    except Exception as e:
        print("failed:", repr(e))
    finally:
        writer.close()
        await writer.wait_closed()


async def main(port):
    await asyncio.start_server(serve, "127.0.0.1", port)
    print("listening")
    while True:
        await asyncio.sleep(60)


asyncio.run(main(int(sys.argv[1])))
