"""Runs lib/mcplink/endpoint.py's EndpointLink, two of them over one real umcp.McpServer,
under MicroPython against the endpoint servers of tests/session/test_mcplink_endpoint.py:
micropython endpointclient.py ws://127.0.0.1:PORT/mcp_endpoint/mcp/?token=A ws://...B
The first link has a 4 KB message limit. Stops when a tool call asks it to (self.stop),
then prints what it saw as JSON (connection attempts, cancelled calls, the log).
"""
import asyncio
import json
import sys

from mcplink.endpoint import EndpointLink
from umcp import STRING, McpServer, Property, PropertyList
from umcp.compat import add_log_sink


async def main(urls):
    said = []
    add_log_sink(lambda level, logger, message: said.append(message))
    server = McpServer(name="umcp-test", version="9.9", page_limit=700)
    server.add_tool("self.echo", "Echo the text back", PropertyList([Property("text", STRING)]),
                    lambda args: "echo: " + args["text"])
    server.add_user_only_tool("self.reboot", "Reboot the system", PropertyList([]), lambda args: True)
    for i in range(12):
        server.add_tool("self.tool_%02d" % i, "Tool number %d " % i + "\u4e2d" * 20,
                        PropertyList([]), lambda args: True)
    seen = {"cancelled": 0}

    async def slow(args):
        await server.progress(1)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen["cancelled"] += 1
            raise

    server.add_tool("self.slow", "Takes its time", PropertyList([]), slow)
    links = []

    async def stop_all():
        await asyncio.sleep(0.05)  # the answer leaves first
        for link in links:
            await link.stop()

    def stop(args):
        asyncio.create_task(stop_all())
        return "stopping"

    server.add_tool("self.stop", "Stop the links", PropertyList([]), stop)
    for index, url in enumerate(urls):
        links.append(EndpointLink(server, url, device_id="11:22:33:44:55:66",
                                  max_message=4096 if index == 0 else 32768, connect_timeout=5,
                                  ping_interval=0.1, idle_timeout=0.6, backoff_min=0.02,
                                  backoff_max=0.2))
    await asyncio.gather(*[link.run() for link in links])
    log = "\n".join(said)
    seen["attempts"] = [link.attempts for link in links]
    seen["dead"] = log.count("nothing received for 600 ms")
    seen["log"] = log
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1:]))
