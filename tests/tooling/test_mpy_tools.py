"""The MicroPython harness can fail: proof that broken device code or a failing
device test makes compile_all, run_unix and run_wasm.mjs exit non-zero with the
right counts, that async tests really run inside MicroPython, and that the
bench measures what it claims (a full tools/list page; the staged firmware's heap)."""

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tools.bench import firmware as bench_firmware
from tools.bench import link as bench_link
from tools.sim.demo import CALLS
from tools.mpy import ROOT, micropython_env

PYTHON = sys.executable
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")

pytestmark = pytest.mark.timeout(60)

# Two sync tests (one fails), three async ones (one fails after awaiting, so it only
# fails if its coroutine really runs); the background task, sleep and wait_for are
# what device tests use and what the WebAssembly build only allows inside a task.
MIXED = textwrap.dedent("""
    import asyncio

    def test_sync_passes():
        assert [1, 2] == [1, 2]

    def test_sync_fails():
        assert 1 == 2, "sync failure"

    async def _later(value):
        await asyncio.sleep(0.01)
        return value

    async def test_async_task_sleep_wait_for():
        done = asyncio.Event()

        async def background():
            await asyncio.sleep(0.01)
            done.set()

        asyncio.create_task(background())
        await asyncio.wait_for(done.wait(), 2)
        assert await asyncio.wait_for(_later(7), 2) == 7
        try:
            await asyncio.wait_for(_later(8), 0.001)
        except asyncio.TimeoutError:
            return
        raise AssertionError("wait_for did not time out")

    async def test_async_fails_after_await():
        assert await _later(1) == 2, "async failure"

    async def test_async_passes():
        assert await _later("x") == "x"
""")


def _write(folder, files):
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _run_unix(test_dir):
    return subprocess.run([PYTHON, "-m", "tools.mpy.run_unix", "--micropython", MICROPYTHON,
                           "--tests", str(test_dir)], cwd=ROOT, capture_output=True, text=True)


def _run_wasm(test_dir):
    return subprocess.run(["node", os.path.join(ROOT, "tools", "mpy", "run_wasm.mjs"),
                           "--tests", str(test_dir)], cwd=ROOT, capture_output=True, text=True)


RUNNERS = [pytest.param(_run_unix, id="unix"), pytest.param(_run_wasm, id="wasm")]


