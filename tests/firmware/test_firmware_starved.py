"""A configuration too big for the board's heap: a link that runs out of heap at every
connection says so once, in words a maker can act on, and keeps trying (a board without
PSRAM with too many parts or a status screen, docs/boards.md). The shortage is injected
by a maker's module that makes every connection raise MemoryError, as a full heap does;
the rest is the firmware as it runs, on both runtimes. And a heap really full for a while
(MicroPython): the board connects by itself once it has room again."""

import asyncio
import time

import pytest

from tests.support.endpointharness import EndpointServer
from tests.support.firmwareharness import RUNTIMES, Backend, Sim, run

pytestmark = pytest.mark.timeout(60)

# Every connection of the link (`module`.`name`: the function it connects with) finds the
# heap full.
SHORT_OF_HEAP_APP = '''import %s


async def connect(*args):
    raise MemoryError("memory allocation failed, allocating 306 bytes")


def register(server, board):
    %s.%s = connect
'''
SAID = "out of memory while connecting, 3 times in a row"
# (The xiaozhi link calls unet.ws.connect through the module, imported by its first link.)
LINKS = {"xiaozhi": ("unet.ws", "connect"), "endpoint": ("mcplink.endpoint", "ws_connect")}


@pytest.mark.parametrize("link", sorted(LINKS))
@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_link_short_of_heap_at_each_connection_says_so_once_and_keeps_trying(tmp_path, micropython, link):
    module, name = LINKS[link]
    app = tmp_path / "app.py"
    app.write_text(SHORT_OF_HEAP_APP % (module, module, name))

    async def scenario():
        backend = await (EndpointServer() if link == "endpoint" else Backend()).start()
        where = {"endpoints": [backend.url()]} if link == "endpoint" else {"url": backend.url}
        sim = Sim(where.pop("url", None), tmp_path / "state", micropython=micropython, app=app,
                  extra_config={"backoff_min": 0.05, "backoff_max": 0.1}, **where).start()
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with open(sim.log_path, errors="replace") as log:
                    text = log.read()
                if text.count("link lost: MemoryError") >= 8:
                    break
                await asyncio.sleep(0.2)
            assert sim.running  # the board runs on
        finally:
            sim.stop()
            await backend.stop()
        return text

    text = run(scenario())
    assert text.count("link lost: MemoryError") >= 8, text[-3000:]
    said = [line for line in text.splitlines() if SAID in line]
    assert len(said) == 1, said  # once a streak, not at each attempt
    assert "ERROR" in said[0] and "PSRAM" in said[0] and "docs/boards.md" in said[0]
    if micropython:
        assert "bytes of heap free now" in said[0]  # the heap's figures, where they exist


# A heap really full (MicroPython's: CPython has no heap to fill): a maker's task takes all
# but a little of it, so that every connection runs out while the rest of the board has
# room to log and retry, then gives it back after HELD_S.
HEAP_HOG_APP = '''import asyncio
import gc

HELD_S = %d
LEFT = %d


async def hog():
    held = []
    gc.collect()
    try:
        while gc.mem_free() > LEFT:
            held.append(bytearray(512))
    except MemoryError:  # the free room is in holes smaller than that: full enough
        pass
    print("hog: holding the heap, %%d bytes free" %% gc.mem_free())
    await asyncio.sleep(HELD_S)
    held = None
    gc.collect()
    print("hog: heap given back, %%d bytes free" %% gc.mem_free())


def register(server, board):
    asyncio.create_task(hog())
'''


def test_a_board_short_of_heap_connects_by_itself_once_the_heap_is_freed(tmp_path):
    """Issue 44's bad input: no wedge, and no restart needed, once the heap has room again."""
    app = tmp_path / "app.py"
    app.write_text(HEAP_HOG_APP % (6, 3072))

    async def scenario():
        backend = await Backend().start()
        sim = Sim(backend.url, tmp_path / "state", micropython=True, app=app, heapsize="256K",
                  extra_config={"backoff_min": 0.2, "backoff_max": 0.5}).start()
        try:
            device = await backend.next_device(timeout=40)  # after the hog gave the heap back
            status = await device.call("self.get_device_status", {})
            assert not status.get("isError"), status
            assert sim.running
        finally:
            sim.stop()
            await backend.stop()
        with open(sim.log_path, errors="replace") as log:
            return log.read()

    text = run(scenario())
    held, given = text.find("hog: holding the heap"), text.find("hog: heap given back")
    assert 0 <= held < given, text[-3000:]
    failed = text[held:given]
    # It kept trying meanwhile (the link's build, its frame buffer, is where the heap runs out).
    assert failed.count("MemoryError") >= 3, text[-3000:]
    assert failed.count(SAID) == 1  # and said so once
