"""umcp doctor: the serial ports without a board; with one, its MicroPython, heap, firmware
and config.json, one line per finding. Its board script runs here in the real MicroPython
unix port (.venv/bin/micropython) in a folder laid out as a board's filesystem."""

import json
import os
import shutil
import subprocess

import pytest

from tests.support import ROOT
from tools.board import doctor
from tools.board.ports import describe_ports, serial_ports

MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
GOOD = {"board": "generic", "wifi": {"ssid": "home", "password": "secret-pw"},
        "url": "ws://x:8000/xiaozhi/v1/", "token": "t"}


def test_without_a_port_it_lists_the_serial_ports(capsys):
    status = doctor.main([])
    lines = capsys.readouterr().out.splitlines()
    ports = serial_ports()
    if ports:
        assert status == 0 and lines[:-1] == ["port: " + describe_ports([port]) for port in ports]
    else:
        assert status == 1 and lines == ["problem: no serial ports here: is the board plugged in "
                                         "(and its USB driver installed)?"]


def test_a_port_that_is_not_there_is_one_line_and_nothing_runs(tmp_path, capsys):
    status = doctor.main(["--port", "/dev/umcp-no-such-port", "--mpremote", str(tmp_path / "never-run")])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1 and len(lines) == 1 and lines[0].startswith("problem: no serial port /dev/umcp-no-such-port")


def board_answer(tmp_path, config=None, packages=None):
    """What doctor's script prints in the MicroPython unix port, run in a folder laid out as
    a board deploy filled: /lib with `packages` (default: all of the firmware's, as source)
    and `config` as config.json (None: none)."""
    board = tmp_path / "board"
    (board / "lib").mkdir(parents=True)
    for name in doctor.firmware_packages() if packages is None else packages:
        shutil.copytree(os.path.join(ROOT, "lib", name), board / "lib" / name)
    if config is not None:
        (board / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    (board / "doctor.py").write_text(doctor.SCRIPT)
    env = dict(os.environ, MICROPYPATH=str(board / "lib"))
    done = subprocess.run([MICROPYTHON, "doctor.py"], cwd=board, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return doctor.facts(done.stdout)


def test_a_board_with_the_firmware_and_a_good_config_is_well(tmp_path):
    found = board_answer(tmp_path, GOOD)
    ok, lines = doctor.findings(found, "/dev/ttyUSB0")
    assert ok, lines
    assert [line.split(":")[0] for line in lines] == ["ok"] * len(lines)
    assert lines[0].startswith("ok: MicroPython 1.") and "(1.24 or newer needed)" in lines[0]
    assert lines[1].startswith("ok: heap ") and "KB free of" in lines[1]
    assert "ok: umcp %s deployed, the same as this copy" % doctor.this_version() in lines
    assert "ok: the board's config.json passes the firmware's check" in lines


@pytest.mark.parametrize("config, words", [
    (None, "problem: no config.json on the board: make deploy PORT=/dev/ttyUSB0 BOARD=<board> copies it"),
    ('{"board": ', "problem: the board's config.json is not valid JSON"),
    (dict(GOOD, tokn="x"), 'problem: the board\'s config.json: unknown key "tokn": did you mean "token"?'),
    (dict(GOOD, mcp_http={"auth": "none", "token": "t"}), '"mcp_http" has "auth": "none" and a "token"'),
    ({k: v for k, v in GOOD.items() if k != "board"}, 'problem: the board\'s config.json needs "board"'),
])
def test_a_config_the_firmware_would_refuse_is_a_problem(tmp_path, config, words):
    ok, lines = doctor.findings(board_answer(tmp_path, config), "/dev/ttyUSB0")
    assert not ok
    assert [line for line in lines if line.startswith("problem:")] == [next(l for l in lines if words in l)]


def test_a_board_without_the_firmware_says_what_to_run(tmp_path):
    ok, lines = doctor.findings(board_answer(tmp_path, GOOD, packages=["umcp", "unet"]), "u0")
    problems = [line for line in lines if line.startswith("problem:")]
    assert not ok and len(problems) == 1
    assert problems[0].startswith("problem: missing in the board's /lib: boards, devsvc, drivers")
    assert problems[0].endswith("(make deploy PORT=u0 BOARD=<board>)")
    ok, lines = doctor.findings(board_answer(tmp_path / "empty", GOOD, packages=[]), "u0")
    assert "problem: umcp is not deployed on the board: make deploy PORT=u0 BOARD=<board>" in lines


def test_an_old_micropython_is_a_problem():
    ok, lines = doctor.findings({"micropython": "1.22.2"}, "COM3")
    assert not ok and lines[0] == "problem: MicroPython 1.22.2 is too old: flash 1.24 or newer (make flash)"


def test_wait_for_restart_sees_the_roms_line_and_gives_up_on_a_silent_port():
    import threading
    import time

    from tools.board.ports import wait_for_restart

    controller, line = os.openpty()
    try:
        name = os.ttyname(line)
        started = time.monotonic()
        assert not wait_for_restart(name, timeout=0.5)  # nothing said: it gives up
        assert 0.5 <= time.monotonic() - started < 2
        # The ROM's line in the middle of a long read, then the board's first words, then quiet.
        said = threading.Timer(0.2, os.write, (controller, b"x" * 100 + b"\r\nrst:0xc (SW_CPU_RESET)" + b"y" * 100))
        said.start()
        assert wait_for_restart(name, timeout=3, quiet=0.3)
        said.join()
    finally:
        os.close(controller)
        os.close(line)
