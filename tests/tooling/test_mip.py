"""mip packaging (tools/board/mip.py): the package.json files are what the tree says, and
MicroPython's own mip (frozen into the unix port) installs both from a real HTTP server on
loopback, as `mpremote mip install github:<owner>/<repo>/lib/umcp` would from GitHub, into
a scratch folder: the MCP core alone then serves a tools/call, the firmware boots the generic
board and answers a backend."""

import functools
import http.server
import json
import os
import signal
import subprocess
import threading

import pytest

from tests.support.firmwareharness import MICROPYTHON, ROOT, TOKEN, Backend, run
from tests.support.serialrig import CORE_SERVE
from tools.board import mip
from tools.mpy import micropython_env

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def served():
    """The repository over HTTP on loopback: its base URL."""
    handler = functools.partial(_Quiet, directory=ROOT)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def micropython(script, path=(), cwd=None, timeout=60):
    done = subprocess.run([MICROPYTHON, "-c", script], env=micropython_env(list(path)), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def install(url, target):
    """mip.install inside MicroPython, from the frozen mip, as on a board."""
    said = micropython("import mip\nmip.install(%r, target=%r)\n" % (url, str(target)))
    assert said.strip().endswith("Done"), said
    return said


def test_the_package_files_list_the_tree():
    assert mip.main(["--check"]) == 0
    core = json.load(open(os.path.join(ROOT, "lib", "umcp", "package.json")))
    names = sorted(n for n in os.listdir(os.path.join(ROOT, "lib", "umcp")) if n.endswith(".py"))
    assert core["urls"] == [["umcp/" + n, n] for n in names]
    firmware = json.load(open(os.path.join(ROOT, "lib", "package.json")))
    listed = {target for target, _ in firmware["urls"]}
    assert {"umcp/server.py", "umcpfw/app.py", "parts/output.py", "boards/generic.py",
            "boards/esp32_s3_box3.py", "drivers/ssd1306.py"} <= listed
    assert "boards/host.py" not in listed  # the simulated board: no board has its hardware
    assert all(os.path.isfile(os.path.join(ROOT, "lib", url)) for _, url in firmware["urls"])
    assert core["version"] == firmware["version"] == __import__("umcp").__version__


def test_a_stale_package_file_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr(mip, "ROOT", str(tmp_path))
    (tmp_path / "lib" / "umcp").mkdir(parents=True)
    assert mip.main(["--check"]) == 1


def test_mip_installs_the_core_alone_and_it_serves(served, tmp_path):
    lib = tmp_path / "lib"
    said = install(served + "/lib/umcp/package.json", lib)
    assert "Copying: %s/umcp/server.py" % lib in said
    for name in os.listdir(os.path.join(ROOT, "lib", "umcp")):
        if name.endswith(".py"):
            assert (lib / "umcp" / name).read_bytes() == open(os.path.join(ROOT, "lib", "umcp", name), "rb").read()
    assert sorted(os.listdir(tmp_path)) == ["lib"] and sorted(os.listdir(lib)) == ["umcp"]
    out = micropython(CORE_SERVE + "print(sent[0])\n", [str(lib)])
    reply = json.loads(out)
    assert reply["id"] == 7 and reply["result"]["content"] == [{"type": "text", "text": "42"}]


def test_mip_installs_the_firmware_and_it_boots(served, tmp_path):
    board = tmp_path / "board"
    install(served + "/lib/package.json", board / "lib")
    install(served + "/firmware/main.py", board)  # the boot file, to /
    assert (board / "main.py").exists() and (board / "lib" / "umcpfw" / "app.py").exists()
    assert not (board / "lib" / "boards" / "host.py").exists()
    hwsim = os.path.join(ROOT, "tools", "sim", "hwsim")  # the board's machine, network...
    out = micropython("import umcpfw.app, umcpfw.boot, parts\nfor name in %r:\n    umcpfw.boot.load_board(name)\nprint('ok')"
                      % (("generic", "esp32_s3_box3", "m5stack_cores3"),), [str(board / "lib"), hwsim],
                      cwd=str(board))
    assert out.strip() == "ok"

    async def scenario():
        backend = await Backend().start()
        (board / "config.json").write_text(json.dumps({
            "board": "generic", "url": backend.url, "token": TOKEN, "wifi": {"ssid": "simnet", "password": ""},
            "parts": [{"type": "relay", "name": "lamp", "pin": 2}]}))
        firmware = subprocess.Popen([MICROPYTHON, "main.py"], cwd=str(board),
                                    env=micropython_env([str(board), str(board / "lib"), hwsim]),
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            device = await backend.next_device(30)
            await device.initialize()
            assert await device.call_json("self.lamp.turn_on") is True
            assert await device.call_json("self.lamp.get_state") == {"power": True}
        finally:
            firmware.send_signal(signal.SIGINT)
            output = firmware.communicate(timeout=30)[0]
            await backend.stop()
        return output

    output = run(scenario(), timeout=90)
    assert "KeyboardInterrupt" in output  # stopped by Ctrl-C, nothing else went wrong
    assert "Error" not in output.replace("KeyboardInterrupt", ""), output
