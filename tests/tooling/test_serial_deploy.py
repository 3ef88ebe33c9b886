"""Deploy, the REPL and mip on a real MicroPython over a serial line: the pty boards of
tests/support/serialrig.py, prepared at once by the `serial_rig` fixture. Deploy is the
installed `umcp deploy` run from a maker's folder (the blank and the ROMFS board) and
`make deploy` run in a copy of the repository with config.json at its root, as a maker's
clone has it (the plain board). The blank board's image lacks the camera module, as
micropython.org's stock images do: deploy refuses the camera board there."""

import json
import re
import subprocess
import sys

import pytest

from tests.support import ROOT
from tests.support.serialrig import CONFIG, RUNNING, console
from tools.board.ports import wait_for_restart

pytestmark = pytest.mark.timeout(300)

PACKAGES = {"umcp", "unet", "xiaozhi", "mcplink", "devsvc", "drivers", "parts", "umcpfw", "boards"}
# Every file under a folder of the board, as one sorted list of paths.
WALK = '''import os
def walk(top):
    for name, kind, *_ in os.ilistdir(top):
        path = (top.rstrip("/") + "/" + name)
        if kind == 0x4000:
            yield from walk(path)
        else:
            yield path
print(sorted(walk(%r)))
'''


def files(board, top):
    return set(eval(board.mpremote("exec", WALK % top).strip().splitlines()[-1]))


def test_deploy_refuses_a_board_without_the_modules_the_firmware_needs(serial_rig):
    blank = serial_rig.board("blank")
    status, output = blank.record["deploy"]
    assert status != 0
    said = [line for line in output.splitlines() if line.startswith("deploy:")]
    assert len(said) == 1 and said[0].startswith("deploy: modules missing on the board: camera")
    assert "[3/4]" not in output  # nothing copied
    assert [line.split()[-1] for line in blank.record["files"].splitlines()[1:]] == ["boot.py"]


def test_mip_installs_the_mcp_core_onto_the_board_and_it_serves_there(serial_rig):
    blank = serial_rig.board("blank")
    assert "/lib/umcp/server.py" in blank.record["mip"] and blank.record["mip"].strip().endswith("Done")
    core = blank.record["core"].strip().splitlines()
    import umcp

    assert core[0] == "umcp %s /lib/umcp/__init__.py" % umcp.__version__
    reply = json.loads(core[1])
    assert reply["id"] == 7 and reply["result"]["content"] == [{"type": "text", "text": "42"}]


@pytest.mark.parametrize("name", ["plain", "romfs"])
def test_deploy_puts_the_firmware_where_the_docs_say(serial_rig, name):
    prepared = serial_rig.board(name)
    board = prepared.board
    status, output = prepared.record["deploy"]
    assert status == 0, output
    assert "every module the board needs is there" in output
    watch = "make repl PORT=%s`" if name == "plain" else "umcp repl --port %s`"  # a clone's words, pip's
    assert output.rstrip().endswith(watch % board.pty)
    root = files(board, "/")
    assert {"/main.py", "/config.json"} <= root
    lib = {path for path in root if path.startswith("/lib/")}
    if name == "plain":
        packages = lib
        assert {path.split("/")[2] for path in packages} == PACKAGES
        assert all(path.endswith(".mpy") for path in packages)
        assert {p for p in packages if p.startswith("/lib/boards/")} == {
            "/lib/boards/__init__.mpy", "/lib/boards/setup.mpy", "/lib/boards/generic.mpy"}
        assert "/app.py" not in root
        where = "/lib/umcp/__init__.mpy"
    else:  # ROMFS: the packages run from the partition, only main.py and config.json (and the app) copied
        assert lib == set() and "/app.py" in root
        rom = files(board, "/rom")
        assert {path.split("/")[3] for path in rom} == PACKAGES and all(p.endswith(".mpy") for p in rom)
        assert {p for p in rom if p.startswith("/rom/lib/boards/")} == {
            "/rom/lib/boards/__init__.mpy", "/rom/lib/boards/setup.mpy", "/rom/lib/boards/generic.mpy"}
        where = "/rom/lib/umcp/__init__.mpy"
    said = board.mpremote("exec", "import umcp, json\nprint(umcp.__file__)\nprint(json.load(open('config.json'))['board'])")
    assert said.split() == [where, "generic"]
    config = json.loads(board.mpremote("exec", "print(open('config.json').read())"))
    assert config == dict(CONFIG, board="generic")


