"""make bench's firmware table measures what it claims (tools/bench/firmware.py, heap.py,
firmwaretable.py, on the venv's unix port): a full tools/list page inside MicroPython, the
staged firmware's heap through the full session in each form, the simulated hardware's
share, round trips over the link, and the table's rows from given figures."""

import asyncio
import json
import os
import shutil
import subprocess

import pytest

from tools.bench import firmware as bench_firmware
from tools.bench import firmwaretable, heap
from tools.bench import link as bench_link
from tools.mpy import ROOT, micropython_env
from tools.paths import HWSIM
from tools.sim import fullsession
from tools.sim.board import STAGED_HWSIM, SimBoard, compile_hwsim
from tools.sim.calls import CALLS

MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
SOURCES = heap.stage_form("py", None)

pytestmark = pytest.mark.timeout(60)


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
    stage = heap.stage_form("mpy", str(tmp_path / "stage"))
    # What make deploy copies: compiled modules, main.py kept as source.
    assert os.path.isfile(os.path.join(stage.folder, "lib", "umcp", "server.mpy"))
    assert not os.path.exists(os.path.join(stage.folder, "lib", "umcp", "server.py"))
    heapsize = bench_firmware.HEAPSIZE
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, heapsize))
    assert figures["tools"] >= len(CALLS)  # onboarded: the tools/list it made CALLS from
    assert 0 < figures["connected"] < heapsize
    assert 0 < figures["after_calls"] < heapsize
    assert figures["calls"] == len(CALLS) + len(fullsession.MORE_CALLS)
    assert figures["reconnects"] == fullsession.RECONNECTS
    # A starved heap is a failed run, with the firmware's own account of why.
    with pytest.raises(bench_firmware.FirmwareFailed, match="MemoryError"):
        asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, 32 * 1024))


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
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, SOURCES, bench_firmware.HEAPSIZE))
    # (The calls need not leave more on the heap than the connection did: the code of the
    # rare ones is dropped again after each.)
    assert 0 < figures["connected"] < bench_firmware.HEAPSIZE
    assert 0 < figures["after_calls"] < bench_firmware.HEAPSIZE


def test_firmware_heap_bench_serves_an_http_client_and_reads_the_heap_through_it():
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, SOURCES, bench_firmware.HEAPSIZE, http=True))
    # Read through the endpoint while it serves: its code, two connections and a call on
    # the heap besides what the board kept after boot.
    assert 0 < figures["connected"] < figures["http_in_use"] < bench_firmware.HEAPSIZE


def test_firmware_heap_bench_can_enable_the_http_endpoint_without_a_client():
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, SOURCES, bench_firmware.HEAPSIZE, http="listening"))
    assert 0 < figures["connected"] < bench_firmware.HEAPSIZE and "http_in_use" not in figures


def test_the_http_growth_lines_say_what_mcp_http_adds_and_what_it_takes_in_use():
    plain = {"connected": 100 * 1024, "after_calls": 101 * 1024, "smallest_heapsize": 140 * 1024}
    http = {"connected": 108 * 1024, "after_calls": 109 * 1024, "smallest_heapsize": 150 * 1024,
            "http_in_use": 130 * 1024}
    lines = firmwaretable.http_growth({"mpy": plain, "mpy_http": http})
    assert ".mpy: mcp_http adds 8.0 KB after boot, 8.0 KB after the session, 10.0 KB to the smallest heap" \
        in "\n".join(lines)
    assert "in use: 130.0 KB while a client is served" in lines[-1] and "22.0 KB over its own heap" in lines[-1]
    assert not [line for line in lines if "simulated network" in line]
    lines = firmwaretable.http_growth({"mpy": plain, "mpy_http": dict(http, simulated_network=4096)})
    assert "simulated network module, which setting the host name loads on the host board (in flash on a " \
        "board): 4.0 KB" in lines[-2]
    del http["http_in_use"]  # figures of a run before the in-use reading: the line is left out
    assert "in use" not in firmwaretable.http_growth({"mpy": plain, "mpy_http": http})[-1]
    assert firmwaretable.http_growth({"mpy": plain}) == []


def test_the_http_growth_lines_give_the_measuring_form_enabled_and_serving():
    board = {"baseline": {"connected": 100 * 1024, "smallest_heapsize": 120 * 1024},
             "listening": {"connected": 104 * 1024, "smallest_heapsize": 125 * 1024, "http_in_use": None},
             "used": {"connected": 104 * 1024, "smallest_heapsize": 150 * 1024, "http_in_use": 140 * 1024}}
    text = "\n".join(firmwaretable.http_growth({"mpy_board_http": board}))
    assert "mcp_http enabled, no HTTP client: 4.0 KB after boot, 5.0 KB to the smallest heap" in text
    assert "an HTTP client served in the session: 30.0 KB to the smallest heap; while it is served, 36.0 KB " \
        "in use over its heap after boot" in text