def _last_line(proc):
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_counts_failures_and_exits_non_zero(run, tmp_path):
    _write(tmp_path, {"test_mixed.py": MIXED, "helper_not_a_test.py": "def test_never(): raise ValueError\n"})
    proc = run(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last_line(proc) == "3 passed, 2 failed"
    assert "FAIL test_mixed.py::test_sync_fails" in proc.stdout
    assert "AssertionError: sync failure" in proc.stdout
    assert "FAIL test_mixed.py::test_async_fails_after_await" in proc.stdout
    assert "AssertionError: async failure" in proc.stdout
    assert "micropython 1." in proc.stdout  # it ran inside MicroPython


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_fails_modules_that_do_not_import(run, tmp_path):
    _write(tmp_path, {
        "test_fine.py": "def test_fine():\n    pass\n",
        "test_missing_import.py": "import no_such_module\n\ndef test_x():\n    pass\n",
        "test_bad_syntax.py": "def test_x(a, /):\n    pass\n",
    })
    proc = run(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last_line(proc) == "1 passed, 2 failed"
    assert "FAIL test_missing_import.py (import)" in proc.stdout
    assert "FAIL test_bad_syntax.py (import)" in proc.stdout


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_passes_a_passing_suite(run, tmp_path):
    _write(tmp_path, {"test_ok.py": "import asyncio\n\nasync def test_ok():\n    await asyncio.sleep(0)\n"})
    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _last_line(proc) == "1 passed, 0 failed"


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_fails_when_nothing_ran(run, tmp_path):
    proc = run(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last_line(proc) == "0 passed, 0 failed"


def _compile_all(*dirs):
    return subprocess.run([PYTHON, "-m", "tools.mpy.compile_all"] + [str(d) for d in dirs],
                          cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("source, line", [
    ("def f(a, /):\n    return a\n", 1),
    ("x = 1\nmatch x:\n    case 1:\n        pass\n", 2),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", 3),
], ids=["positional-only", "match", "except-star"])
def test_compile_all_rejects_syntax_micropython_lacks(source, line, tmp_path):
    compile(source, "cpython_accepts_it.py", "exec")
    _write(tmp_path, {"fine.py": "x = 1\n", "bad.py": source})
    proc = _compile_all(tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "FAIL %s line %d: SyntaxError" % (tmp_path / "bad.py", line) in proc.stdout
    assert "compiled 1 of 2 files, 1 failed" in proc.stdout


def test_compile_all_passes_valid_files_and_leaves_nothing_behind(tmp_path):
    (tmp_path / "pkg").mkdir()
    _write(tmp_path, {"a.py": "import micropython\n\n@micropython.native\ndef f(x):\n    return x\n",
                      "pkg/b.py": "async def g(x):\n    return {k: v for k, v in x.items()}\n"})
    proc = _compile_all(tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "compiled 2 files"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["a.py", "b.py"]


def test_compile_all_fails_when_it_finds_nothing(tmp_path):
    proc = _compile_all(tmp_path)
    assert proc.returncode == 1
    assert "no .py files" in proc.stdout


def test_bench_measures_a_full_page_inside_micropython():
    env = micropython_env([os.path.join(ROOT, "lib")])
    proc = subprocess.run([MICROPYTHON, os.path.join(ROOT, "tools", "bench", "core.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["interpreter"].startswith("micropython")
    # A full first page: within one tool's size of the limit, with more tools after it.
    assert figures["page_limit"] - 600 < figures["frame_bytes"] <= figures["page_limit"]
    assert figures["tools_on_page"] < figures["tools_registered"]
    # The entries go into the page as they are, each serialized only as the transport writes
    # it: building the page costs less than a bare json.dumps of the same page from
    # ready-made objects (the floor, in the same run), never the page's text.
    assert 0 < figures["list_heap"] < figures["floor_heap"]


def test_firmware_heap_bench_runs_the_staged_firmware(tmp_path):
    stage = bench_firmware.stage_firmware(str(tmp_path / "stage"))
    # What make deploy copies: compiled modules, main.py kept as source.
    assert os.path.isfile(os.path.join(stage, "lib", "umcp", "server.mpy"))
    assert not os.path.exists(os.path.join(stage, "lib", "umcp", "server.py"))
    heapsize = bench_firmware.HEAPSIZE
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, heapsize))
    assert figures["tools"] >= len(CALLS)  # onboarded: the tools/list it made CALLS from
    assert 0 < figures["connected"] < heapsize
    assert 0 < figures["after_calls"] < heapsize
    assert figures["calls"] == len(CALLS) + len(bench_firmware.MORE_CALLS)
    assert figures["reconnects"] == bench_firmware.RECONNECTS
    # A starved heap is a failed run, with the firmware's own account of why.
    with pytest.raises(bench_firmware.FirmwareFailed, match="MemoryError"):
        asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, 32 * 1024))


# The heap budget of the regression check below: the smallest heap with which the staged
# .mpy firmware completed make bench's full session on the venv's 64-bit unix port was
# 188 KB when this was set (bisected to 4 KB; a 32-bit build needs about 0.7 of that), plus
# modest headroom. A change that makes the session need more fails here, cheaply; raise
# the figure only with a reason (and the bench's new figures in the commit).
# 216 KB: the board's HTTP endpoint (mcplink.http's hooks in the app, umcp.names, output
# schemas) and the MCP endpoint links (unet.reconnect, Session.offered) together left the
# session at the edge of 212 KB (it passed or failed by fragmentation from run to run).
HEAP_BUDGET_64BIT = 216 * 1024


def test_firmware_full_session_fits_the_heap_budget(tmp_path):
    stage = bench_firmware.stage_firmware(str(tmp_path / "stage"))
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, HEAP_BUDGET_64BIT))
    assert figures["calls"] == len(CALLS) + len(bench_firmware.MORE_CALLS)
    assert figures["reconnects"] == bench_firmware.RECONNECTS


def test_link_bench_times_round_trips_on_both_interpreters():
    # Figures only (no timing asserted): each interpreter's device connected and answered
    # every ping, tools/call and WebSocket ping the bench sent.
    columns = []
    for title, command, env in bench_link.interpreters(MICROPYTHON):
        figures = asyncio.run(bench_link.measure(command, env, calls=5))
        for kind in ("ping", "call", "floor", "endpoint_call", "endpoint_floor"):
            assert 0 < figures[kind]["median_ms"] <= figures[kind]["max_ms"], (title, kind)
        columns.append((title, figures))
    assert [f["interpreter"].split()[0] for _, f in columns] == ["cpython", "micropython"]
    lines = bench_link.table(columns)
    assert "64-bit" in lines[1] and lines[-1].startswith("MicroPython / CPython")


def test_firmware_heap_bench_runs_the_sources_too():
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, None, bench_firmware.HEAPSIZE))
    # (The calls need not leave more on the heap than the connection did: the code of the
    # rare ones is dropped again after each.)
    assert 0 < figures["connected"] < bench_firmware.HEAPSIZE
    assert 0 < figures["after_calls"] < bench_firmware.HEAPSIZE


def test_firmware_heap_bench_serves_an_http_client_and_reads_the_heap_through_it():
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, None, bench_firmware.HEAPSIZE, http=True))
    # Read through the endpoint while it serves: its code, two connections and a call on
    # the heap besides what the board kept after boot.
    assert 0 < figures["connected"] < figures["http_in_use"] < bench_firmware.HEAPSIZE


