"""Runs lib/xiaozhi/link.py's XiaozhiLink with a real umcp.McpServer under MicroPython against
the backend of tests/session/test_xiaozhi_link.py:
micropython xiaozhiclient.py ws://127.0.0.1:PORT/...
Stops when the backend sends a system command, then prints what it saw as JSON.
"""
import asyncio
import json
import sys

import xiaozhi.link
from umcp import STRING, McpServer, Property, PropertyList


async def main(url):
    server = McpServer(name="umcp-mpy", version="1.0")
    server.add_tool("self.echo", "Echo the text back", PropertyList([Property("text", STRING)]),
                    lambda args: "echo: " + args["text"])
    seen = {"alerts": [], "system": []}
    link = None

    def on_system(message):
        seen["system"].append(message["command"])
        asyncio.create_task(link.stop())

    link = xiaozhi.link.XiaozhiLink(server, url, "mpy-token", "11:22:33:44:55:66", "client-1",
                               on_system=on_system,
                               on_alert=lambda message: seen["alerts"].append(message["message"]),
                               hello_timeout=5, idle_timeout=0.6, ping_interval=0.1,
                               backoff_min=0.02, backoff_max=0.2)
    await link.run()
    seen["attempts"] = link.attempts
    seen["session_id"] = link.session_id
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
