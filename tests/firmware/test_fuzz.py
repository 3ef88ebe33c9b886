"""The firmware under hostile input (tools/sim/hostile.py), through its real WebSocket link, on
CPython and under the MicroPython unix port: every request whose id can be read is answered
with that id, exactly as sent (even when its text is cut short, invalid or nested too deep),
every other unreadable MCP message with a null-id error, a ping within a second after every
window, the link never drops, and (MicroPython) the heap comes back to where it was.

make soak runs the same with UMCP_SOAK_MESSAGES (100,000) and prints the figures; make bench
runs the fuzzer on the measuring form (tools/bench/firmware.py)."""

import os

import pytest

from tests.support.firmwareharness import device_session, run
from tools.sim.hostile import drive

MESSAGES = int(os.environ.get("UMCP_SOAK_MESSAGES", "0")) or None


async def heap(device, readings=3):
    """heap_used after a collection (MicroPython), or None (CPython reports none): the
    least of a few readings, as what is in flight at the moment of one (a reply on its way,
    a buffer between two connections) is not what stays."""
    values = [(await device.call_json("self.get_system_info")).get("heap_used") for _ in range(readings)]
    return None if values[0] is None else min(values)


@pytest.mark.parametrize("runtime, messages, heapsize", [
    ("cpython", 2000, None),
    ("micropython", 1000, "512K"),
])
def test_hostile_messages_are_answered_and_the_link_holds(tmp_path, runtime, messages, heapsize):
    count = MESSAGES or messages
    micropython = runtime == "micropython"
    options = {"heapsize": heapsize} if micropython else {}

    async def main():
        async with device_session(tmp_path, micropython=micropython, **options) as (backend, sim, device):
            # A first round fills what is bounded but grows at first (the log ring of
            # device://log, the settings the calls change): the baseline is after it.
            first = await drive(device.ws, device.session_id, 200, seed=1)
            assert first.problems == [], first.problems
            before = await heap(device)
            report = await drive(device.ws, device.session_id, count, seed=20261123)
            after = await heap(device)
            closes = list(backend.close_codes)
            await device.request("ping")
        return report, before, after, closes

    report, before, after, closes = run(main(), timeout=60 + count // 20)
    print("%s: %s; heap in use %s -> %s" % (runtime, report.summary(), before, after))
    assert report.problems == [] and report.bad == [], (report.problems, report.bad[:3])
    assert closes == []  # no connection ended: the device never dropped the link
    assert report.sent == count and report.requests > count // 3 and report.expected_null > count // 50
    assert report.answered == report.requests and report.out_of_memory == 0
    if micropython:
        assert after - before <= 2048, (before, after)



CALLS = int(os.environ.get("UMCP_SOAK_CALLS", "0")) or None


@pytest.mark.parametrize("runtime, calls, heapsize", [
    ("cpython", 300, None),
    ("micropython", 300, "512K"),
])
def test_many_calls_leave_the_heap_where_it_was(tmp_path, runtime, calls, heapsize):
    count = CALLS or calls
    micropython = runtime == "micropython"
    options = {"heapsize": heapsize} if micropython else {}

    async def main():
        async with device_session(tmp_path, micropython=micropython, **options) as (backend, sim, device):
            await device.initialize()
            for volume in (10, 20):  # settle what the first calls allocate once (settings, ...)
                await device.call_json("self.get_device_status")
                await device.call("self.audio_speaker.set_volume", {"volume": volume})
            before = await heap(device)
            for n in range(count):
                if n % 2:
                    status = await device.call_json("self.get_device_status")
                    assert status["audio_speaker"]["volume"] == (n - 1) % 101
                else:
                    result = await device.call("self.audio_speaker.set_volume", {"volume": n % 101})
                    assert result["content"][0]["text"] == "true"
            after = await heap(device)
        return before, after

    before, after = run(main(), timeout=60 + count // 10)
    print("%s: %d calls; heap in use %s -> %s" % (runtime, count, before, after))
    if micropython:
        assert after - before <= 1024, (before, after)