@pytest.mark.parametrize("name", ["plain", "romfs"])
def test_main_py_runs_the_firmware_ctrl_c_gives_the_repl_ctrl_d_runs_it_again(serial_rig, name):
    prepared = serial_rig.board(name)
    # After deploy's reset, main.py started the firmware: it tried its server.
    assert RUNNING in prepared.record["boot"]
    with console(prepared.board) as console_:
        console_.write(b"\r\x03")  # the friendly prompt, whatever ran (another test's mpremote may have left it)
        console_.read_until(b">>> ")
        console_.write(b"\x04")  # Ctrl-D at the prompt: a soft reset, and main.py runs the firmware
        console_.read_until(b"MPY: soft reboot")
        console_.read_until(RUNNING)
        console_.write(b"\x03")  # Ctrl-C while it runs
        stopped = console_.read_until(b">>> ")
        assert b"KeyboardInterrupt" in stopped and b"main.py" in stopped
        console_.write(b"print(6 * 7)\r")
        assert b"42" in console_.read_until(b">>> ")  # a usable REPL
        console_.write(b"\x04")  # Ctrl-D: a soft reset, and main.py again
        console_.read_until(b"MPY: soft reboot")
        console_.read_until(RUNNING)


def test_a_command_straight_after_deploys_reset_reaches_the_repl(serial_rig):
    # Deploy's reset waits until the board has started again (what mpremote sends while
    # it restarts is lost). mpremote's Ctrl-C then lands as the board starts, before the
    # firmware runs: it must still stop main.py and give the raw REPL, never end the board.
    board = serial_rig.board("plain").board
    for attempt in range(3):
        board.mpremote("reset", timeout=60)
        assert wait_for_restart(board.pty)
        said = board.mpremote("exec", "print(6 * 7)", timeout=60)
        assert said.strip().splitlines()[-1] == "42", (attempt, said)


def test_deploy_names_each_file_and_a_second_deploy_copies_only_what_changed(serial_rig):
    prepared = serial_rig.board("plain")
    board, checkout = prepared.board, prepared.record["checkout"]
    status, first = prepared.record["deploy"]
    assert status == 0, first
    # The first deploy named each file as mpremote copied it, and what it copied in the end.
    copying = [line for line in first.splitlines() if line.startswith("  copying ")]
    count = len(copying)
    assert count > 90 and copying[-1].startswith("  copying %d/%d " % (count, count)), first
    assert [line for line in copying if re.fullmatch(r"  copying \d+/%d lib/umcp/server\.mpy \(\d+\.\d KB\)" % count, line)]
    done = [line for line in first.splitlines() if line.startswith("deploy: done in ")]
    assert len(done) == 1 and ": %d files copied, " % count in done[0] and "(0 unchanged)" in done[0], done
    try:
        # Deployed as the rig deployed it (another test may have changed config.json since),
        # then again, unchanged: the board has every file, nothing is copied.
        status, output = checkout.deploy(board.pty, "BOARD=generic")
        assert status == 0, output
        status, again = checkout.deploy(board.pty, "BOARD=generic")
        assert status == 0, again
        assert "  the board has every file already (%d)" % count in again and "  copying " not in again, again
        assert ": nothing copied, %d files unchanged;" % count in again
        # A config.json changed (not its tools): that file alone goes.
        checkout.write_config(dict(CONFIG, wifi_check_interval=20))
        status, changed = checkout.deploy(board.pty, "BOARD=generic")
        assert status == 0, changed
        copied = [line for line in changed.splitlines() if line.startswith("  copying ")]
        assert len(copied) == 1 and re.fullmatch(r"  copying 1/1 config\.json \(\d+\.\d KB\)", copied[0]), changed
        assert ": 1 file copied, " in changed and "(%d unchanged);" % (count - 1) in changed
        said = board.mpremote("exec", "import json\nprint(json.load(open('config.json'))['wifi_check_interval'])")
        assert said.split() == ["20"]
    finally:  # the board as the other tests know it
        checkout.write_config(CONFIG)
        status, output = checkout.deploy(board.pty, "BOARD=generic")
    assert status == 0 and ": 1 file copied, " in output, output
    status, lines = doctor(board.pty)
    assert status == 0 and "ok: every package of the firmware is in /lib" in lines, lines


