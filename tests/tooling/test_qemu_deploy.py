"""make deploy, the REPL and mip on a real MicroPython over a serial line: the QEMU board
(tests/support/qemu.py; the boards are prepared at once by the `qemu_rig` fixture, each
`make deploy` the real one, run in a copy of the repository with config.json at its root as
a maker's clone has it). The board lacks network, esp32, socket and ssl: on the board as it
comes deploy refuses; the deployed boards got stand-ins for those four first
(tools/board/qemustandins/*.py), and the generic board (no pin parts: the QEMU
board has no machine.Pin)."""

import json

import pytest

from tests.support.qemu import CONFIG

pytestmark = pytest.mark.timeout(300)

PACKAGES = {"umcp", "unet", "xiaozhi", "mcplink", "devsvc", "drivers", "parts", "umcpfw", "boards"}
STANDINS = {"network.py", "esp32.py", "socket.py", "ssl.py"}
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


def test_deploy_refuses_a_board_without_the_modules_the_firmware_needs(qemu_rig):
    blank = qemu_rig.board("blank")
    status, output = blank.record["deploy"]
    assert status != 0
    said = [line for line in output.splitlines() if line.startswith("deploy:")]
    assert len(said) == 1 and said[0].startswith("deploy: modules missing on the board: network, esp32, socket, ssl")
    assert "[3/4]" not in output  # nothing copied
    assert [line.split()[-1] for line in blank.record["files"].splitlines()[1:]] == ["boot.py"]


def test_mip_installs_the_mcp_core_onto_the_board_and_it_serves_there(qemu_rig):
    blank = qemu_rig.board("blank")
    assert "/lib/umcp/server.py" in blank.record["mip"] and blank.record["mip"].strip().endswith("Done")
    core = blank.record["core"].strip().splitlines()
    import umcp

    assert core[0] == "umcp %s /lib/umcp/__init__.py" % umcp.__version__
    reply = json.loads(core[1])
    assert reply["id"] == 7 and reply["result"]["content"] == [{"type": "text", "text": "42"}]


@pytest.mark.parametrize("name", ["plain", "romfs"])
def test_deploy_puts_the_firmware_where_the_docs_say(qemu_rig, name):
    prepared = qemu_rig.board(name)
    board = prepared.board
    status, output = prepared.record["deploy"]
    assert status == 0, output
    assert "every module the board needs is there" in output and output.rstrip().endswith("make repl PORT=%s`" % board.pty)
    root = files(board, "/")
    assert {"/main.py", "/config.json"} <= root
    lib = {path for path in root if path.startswith("/lib/")}
    standins = {"/lib/" + name for name in STANDINS}
    assert standins <= lib  # the test's, put there before deploy
    if name == "plain":
        packages = lib - standins
        assert {path.split("/")[2] for path in packages} == PACKAGES
        assert all(path.endswith(".mpy") for path in packages)
        assert {p for p in packages if p.startswith("/lib/boards/")} == {
            "/lib/boards/__init__.mpy", "/lib/boards/setup.mpy", "/lib/boards/generic.mpy"}
        assert "/app.py" not in root
        where = "/lib/umcp/__init__.mpy"
    else:  # ROMFS: the packages run from the partition, only main.py and config.json (and the app) copied
        assert lib == standins and "/app.py" in root
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
def test_main_py_runs_the_firmware_ctrl_c_gives_the_repl_ctrl_d_runs_it_again(qemu_rig, name):
    prepared = qemu_rig.board(name)
    # After deploy's reset, main.py started the firmware: it tried Wi-Fi (the stand-in).
    assert b"network stand-in: WLAN.connect('qemu-net')" in prepared.record["boot"]
    with prepared.board.console() as console:
        console.write(b"\x04")  # at the friendly REPL (mpremote left it there): a soft reset
        console.read_until(b"MPY: soft reboot")
        console.read_until(b"network stand-in: WLAN.connect")  # main.py runs the firmware
        console.write(b"\x03")  # Ctrl-C while it runs
        stopped = console.read_until(b">>> ")
        assert b"KeyboardInterrupt" in stopped and b"main.py" in stopped
        console.write(b"print(6 * 7)\r")
        assert b"42" in console.read_until(b">>> ")  # a usable REPL
        console.write(b"\x04")  # Ctrl-D: a soft reset, and main.py again
        console.read_until(b"MPY: soft reboot")
        console.read_until(b"network stand-in: WLAN.connect")


def test_a_config_json_with_a_mistake_is_said_at_the_repl_without_a_reset_loop(qemu_rig, tmp_path):
    board = qemu_rig.board("plain").board
    mistaken = tmp_path / "config.json"
    mistaken.write_text(json.dumps(dict(CONFIG, wifi_check_interval=0)))
    board.mpremote("fs", "cp", str(mistaken), ":config.json")
    with board.console() as console:
        console.write(b"\x04")  # a soft reset: main.py reads the new config.json
        console.read_until(b"MPY: soft reboot")
        said = console.read_until(b">>> ")
        assert b'umcp cannot start: config.json: "wifi_check_interval" must be a number of seconds above 0' in said
        console.write(b"print(6 * 7)\r")
        assert b"42" in console.read_until(b">>> ")
        assert b"soft reboot" not in console.read_for(2)  # the board stays at its prompt