def test_firmware_heap_bench_can_enable_the_http_endpoint_without_a_client():
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, None, bench_firmware.HEAPSIZE, http="listening"))
    assert 0 < figures["connected"] < bench_firmware.HEAPSIZE and "http_in_use" not in figures


def test_the_http_growth_lines_say_what_mcp_http_adds_and_what_it_takes_in_use():
    from tools.bench import report

    plain = {"connected": 100 * 1024, "after_calls": 101 * 1024, "smallest_heapsize": 140 * 1024}
    http = {"connected": 108 * 1024, "after_calls": 109 * 1024, "smallest_heapsize": 150 * 1024,
            "http_in_use": 130 * 1024}
    lines = report.http_growth({"mpy": plain, "mpy_http": http})
    assert ".mpy: mcp_http adds 8.0 KB after boot, 8.0 KB after the session, 10.0 KB to the smallest heap" \
        in "\n".join(lines)
    assert "in use: 130.0 KB while a client is served" in lines[-1] and "22.0 KB over its own heap" in lines[-1]
    assert not [line for line in lines if "simulated network" in line]
    lines = report.http_growth({"mpy": plain, "mpy_http": dict(http, simulated_network=4096)})
    assert "simulated network module, which setting the host name loads on the host board (in flash on a " \
        "board): 4.0 KB" in lines[-2]
    del http["http_in_use"]  # figures of a run before the in-use reading: the line is left out
    assert "in use" not in report.http_growth({"mpy": plain, "mpy_http": http})[-1]
    assert report.http_growth({"mpy": plain}) == []


def test_the_http_growth_lines_give_the_measuring_form_enabled_and_serving():
    from tools.bench import report

    board = {"baseline": {"connected": 100 * 1024, "smallest_heapsize": 120 * 1024},
             "listening": {"connected": 104 * 1024, "smallest_heapsize": 125 * 1024, "http_in_use": None},
             "used": {"connected": 104 * 1024, "smallest_heapsize": 150 * 1024, "http_in_use": 140 * 1024}}
    text = "\n".join(report.http_growth({"mpy_board_http": board}))
    assert "mcp_http enabled, no HTTP client: 4.0 KB after boot, 5.0 KB to the smallest heap" in text
    assert "an HTTP client served in the session: 30.0 KB to the smallest heap; while it is served, 36.0 KB " \
        "in use over its heap after boot" in text


