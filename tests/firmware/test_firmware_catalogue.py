"""The tool catalogue on a booting board (umcpfw.boot): one written for this config serves
the tools; one an earlier deploy wrote for other parts is named at start and not used (the
tools are built at run time), and the board serves the same tools either way."""

import pytest

from tests.support.firmwareharness import Backend, Sim, run

pytestmark = pytest.mark.timeout(90)

PARTS = [{"type": "relay", "name": "lamp", "pin": 2}, {"type": "servo", "name": "flap", "pin": 21}]
OTHER_PARTS = [{"type": "relay", "name": "pump", "pin": 2}]


def _log(sim):
    with open(sim.log_path, errors="replace") as f:
        return f.read()


async def _session(tmp_path, micropython, catalogue):
    backend = await Backend().start()
    sim = Sim(backend.url, tmp_path, micropython=micropython, extra_config={"parts": PARTS},
              catalogue=catalogue)
    if catalogue == "earlier":  # an earlier deploy's, for other parts
        sim.catalogue = dict(sim.config, parts=OTHER_PARTS)
    sim.start()
    try:
        device = await backend.next_device()
        await device.initialize()
        tools, _ = await device.list_tools(with_user_tools=True)
        called = await device.call("self.lamp.turn_on")
        refused = await device.request("tools/call", {"name": "self.flap.set_angle",
                                                      "arguments": {"angle": 500}})
    finally:
        stopped = sim.stop()
        await backend.stop()
    assert stopped == 0
    return tools, called, refused, _log(sim)


@pytest.mark.parametrize("micropython", [pytest.param(False, id="cpython"),
                                         pytest.param("mpy", id="micropython-mpy")])
def test_a_catalogue_for_other_parts_is_named_and_the_tools_are_the_same(tmp_path, micropython):
    stale = run(_session(tmp_path / "stale", micropython, "earlier"))
    fresh = run(_session(tmp_path / "fresh", micropython, True))
    assert "tools.cat was written for other parts: tools built at run time" in stale[3]
    assert "tools.cat was written for" not in fresh[3]
    names = [tool["name"] for tool in fresh[0]]
    assert "self.lamp.turn_on" in names and "self.flap.set_angle" in names and "self.pump.turn_on" not in names
    assert fresh[0] == stale[0]  # every tool, as parsed (the catalogue's JSON is CPython's)
    assert fresh[1]["isError"] is False and stale[1] == fresh[1]
    assert "error" in fresh[2] and stale[2] == fresh[2]  # the servo's range, from the table


def test_a_board_without_a_catalogue_says_so_and_builds_its_tools(tmp_path):
    tools, called, _, log = run(_session(tmp_path, False, False))
    assert "no tools.cat: tools built at run time" in log
    assert "self.flap.set_angle" in [tool["name"] for tool in tools]
    assert called["isError"] is False
