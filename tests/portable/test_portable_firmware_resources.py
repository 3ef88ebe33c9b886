# The firmware's resources without a network: the log ring, the log sink hook of
# umcp.compat, and the last photo. Runs under pytest and inside MicroPython.
import asyncio
import json

from umcp import McpServer
from umcp.compat import OnDemand, add_log_sink, get_logger, join_pieces, remove_log_sink
from umcpfw.commontools import CommonTools
from umcpfw.commontools import LogRing
from umcpfw.resources import PHOTO_URI
from umcpfw import vision


def test_log_ring_keeps_the_last_lines_bounded():
    ring = LogRing(lines=4, line_chars=40)
    assert ring.text() == "" and ring.lines() == []
    for number in range(10):
        ring.add("INFO", "app", "line %d" % number)
    lines = ring.lines()
    assert len(lines) == 4 and lines[0].endswith("line 6") and lines[-1].endswith("line 9")
    ring.add("ERROR", "x", "y" * 500 + "\nmore")
    last = ring.lines()[-1]
    assert len(last) == 40 and last.endswith("...") and " ERROR x: yyy" in last and "\n" not in last
    assert ring.text().count("\n") == 4


def test_log_sink_gets_warnings_and_errors():
    seen = []

    def sink(level, logger, message):
        seen.append((level, logger, message))

    add_log_sink(sink)
    try:
        log = get_logger("ringtest")
        log.warning("low %s", "battery")
        log.error("broken")
    finally:
        remove_log_sink(sink)
    log.error("after removal")
    assert ("WARNING", "ringtest", "low battery") in seen and ("ERROR", "ringtest", "broken") in seen
    assert len([entry for entry in seen if entry[1] == "ringtest"]) == 2


class _Speaker:
    volume = 12


class _Board:
    name = "fake"
    camera = True
    speaker = _Speaker()
    backlight = display = wlan = None

    def status(self):
        return {"board": self.name}


async def test_photo_and_status_resources():
    server = McpServer()
    frames = []

    async def send(pieces):
        frames.append(json.loads(join_pieces(pieces)))

    server.set_sender(send)
    tools = CommonTools(server, _Board(), None, "9.9.9", None, "24:0a:c4:12:34:56", "client-1")
    tools.log_ring = LogRing()
    server.add_resources_later(OnDemand("umcpfw.resources", "register", tools))  # as boot does

    async def read(uri):
        await server.handle({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}})
        return frames[-1]

    assert (await read(PHOTO_URI))["error"]["code"] == -32002
    assert vision.keep_photo(tools, b"\xff\xd8jpeg\xff\xd9") is True
    assert (await read(PHOTO_URI))["result"]["contents"][0]["blob"] == "/9hqcGVn/9k="
    vision.keep_photo(tools, b"\xff\xd8two\xff\xd9")  # only the last one is kept
    assert tools.photo == b"\xff\xd8two\xff\xd9"
    status = (await read("device://status"))["result"]["contents"][0]
    assert json.loads(status["text"]) == {"network": {"type": "host"}, "audio_speaker": {"volume": 12},
                                          "board": "fake"}
    system = json.loads((await read("device://system"))["result"]["contents"][0]["text"])
    assert system["board"] == "fake" and system["device_id"] == "24:0a:c4:12:34:56"
    await asyncio.sleep(0)