def test_bench_names_the_micropython_it_ran(monkeypatch):
    assert heap.word_bits(MICROPYTHON) in (32, 64)
    monkeypatch.setenv("UMCP_MICROPYTHON", "/opt/mp/micropython-x86")
    assert heap.default_micropython() == "/opt/mp/micropython-x86"
    form = {"tools": 8, "connected": 40960, "after_calls": 45056, "smallest_heapsize": 98304,
            "bisect_runs": 7, "simulated": {"modules": 18432, "state": 3072}}
    figures = {"bits": 32, "micropython": "/opt/mp/micropython-x86", "heapsize": 524288,
               "calls": ["a.b", "c.d"], "reconnects": 2,
               "py": dict(form, smallest_heapsize=139264), "mpy": form}
    assert "32-bit" in firmwaretable.binary_label(figures)
    assert "64-bit" in firmwaretable.binary_label(dict(figures, bits=64))
    lines = firmwaretable.firmware_table(figures)
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
    lines = firmwaretable.firmware_table(figures)
    assert "frozen (own build)" in lines[0] and ".mpy, hardware frozen" in lines[0]
    rows = {line.strip().split("  ")[0]: line for line in lines[1:]}
    assert rows["of which the simulated hardware: modules + kept state"].count("7.0 KB + 3.0 KB") == 2
    assert "60.0 KB" in rows["smallest -X heapsize completing the full session"]
    assert "104.0 KB" in rows["smallest -X heapsize completing the full session"]
    assert "94.0 KB" in rows["less the simulated hardware (a board's figure)"]  # 104 - 10
    # And the ROMFS image beside the hardware frozen: a board's ROMFS, a column of its own.
    figures["romfs_board"] = dict(form, smallest_heapsize=77824, micropython="/opt/mp/frozen", simulated=frozen_hw)
    lines = firmwaretable.firmware_table(figures)
    assert "ROMFS, hardware frozen" in lines[0]
    rows = {line.strip().split("  ")[0]: line for line in lines[1:]}
    assert "76.0 KB" in rows["smallest -X heapsize completing the full session"]
    assert "66.0 KB" in rows["less the simulated hardware (a board's figure)"]  # 76 - 10


def test_the_simulated_network_module_s_share_is_measured_beside_the_rest(tmp_path):
    compiled = compile_hwsim(str(tmp_path / STAGED_HWSIM))
    network = bench_firmware.simulated_network_heap(MICROPYTHON, compiled)
    everything = bench_firmware.simulated_hardware_heap(MICROPYTHON, compiled)
    assert 1024 < network < everything["modules"]  # one of the modules: a part of their share


def test_the_simulated_hardware_share_is_its_modules_and_the_state_it_keeps(tmp_path):
    # The sources and the compiled files at paths of the same length: a module's file name
    # is interned, so a longer folder alone costs bytes.
    sources = str(tmp_path / "py" / STAGED_HWSIM)
    shutil.copytree(HWSIM, sources, ignore=shutil.ignore_patterns("__pycache__"))
    source = bench_firmware.simulated_hardware_heap(MICROPYTHON, sources)
    assert source["modules"] > 4096 and 0 < source["state"] < source["modules"]
    # Compiled beside the .mpy forms: the same modules, no compiler on the heap.
    compiled = compile_hwsim(str(tmp_path / "mp" / STAGED_HWSIM))
    assert sorted(os.listdir(compiled)) == sorted(name[:-3] + ".mpy" for name in os.listdir(HWSIM)
                                                  if name.endswith(".py"))
    # Relative: the firmware boots in a copy of the stage laid out as the board's filesystem.
    assert SimBoard({}, "mpy", MICROPYTHON).command()[1]["MICROPYPATH"].split(os.pathsep)[-1] == \
        os.path.basename(compiled)
    staged = bench_firmware.simulated_hardware_heap(MICROPYTHON, compiled)
    assert staged["state"] == source["state"]
    assert 0 < staged["modules"] <= source["modules"]


def test_the_frozen_stage_is_main_py_alone(tmp_path, monkeypatch):
    stage = heap.stage_form("frozen", str(tmp_path / "stage"))
    assert sorted(os.listdir(stage.folder)) == ["main.py"]
    # Relative to the copy of the stage the firmware boots in (its working directory, which
    # MicroPython searches first): main.py, then the frozen modules.
    assert stage.entry == "main.py"
    assert SimBoard({}, stage.runtime, MICROPYTHON).command()[1]["MICROPYPATH"] == ".frozen"
    monkeypatch.setenv("UMCP_MICROPYTHON_FROZEN", "/opt/mp/frozen")
    assert heap.default_frozen() == "/opt/mp/frozen"
    # The board's folder holds main.py, config.json and its tool catalogue, as make deploy
    # leaves a frozen build (the venv's port has no firmware frozen in: it stops at main.py's
    # first import).
    board = SimBoard({"board": "host"}, stage.runtime, MICROPYTHON, root=str(tmp_path / "board")).start()
    try:
        assert sorted(os.listdir(board.root)) == ["config.json", "main.py", "tools.cat"]
        assert board.wait(20) not in (None, 0)  # it ended: nothing to import
    finally:
        board.stop()
        board.close()


def test_firmware_heap_bench_runs_the_firmware_from_a_romfs_image(tmp_path):
    stage = heap.stage_form("romfs", str(tmp_path / "stage"))
    assert not os.path.exists(os.path.join(stage.folder, "lib"))  # everything comes from the image
    figures = asyncio.run(bench_firmware.run_firmware(MICROPYTHON, stage, bench_firmware.HEAPSIZE))
    image = os.path.getsize(os.path.join(stage.folder, heap.ROMFS_IMAGE))
    assert figures["image_heap"] >= image  # read into the heap on the unix port, then left out
    assert 0 < figures["connected"] < figures["after_calls"] < bench_firmware.HEAPSIZE


# A maker's module that prints a byte no UTF-8 text holds, as a board's console may.
NOT_UTF8_APP = '''import sys


def register(server, board):
    out = getattr(sys.stdout, "buffer", sys.stdout)
    out.write(b"maker: \\xbd\\n")
'''


def test_the_full_session_reads_a_console_that_is_not_utf8():
    # A firmware table run died on such a byte in a board's output (UnicodeDecodeError).
    figures, output = asyncio.run(fullsession.run(MICROPYTHON, "micropython", 2 * 1024 * 1024,
                                                  files={"app.py": NOT_UTF8_APP}))
    assert figures["calls"] == len(CALLS) + len(fullsession.MORE_CALLS)
    assert "maker: \ufffd" in output
