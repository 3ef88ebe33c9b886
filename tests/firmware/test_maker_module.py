"""The maker's own module (app.py on the board, tools.sim --app): its register(server, board)
adds tools beside the firmware's, on the parts config.json declares; an error in it, at
import or in register(), is logged with its traceback, what it added is taken away, and the
firmware runs without it. On CPython and under the MicroPython unix port."""

import os

import pytest

from tests.support.firmwareharness import ROOT, RUNTIMES, device_session, run

pytestmark = pytest.mark.timeout(90)

# The README's example, as a maker writes it (its "Add a tool" section's code block).
with open(os.path.join(ROOT, "README.md")) as _f:
    _readme = _f.read()
WATERING = _readme.split("## Add a tool", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
assert "def register(server, board):" in WATERING
PUMP = {"board": "generic", "parts": [{"type": "relay", "name": "pump", "pin": 2}]}
ADDS_THEN_FAILS = '''from umcp import PropertyList

def register(server, board):
    server.add_tool("self.half.done", "Added before the failure.", PropertyList([]), lambda a: 1)
    server.add_resource("app://half", "half", lambda: "x")
    raise ValueError("the maker's own bug")
'''


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sim_log(sim):
    with open(sim.log_path, errors="replace") as f:
        return f.read()


async def tool_names(device):
    await device.initialize()
    tools, _ = await device.list_tools(with_user_tools=True)
    return {tool["name"] for tool in tools}


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_readme_example_adds_a_tool_on_a_part(tmp_path, micropython):
    app = write(tmp_path / "maker", "watering.py", WATERING)

    async def scenario():
        async with device_session(tmp_path / "state", micropython, extra_config=PUMP, app=app) as (
                backend, sim, device):
            names = await tool_names(device)
            assert {"self.plant.water", "self.pump.turn_on"} <= names
            result = await device.call("self.plant.water", {"seconds": 1})
            assert result == {"content": [{"type": "text", "text": "watered for 1 s"}], "isError": False}
            assert await device.call_json("self.pump.get_state") == {"power": False}
        return sim

    sim = run(scenario())
    assert sim.records()[-1]["hwsim"]["pins"]["2"] == [0, 1, 0]
    assert "app.py added its tools" in sim_log(sim) or micropython  # info lines: CPython only


@pytest.mark.parametrize("micropython", RUNTIMES)
@pytest.mark.parametrize("files, said", [
    ({"app.py": "import no_such_module\n"}, "no_such_module"),
    ({"app.py": "def register(server, board)\n    pass\n"}, "SyntaxError"),
    ({"app.py": "VALUE = 1 / 0\n"}, "ZeroDivisionError"),
    ({"app.py": "def setup(server):\n    pass\n"}, "app.py has no register(server, board)"),
    ({"app.py": ADDS_THEN_FAILS}, "the maker's own bug"),
    ({"app/__init__.py": "from app.broken import register\n", "app/broken.py": "register = None\n"},
     "app.py has no register(server, board)"),
])
def test_a_broken_module_is_logged_and_the_firmware_runs_without_it(tmp_path, micropython, files, said):
    for name, text in files.items():
        app = write(tmp_path / "maker", name, text)
    if "/" in next(iter(files)):
        app = app.parent  # a package: its folder

    async def scenario():
        async with device_session(tmp_path / "state", micropython, app=app) as (backend, sim, device):
            names = await tool_names(device)
            assert "self.get_device_status" in names and "self.half.done" not in names
            listed = await device.request("resources/list")
            assert "app://half" not in {r["uri"] for r in listed["result"]["resources"]}
            assert (await device.call_json("self.get_device_status"))["board"] == "host"
        return sim

    log = sim_log(run(scenario()))
    assert said in log
    if "register(server, board)" not in said:
        assert "Traceback" in log and "app" in log.split("Traceback", 1)[1]
        assert "running without it" in log