def test_bench_names_the_micropython_it_ran(monkeypatch):
    assert bench_firmware.word_bits(MICROPYTHON) in (32, 64)
    monkeypatch.setenv("UMCP_MICROPYTHON", "/opt/mp/micropython-x86")
    assert bench_firmware.default_micropython() == "/opt/mp/micropython-x86"
    from tools.bench import report

    form = {"tools": 8, "connected": 40960, "after_calls": 45056, "smallest_heapsize": 98304,
            "bisect_runs": 7, "simulated": {"modules": 18432, "state": 3072}}
    figures = {"bits": 32, "micropython": "/opt/mp/micropython-x86", "heapsize": 524288,
               "calls": ["a.b", "c.d"], "reconnects": 2,
               "py": dict(form, smallest_heapsize=139264), "mpy": form}
    assert "32-bit" in report.binary_label(figures)
    assert "64-bit" in report.binary_label(dict(figures, bits=64))
    lines = report.firmware_table(figures)
    assert ".py sources" in lines[0] and ".mpy (make deploy)" in lines[0]
    rows = {line.split("  ")[0].strip() or line.strip().split("  ")[0]: line for line in lines[1:]}
    assert "40.0 KB" in rows["heap in use after boot, initialize and tools/list"]
    assert "44.0 KB" in rows["heap in use after 2 calls and 2 reconnections"]
    assert rows["of which the simulated hardware: modules + kept state"].count("18.0 KB + 3.0 KB") == 2
    assert "19.0 KB" in rows["the firmware's own (a board's figure)"]  # 40 - 18 - 3
    smallest = rows["smallest -X heapsize completing the full session"]
    assert "136.0 KB" in smallest and "96.0 KB" in smallest
    assert "115.0 KB" in rows["less the simulated hardware (a board's figure)"]  # 136 - 21
    # With a frozen build measured too: two more columns, hwsim frozen in both.
    frozen_hw = {"modules": 7168, "state": 3072}
    figures["frozen"] = dict(form, smallest_heapsize=61440, micropython="/opt/mp/frozen", simulated=frozen_hw)
    figures["mpy_board"] = dict(form, smallest_heapsize=106496, micropython="/opt/mp/frozen",
                                simulated=frozen_hw)
    lines = report.firmware_table(figures)
    assert "frozen (own build)" in lines[0] and ".mpy, hardware frozen" in lines[0]
    rows = {line.strip().split("  ")[0]: line for line in lines[1:]}
    assert rows["of which the simulated hardware: modules + kept state"].count("7.0 KB + 3.0 KB") == 2
    assert "60.0 KB" in rows["smallest -X heapsize completing the full session"]
    assert "104.0 KB" in rows["smallest -X heapsize completing the full session"]
    assert "94.0 KB" in rows["less the simulated hardware (a board's figure)"]  # 104 - 10
    # And the ROMFS image beside the hardware frozen: a board's ROMFS, a column of its own.
    figures["romfs_board"] = dict(form, smallest_heapsize=77824, micropython="/opt/mp/frozen", simulated=frozen_hw)
    lines = report.firmware_table(figures)
    assert "ROMFS, hardware frozen" in lines[0]
    rows = {line.strip().split("  ")[0]: line for line in lines[1:]}
    assert "76.0 KB" in rows["smallest -X heapsize completing the full session"]
    assert "66.0 KB" in rows["less the simulated hardware (a board's figure)"]  # 76 - 10


def test_the_simulated_network_module_s_share_is_measured_beside_the_rest(tmp_path):
    compiled = bench_firmware.stage_simulated_hardware(str(tmp_path))
    network = bench_firmware.simulated_network_heap(MICROPYTHON, compiled)
    everything = bench_firmware.simulated_hardware_heap(MICROPYTHON, compiled)
    assert 1024 < network < everything["modules"]  # one of the modules: a part of their share


def test_the_simulated_hardware_share_is_its_modules_and_the_state_it_keeps(tmp_path):
    source = bench_firmware.simulated_hardware_heap(MICROPYTHON)
    assert source["modules"] > 4096 and 0 < source["state"] < source["modules"]
    # Compiled beside the .mpy forms: the same modules, no compiler on the heap.
    compiled = bench_firmware.stage_simulated_hardware(str(tmp_path))
    assert sorted(os.listdir(compiled)) == sorted(name[:-3] + ".mpy" for name in os.listdir(bench_firmware.HWSIM)
                                                  if name.endswith(".py"))
    # Relative: the firmware boots in a copy of the stage laid out as the board's filesystem.
    assert bench_firmware.firmware_env(str(tmp_path))["MICROPYPATH"].split(os.pathsep)[-1] == os.path.basename(compiled)
    staged = bench_firmware.simulated_hardware_heap(MICROPYTHON, compiled)
    assert staged["state"] == source["state"]
    assert 0 < staged["modules"] <= source["modules"]


def test_the_frozen_stage_is_main_py_alone(tmp_path, monkeypatch):
    stage = bench_firmware.stage_frozen(str(tmp_path / "stage"))
    assert sorted(os.listdir(stage)) == ["frozen", "main.py"]
    # Relative to the copy of the stage the firmware boots in (its working directory, which
    # MicroPython searches first): main.py, then the frozen modules.
    assert bench_firmware.main_py(stage) == "main.py"
    assert bench_firmware.firmware_env(stage)["MICROPYPATH"] == ".frozen"
    monkeypatch.setenv("UMCP_MICROPYTHON_FROZEN", "/opt/mp/frozen")
    assert bench_firmware.default_frozen() == "/opt/mp/frozen"


def test_firmware_heap_bench_runs_the_firmware_from_a_romfs_image(tmp_path):
    stage = bench_firmware.stage_romfs(str(tmp_path / "stage"))
    assert not os.path.exists(os.path.join(stage, "lib"))  # everything comes from the image
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, bench_firmware.HEAPSIZE))
    image = os.path.getsize(os.path.join(stage, bench_firmware.ROMFS_IMAGE))
    assert figures["image_heap"] >= image  # read into the heap on the unix port, then left out
    assert 0 < figures["connected"] < figures["after_calls"] < bench_firmware.HEAPSIZE
