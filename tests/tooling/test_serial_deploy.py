"""Deploy, the REPL and mip on a real MicroPython over a serial line: the pty boards of
tests/support/serialrig.py, prepared at once by the `serial_rig` fixture. Deploy is the
installed `umcp deploy` run from a maker's folder (the blank and the ROMFS board) and
`make deploy` run in a copy of the repository with config.json at its root, as a maker's
clone has it (the plain board). The blank board's image lacks the camera module, as
micropython.org's stock images do: deploy refuses the camera board there."""

import json

import pytest

from tests.support.serialrig import CONFIG, RUNNING, console

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
        until(b"Connected to MicroPython")
        os.write(terminal, b"\x03")
        until(b">>> ")
        os.write(terminal, b"print(6 * 7)\r")
        until(b"42")
        os.write(terminal, b"\x1d")  # Ctrl-]: mpremote leaves
        assert repl.wait(20) == 0
    finally:
        if repl.poll() is None:
            repl.kill()
        os.close(terminal)
