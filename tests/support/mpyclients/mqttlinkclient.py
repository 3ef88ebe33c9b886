"""Runs lib/xiaozhi/mqttlink.py's MqttLink with a real umcp.McpServer under MicroPython,
through a broker, against the scripted backend of tests/session/test_xiaozhi_mqtt_link.py:
  micropython mqttlinkclient.py BROKER_PORT
Stops when the backend sends a system command, then prints what it saw as JSON.
"""
import asyncio
import json
import sys

from umcp import STRING, McpServer, Property, PropertyList
from xiaozhi.mqttlink import MqttLink


async def main(port):
    server = McpServer(name="umcp-mpy", version="1.0")
    server.add_tool("self.echo", "Echo the text back", PropertyList([Property("text", STRING)]),
                    lambda args: "echo: " + args["text"])
    seen = {"system": [], "udp_open": False}
    link = None

    def on_system(message):
        seen["system"].append(message["command"])
        seen["udp_open"] = link.udp is not None
        asyncio.create_task(link.stop())

    mqtt = {"endpoint": "127.0.0.1:%d" % port, "client_id": "GID_mpy@@@11_22@@@uuid",
            "username": "u", "password": "p", "publish_topic": "device-server",
            "subscribe_topic": "devices/p2p/aa_bb"}
    link = MqttLink(server, mqtt, "11:22", "uuid", on_system=on_system, hello_timeout=5,
                    backoff_min=0.05, backoff_max=0.3)
    await link.run()
    seen["attempts"] = link.attempts
    seen["hellos"] = link.hellos
    print(json.dumps(seen))


asyncio.run(main(int(sys.argv[1])))
