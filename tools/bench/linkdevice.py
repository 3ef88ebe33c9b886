"""The device side of make bench's link table (tools/bench/link.py): an McpServer with one
small tool behind the firmware's own XiaozhiLink and, given an endpoint URL, an MCP
endpoint link (EndpointLink) beside it, both connected until killed; given HTTP_PORT, the
same server also at http://127.0.0.1:HTTP_PORT/mcp (mcplink.http, the board's own HTTP
endpoint, token "bench-token"). Runs under CPython and MicroPython with lib/ on the
module path:
  linkdevice.py ws://127.0.0.1:PORT/xiaozhi/v1/ [ws://127.0.0.1:PORT/mcp_endpoint/mcp/?token=T] [HTTP_PORT]
Prints one JSON line first: the interpreter and its word size.
"""
import asyncio
import json
import sys

from umcp import INTEGER, McpServer, Property
from xiaozhi.link import XiaozhiLink


def set_volume(args):
    return True


async def main(url, *more):
    endpoint = None
    http_port = 0
    for arg in more:  # an endpoint's URL, an HTTP port, or both
        if arg.isdigit():
            http_port = int(arg)
        else:
            endpoint = arg
    server = McpServer(name="bench", version="1")
    server.add_tool("self.audio_speaker.set_volume", "Set the volume of the audio speaker.",
                    [Property("volume", INTEGER, minimum=0, maximum=100)], set_volume)
    links = [XiaozhiLink(server, url, "bench-token", "aa:bb:cc:dd:ee:ff", "bench-client",
                         ping_interval=0, idle_timeout=600, backoff_min=0.05, backoff_max=0.2)]
    if endpoint:
        from mcplink.endpoint import EndpointLink

        links.append(EndpointLink(server, endpoint, "aa:bb:cc:dd:ee:ff", ping_interval=0,
                                  idle_timeout=600, backoff_min=0.05, backoff_max=0.2))
    if http_port:
        from mcplink.http import McpHttp

        http = McpHttp(server, "bench-token", http_port, "127.0.0.1")
        await http.httpd.start("127.0.0.1", http_port)
    impl = sys.implementation
    print(json.dumps({"interpreter": "%s %s" % (impl.name, ".".join(str(n) for n in impl.version[:3])),
                      "bits": 64 if sys.maxsize > 0xFFFFFFFF else 32}))
    await asyncio.gather(*[link.run() for link in links])


asyncio.run(main(*sys.argv[1:]))
