"""The fleet of tools.bench.fleet: the child process that runs every simulated device in
one asyncio loop (python -m tools.bench.fleet --child OTA_URL --devices N).

Every device checks in at the backend's OTA endpoint over HTTP (which issues its MQTT
credentials, or the WebSocket URL and token), then connects with them: umcp's McpServer
with tools declared as the firmware declares them, behind the device's own link (MqttLink
on lib/unet/mqtt.py, or XiaozhiLink). Before the fleet, the floor: as many bare clients
that only connect (MQTT: and subscribe; WebSocket: the upgrade). One JSON line on stdout
reports when each device started and the floor; a line on stdin stops the fleet.
"""

import asyncio
import json
import resource
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from .. import devicelib  # noqa: F401 (lib/ on sys.path: the devices' core, links and MQTT client)

PAGE_LIMIT = 7000  # under the xiaozhi gateway's 8192-byte packet limit
MAC_BASE = 0x02AA00000000


def mac(index):
    text = "%012x" % (MAC_BASE + index)
    return ":".join(text[i:i + 2] for i in range(0, 12, 2))


def raise_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def device_server(max_payload):
    """umcp's McpServer with tools declared as the firmware declares its common ones."""
    from umcp import INTEGER, STRING, McpServer, Property, PropertyList

    server = McpServer(name="umcp", version="0.1.0", page_limit=max_payload)
    state = {"volume": 50, "brightness": 80, "theme": "light"}
    server.add_tool("self.get_device_status", "Current volume, brightness, theme and network.",
                    PropertyList([]), lambda args: dict(state), read_only=True)
    server.add_tool("self.audio_speaker.set_volume", "Set the speaker volume (0-100).",
                    PropertyList([Property("volume", INTEGER, minimum=0, maximum=100)]),
                    lambda args: state.update(volume=args["volume"]) or True, idempotent=True)
    server.add_tool("self.screen.set_brightness", "Set the screen brightness (0-100).",
                    PropertyList([Property("brightness", INTEGER, minimum=0, maximum=100)]),
                    lambda args: state.update(brightness=args["brightness"]) or True, idempotent=True)
    server.add_tool("self.screen.set_theme", "Light or dark theme.",
                    PropertyList([Property("theme", STRING)]),
                    lambda args: state.update(theme=args["theme"]) or True, idempotent=True)
    return server


def ota_checks(ota_url, count, workers=8):
    """The OTA check of every device (HTTP, as the device does it): their mqtt blocks."""
    def check(index):
        body = json.dumps({"application": {"version": "0.1.0"}, "board": {"type": "host"},
                           "mac_address": mac(index)}).encode()
        headers = {"Device-Id": mac(index), "Client-Id": "00000000-0000-4000-8000-%012x" % index,
                   "Content-Type": "application/json"}
        with urllib.request.urlopen(urllib.request.Request(ota_url, body, headers), timeout=30) as response:
            return dict(json.load(response), device_id=mac(index), index=index)

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(check, range(count)))


async def until_accepted(mqtt, attempts=50):
    """mosquitto learns the credentials the backend issues at a reload (SIGHUP, a moment
    later): wait until a device's are taken, so that no figure measures the reload."""
    from unet.mqtt import MqttClient, MqttRefused

    host, port = mqtt["endpoint"].rsplit(":", 1)
    client = MqttClient(mqtt["client_id"] + "@probe", mqtt["username"], mqtt["password"])
    for attempt in range(attempts):
        try:
            await client.connect(host, int(port))
            break
        except MqttRefused:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.1)
    await client.close()


async def bare_connect_floor(credentials, limit):
    """N bare clients connect and subscribe (the broker's share of getting ready)."""
    from unet.mqtt import MqttClient

    async def one(mqtt):
        host, port = mqtt["endpoint"].rsplit(":", 1)
        client = MqttClient(mqtt["client_id"] + "@floor", mqtt["username"], mqtt["password"], keepalive=240)
        start = time.monotonic()
        async with limit:
            await client.connect(host, int(port))
            await client.subscribe(mqtt["subscribe_topic"])
        return client, time.monotonic() - start

    results = await asyncio.gather(*(one(m) for m in credentials), return_exceptions=True)
    times = [r[1] for r in results if not isinstance(r, BaseException)]
    for result in results:
        if not isinstance(result, BaseException):
            await result[0].close()
    return times, len(results) - len(times)


async def bare_websocket_floor(answers, limit):
    """N bare WebSocket upgrades to the backend (its share of a device connecting)."""
    from websockets.asyncio.client import connect

    async def one(answer):
        start = time.monotonic()
        async with limit:
            headers = {"Authorization": "Bearer " + answer["websocket"]["token"],
                       "Device-Id": "floor-%d" % answer["index"]}
            connection = await connect(answer["websocket"]["url"], additional_headers=headers)
        elapsed = time.monotonic() - start
        await connection.close()
        return elapsed

    results = await asyncio.gather(*(one(a) for a in answers), return_exceptions=True)
    times = [r for r in results if isinstance(r, float)]
    return times, len(results) - len(times)


async def run_link_fleet(answers, ota_s, out, kind):
    """The device's own link per device (XiaozhiLink, or MqttLink), all in one loop."""
    from xiaozhi.link import XiaozhiLink
    from xiaozhi.mqttlink import MqttLink

    limit = asyncio.Semaphore(200)  # connects in flight, for the floor and the fleet alike
    if kind == "websocket":
        floor, floor_failed = await bare_websocket_floor(answers, limit)
    else:
        await until_accepted(answers[-1]["mqtt"])
        # mosquitto: a floor client's id differs from its device's (it would take over the
        # device's session); the ACL lets it subscribe to the device's down topic.
        floor, floor_failed = await bare_connect_floor([a["mqtt"] for a in answers], limit)
    starts, links, tasks = {}, [], []
    for answer in answers:
        server = device_server(PAGE_LIMIT)
        client_id = "00000000-0000-4000-8000-%012x" % answer["index"]
        if kind == "websocket":
            link = XiaozhiLink(server, answer["websocket"]["url"], answer["websocket"]["token"] or "none",
                               answer["device_id"], client_id, backoff_min=0.5, backoff_max=5)
        else:
            link = MqttLink(server, answer["mqtt"], answer["device_id"], client_id, backoff_min=0.5, backoff_max=5)
        link.bench_name = answer["mqtt"]["username"] if kind == "mqtt" else answer["device_id"]
        links.append(link)

    async def start(link):
        async with limit:  # the same number of connections in flight as the floor's
            starts[link.bench_name] = time.monotonic()
            runner = asyncio.get_running_loop().create_task(link.run())
            tasks.append(runner)
            await asyncio.wait([runner, asyncio.ensure_future(link.connected.wait())],
                               return_when=asyncio.FIRST_COMPLETED)

    await asyncio.gather(*(start(link) for link in links))
    print(json.dumps({"starts": starts, "failed": [], "failed_count": 0, "ota_s": ota_s,
                      "floor_connect": floor, "floor_failed": floor_failed,
                      "session": type(links[0]).__name__ if links else "-"}),
          file=out, flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await asyncio.gather(*(link.stop() for link in links), return_exceptions=True)
    for task in tasks:
        task.cancel()


async def run_fleet(ota_url, count, out):
    raise_file_limit()
    started = time.monotonic()
    answers = await asyncio.to_thread(ota_checks, ota_url, count)
    ota_s = time.monotonic() - started
    await run_link_fleet(answers, ota_s, out, "websocket" if "websocket" in answers[0] else "mqtt")