def doctor(port, umcp=None, env=None, cwd=ROOT):
    """`umcp doctor --port PORT` (the clone's, or the installed `umcp`): (status, lines)."""
    command = [umcp, "doctor"] if umcp else [sys.executable, "-m", "tools.board.doctor"]
    done = subprocess.run(command + ["--port", port], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    return done.returncode, (done.stdout + done.stderr).splitlines()


def test_doctor_finds_a_deployed_board_well(serial_rig):
    import umcp

    board = serial_rig.board("romfs").board
    status, lines = doctor(board.pty)
    assert status == 0 and all(line.startswith("ok: ") for line in lines), lines
    assert re.fullmatch(r"ok: MicroPython 1\.\d+\.\d+ \(1\.24 or newer needed\)", lines[0]), lines
    assert re.fullmatch(r"ok: heap \d+ KB free of \d+ KB after a soft reset", lines[1]), lines
    assert lines[2:] == ["ok: umcp %s deployed, the same as this copy" % umcp.__version__,
                         "ok: every package of the firmware is in /lib (ROMFS)",
                         "ok: the board's config.json passes the firmware's check"]


def test_the_installed_doctor_says_what_a_board_lacks(serial_rig, installed_wheel):
    # The blank board: stock MicroPython and the MCP core from mip, no firmware, no config.json.
    board = serial_rig.board("blank").board
    status, lines = doctor(board.pty, installed_wheel.umcp, installed_wheel.env, str(installed_wheel.cwd))
    problems = [line for line in lines if line.startswith("problem: ")]
    assert status == 1 and len(problems) == 2, lines
    assert problems[0].startswith("problem: missing in the board's /lib: boards, devsvc, drivers, mcplink, parts")
    assert problems[0].endswith("(umcp deploy --port %s --board <board>)" % board.pty)
    assert problems[1] == "problem: no config.json on the board: umcp deploy --port %s --board <board> copies it" % board.pty
    status, lines = doctor("/dev/umcp-no-such-port", installed_wheel.umcp, installed_wheel.env, str(installed_wheel.cwd))
    assert status == 1 and len(lines) == 1 and lines[0].startswith("problem: no serial port /dev/umcp-no-such-port")


def test_a_config_json_with_a_mistake_is_said_at_the_repl_without_a_reset_loop(serial_rig, tmp_path):
    board = serial_rig.board("plain").board
    mistaken = tmp_path / "config.json"
    mistaken.write_text(json.dumps(dict(CONFIG, wifi_check_interval=0)))
    board.mpremote("fs", "cp", str(mistaken), ":config.json")
    with console(board) as console_:
        console_.write(b"\x03\x04")  # stop the firmware, a soft reset: main.py reads the new config.json
        console_.read_until(b"MPY: soft reboot")
        said = console_.read_until(b">>> ")
        assert b'umcp cannot start: config.json: "wifi_check_interval" must be a number of seconds above 0' in said
        console_.write(b"print(6 * 7)\r")
        assert b"42" in console_.read_until(b">>> ")
        assert b"soft reboot" not in console_.read_for(2)  # the board stays at its prompt


def test_the_installed_repl_is_the_boards_prompt_and_ctrl_close_bracket_leaves(serial_rig, installed_wheel):
    """`umcp repl --port PTY` as pip installs it, in a terminal of its own (mpremote's repl
    wants one): Ctrl-C stops the firmware, a line typed runs on the board, Ctrl-] leaves."""
    import os
    import pty
    import select
    import subprocess
    import time

    board = serial_rig.board("plain").board
    terminal, their_side = pty.openpty()
    repl = subprocess.Popen([installed_wheel.umcp, "repl", "--port", board.pty], cwd=str(installed_wheel.cwd),
                            env=installed_wheel.env, stdin=their_side, stdout=their_side, stderr=their_side)
    os.close(their_side)
    seen = b""

    def until(text, timeout=20):
        nonlocal seen
        deadline = time.monotonic() + timeout
        while text not in seen:
            assert time.monotonic() < deadline, seen.decode("utf-8", "replace")
            if select.select([terminal], [], [], 0.1)[0]:
                try:
                    seen += os.read(terminal, 4096)
                except OSError:
                    break
        seen = seen[seen.index(text) + len(text):]

    try:
        until(b"exit this shell")
        for _ in range(4):  # a key typed before mpremote made its terminal raw is the terminal's
            os.write(terminal, b"\x03")
            try:
                until(b">>> ", timeout=5)
                break
            except AssertionError:
                continue
        else:
            raise AssertionError("no prompt after Ctrl-C: %r" % seen)
        os.write(terminal, b"print(6 * 7)\r")
        until(b"42")
        os.write(terminal, b"\x1d")  # Ctrl-]: mpremote leaves
        assert repl.wait(20) == 0
    finally:
        if repl.poll() is None:
            repl.kill()
        os.close(terminal)
