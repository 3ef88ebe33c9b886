"""make deploy / make flash against a recording stand-in for mpremote and esptool (CI has
no board): the exact command lines, the build folder, clear refusals. mpy-cross is real.
Also the freezing manifest, run with a recording stand-in for MicroPython's manifest API."""

import hashlib
import json
import os
import stat
import sys

import pytest

from tests.support import ROOT
from tools.board import deploy, flash, repl


# Records each command line as one JSON list; `exec` (deploy's probe) prints what the
# test put in FAKE_PROBE, like MicroPython on a board would.
RECORDER = """#!%s
import json, os, sys
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if "exec" in sys.argv:
    print("raw REPL; CTRL-B to exit")
    print(os.environ.get("FAKE_PROBE", ""))
sys.exit(int(os.environ.get("FAKE_STATUS", "0")))
""" % sys.executable


class Recorder:
    """The stand-in program: str() is its path, recorded() the command lines it saw; `port`
    a serial line that is there (a pty's), for the board it stands in for."""

    def __init__(self, path, log, port):
        self.path = path
        self.log = log
        self.port = port

    def __str__(self):
        return str(self.path)

    def recorded(self):
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture
def recorder(tmp_path, monkeypatch):
    program = tmp_path / "fake-tool"
    program.write_text(RECORDER)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.setenv("FAKE_PROBE", "umcp-probe:1.24.1:")
    # No board restarts behind the stand-in's reset (wait_for_restart: test_doctor.py).
    monkeypatch.setattr(deploy, "wait_for_restart", lambda port: True)
    controller, line = os.openpty()
    yield Recorder(program, log, os.ttyname(line))
    os.close(controller)
    os.close(line)


# ---- flash -----------------------------------------------------------------------

@pytest.mark.parametrize("chip, offset", [("esp32", "0x1000"), ("esp32s3", "0"), ("esp32c3", "0")])
def test_flash_erases_then_writes_at_the_chip_offset(recorder, tmp_path, chip, offset):
    image = tmp_path / "micropython.bin"
    image.write_bytes(b"\xe9" + bytes(100))
    status = flash.main(["--port", "/dev/ttyUSB0", "--chip", chip, "--firmware", str(image),
                         "--esptool", str(recorder)])
    assert status == 0
    base = ["--chip", chip, "-p", "/dev/ttyUSB0", "-b", "460800"]
    assert recorder.recorded() == [base + ["erase-flash"], base + ["write-flash", offset, str(image)]]


def test_flash_takes_esptool_from_the_environment(recorder, tmp_path, monkeypatch):
    image = tmp_path / "fw.bin"
    image.write_bytes(b"\xe9")
    monkeypatch.setenv("UMCP_ESPTOOL", str(recorder))
    assert flash.main(["--port", "COM3", "--chip", "esp32", "--firmware", str(image), "--baud", "115200",
                       "--no-erase"]) == 0
    assert recorder.recorded() == [["--chip", "esp32", "-p", "COM3", "-b", "115200", "write-flash", "0x1000",
                                    str(image)]]


def test_flash_refuses_a_missing_image_and_runs_nothing(recorder, tmp_path, capsys):
    status = flash.main(["--port", "/dev/ttyUSB0", "--chip", "esp32s3", "--firmware", str(tmp_path / "no.bin"),
                         "--esptool", str(recorder)])
    assert status == 2
    assert "no firmware image" in capsys.readouterr().err
    assert recorder.recorded() == []


def test_flash_stops_when_esptool_fails(recorder, tmp_path, monkeypatch, capsys):
    image = tmp_path / "fw.bin"
    image.write_bytes(b"\xe9")
    monkeypatch.setenv("FAKE_STATUS", "3")
    assert flash.main(["--port", "p", "--chip", "esp32", "--firmware", str(image), "--esptool", str(recorder)]) == 3
    assert len(recorder.recorded()) == 1  # erase failed: nothing written
    assert "erasing" in capsys.readouterr().err


# A stock ESP32_GENERIC 4 MB layout: nvs, phy_init, factory app, vfs.
STOCK_TABLE = [(1, 0x02, 0x9000, 0x6000, "nvs", 0), (1, 0x01, 0xF000, 0x1000, "phy_init", 0),
               (0, 0x00, 0x10000, 0x1F0000, "factory", 0), (1, 0x81, 0x200000, 0x200000, "vfs", 0)]


def stock_image(path, chip):
    """A merged image as micropython.org ships it: bootloader, the partition table at flash
    0x8000, the app at 0x10000 (here just its first bytes)."""
    base = int(flash.OFFSETS[chip], 16)
    image = bytearray(b"\xff" * (0x10000 - base)) + b"\xe9" + bytes(255)
    image[flash.TABLE_AT - base:flash.TABLE_AT - base + flash.TABLE_MAX] = flash.table_bytes(STOCK_TABLE)
    path.write_bytes(bytes(image))
    return path


@pytest.mark.parametrize("chip", ["esp32", "esp32s3"])
def test_flash_romfs_adds_a_romfs_partition_to_a_stock_image(recorder, tmp_path, chip):
    image = stock_image(tmp_path / "ESP32_GENERIC.bin", chip)
    before = image.read_bytes()
    assert flash.main(["--port", "u0", "--chip", chip, "--firmware", str(image), "--romfs",
                       "--esptool", str(recorder)]) == 0
    copy = tmp_path / "ESP32_GENERIC-romfs.bin"
    assert image.read_bytes() == before  # the download stays as it was
    base = ["--chip", chip, "-p", "u0", "-b", "460800"]
    assert recorder.recorded() == [base + ["erase-flash"], base + ["write-flash", flash.OFFSETS[chip], str(copy)]]
    data = copy.read_bytes()
    entries = flash.read_table(data, int(flash.OFFSETS[chip], 16))
    assert entries == STOCK_TABLE[:3] + [(1, 0x81, 0x200000, 0x200000 - flash.ROMFS_SIZE, "vfs", 0),
                                         (1, 0x8F, 0x400000 - flash.ROMFS_SIZE, flash.ROMFS_SIZE, "romfs", 0)]
    # ESP-IDF checks the table's MD5 record: over the entries, after them.
    start = flash.TABLE_AT - int(flash.OFFSETS[chip], 16)
    body = data[start:start + 32 * len(entries)]
    record = data[start + 32 * len(entries):start + 32 * len(entries) + 32]
    assert record[:2] == b"\xeb\xeb" and record[16:] == hashlib.md5(body).digest()
    assert len(data) == len(before) and data[start + flash.TABLE_MAX:] == before[start + flash.TABLE_MAX:]


def test_flash_romfs_keeps_an_image_that_has_one_and_refuses_what_it_cannot_change(recorder, tmp_path, capsys):
    image = stock_image(tmp_path / "fw.bin", "esp32s3")
    romfs = tmp_path / "fw-romfs.bin"
    assert flash.romfs_image(str(image), "esp32s3") == str(romfs)
    assert flash.romfs_image(str(romfs), "esp32s3") == str(romfs)  # has one already: as it is
    assert flash.main(["--port", "p", "--chip", "esp32s3", "--firmware", str(romfs), "--romfs", "--no-erase",
                       "--esptool", str(recorder)]) == 0
    assert recorder.recorded()[-1][-1] == str(romfs)
    # Changing the table moves the file system's end: not without erasing.
    assert flash.main(["--port", "p", "--chip", "esp32s3", "--firmware", str(image), "--romfs", "--no-erase",
                       "--esptool", str(recorder)]) == 2
    assert "without --no-erase" in capsys.readouterr().err
    bare = tmp_path / "app-only.bin"
    bare.write_bytes(b"\xe9" + bytes(100))
    assert flash.main(["--port", "p", "--chip", "esp32s3", "--firmware", str(bare), "--romfs",
                       "--esptool", str(recorder)]) == 2
    assert "no partition table" in capsys.readouterr().err
    assert len(recorder.recorded()) == 1


# ---- deploy ----------------------------------------------------------------------

@pytest.fixture
def tree(tmp_path):
    """A small repository: lib/ (packages, boards among them), firmware/ and config.json."""
    root = tmp_path / "repo"
    files = {
        "lib/umcp/__init__.py": "from umcp.server import McpServer\n",
        "lib/umcp/server.py": "class McpServer:\n    pass\n",
        "lib/unet/__init__.py": "",
        "lib/unet/ws.py": "X = 1\n",
        "lib/umcpfw/__init__.py": "",
        "lib/umcpfw/app.py": "def main():\n    pass\n",
        "firmware/main.py": "from umcpfw import app\napp.main()\n",
        "firmware/manifest.py": "freeze('../lib')\n",
        "lib/boards/__init__.py": "class Board:\n    pass\n",
        "lib/boards/setup.py": "def load(name):\n    return __import__('boards.' + name)\n",
        "lib/boards/devkit.py": "NAME = 'devkit'\nREQUIRES = ('camera',)\n",
        "lib/boards/other.py": "NAME = 'other'\n",
        "config.json": json.dumps({"wifi": {"ssid": "home", "password": "pw"}, "url": "ws://x:8000/xiaozhi/v1/",
                                   "token": "t", "board": "other"}),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def copies(call):
    """The (source, board path) pairs of deploy's copying command (mpremote's `fs cp -f
    SOURCE :PATH`, chained with +)."""
    return [(call[i + 3], call[i + 4][1:]) for i in range(len(call)) if call[i:i + 3] == ["fs", "cp", "-f"]]


def run_deploy(tree, recorder, *extra, port=None):
    return deploy.main(["--port", port or recorder.port, "--board", "devkit", "--root", str(tree),
                        "--mpremote", str(recorder)] + list(extra))


@pytest.mark.parametrize("port, selects", [
    ("u0", ["u0"]),  # mpremote's shortcut is a command of its own
    ("a1", ["a1"]),
    ("auto", ["connect", "auto"]),
    ("/dev/ttyUSB3", ["connect", "/dev/ttyUSB3"]),
])
def test_deploy_selects_the_port_as_mpremote_understands_it(port, selects):
    assert deploy.connect_args(port) == selects


def test_deploy_runs_mpremote_on_the_port(tree, recorder):
    assert run_deploy(tree, recorder) == 0
    assert [call[:2] for call in recorder.recorded()] == [["connect", recorder.port]] * 4


@pytest.mark.parametrize("port", ["/dev/umcp-no-such-port", "u3"])
def test_deploy_and_repl_name_a_port_that_is_not_there_before_anything_else(tree, recorder, capsys, port):
    assert run_deploy(tree, recorder, port=port) == 1
    out, err = capsys.readouterr()
    device = port if port.startswith("/") else "/dev/ttyUSB3"
    assert err.splitlines() == [err.splitlines()[0]] and err.startswith("deploy: no serial port %s" % device), err
    assert "[1/4]" not in out and not (tree / "build").exists()
    assert repl.main(["--port", port, "--mpremote", str(recorder)]) == 1
    assert capsys.readouterr().err.startswith("repl: no serial port %s" % device)
    assert recorder.recorded() == []


def test_deploy_compiles_probes_copies_and_resets(tree, recorder, capsys):
    assert run_deploy(tree, recorder) == 0
    stage = tree / "build" / "deploy" / "devkit"
    connect = ["connect", recorder.port]
    calls = recorder.recorded()
    assert [call[:3] for call in calls] == [connect + ["exec"], connect + ["exec"], connect + ["exec"], connect + ["reset"]]
    # The board is asked for its files' hashes (the stand-in has none), then every file goes,
    # its folders made first.
    assert "'lib/umcp/server.mpy'" in calls[1][3] and "sha256" in calls[1][3]
    assert "'lib/umcp'" in calls[2][3] and calls[2][4] == "+"
    assert copies(calls[2]) == [(str(stage / name), name) for name in (
        "config.json", "lib/boards/__init__.mpy", "lib/boards/devkit.mpy", "lib/boards/setup.mpy",
        "lib/umcp/__init__.mpy", "lib/umcp/server.mpy", "lib/umcpfw/__init__.mpy", "lib/umcpfw/app.mpy",
        "lib/unet/__init__.mpy", "lib/unet/ws.mpy", "main.py")]
    assert calls[3] == connect + ["reset"]
    # The probe asks for the core modules and the board's own REQUIRES.
    assert "'camera'" in calls[0][3] and "'asyncio'" in calls[0][3]
    # Layout of the board's filesystem: main.py as source, everything else compiled.
    built = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
    assert built == ["config.json", "lib/boards/__init__.mpy", "lib/boards/devkit.mpy",
                     "lib/boards/setup.mpy", "lib/umcp/__init__.mpy", "lib/umcp/server.mpy", "lib/umcpfw/__init__.mpy",
                     "lib/umcpfw/app.mpy", "lib/unet/__init__.mpy", "lib/unet/ws.mpy", "main.py"]
    assert (stage / "lib/umcp/server.mpy").read_bytes()[:1] == b"M"  # a real .mpy header
    assert (stage / "main.py").read_text() == "from umcpfw import app\napp.main()\n"
    config = json.loads((stage / "config.json").read_text())
    assert config["board"] == "devkit" and config["token"] == "t"
    out = capsys.readouterr().out
    assert "[1/4]" in out and "[4/4]" in out and "10/10 main.py" in out
    assert "11 of 11 files changed" in out and "deploy: done in " in out and "11 files copied" in out
    assert "deploy: no tool catalogue (the firmware did not start up to its tools" in out


def test_deploy_copies_only_the_files_the_board_does_not_have(tree, recorder, monkeypatch, capsys):
    main = (tree / "firmware" / "main.py").read_bytes()
    # The board's answer to the hash query: main.py as it is here, config.json another.
    monkeypatch.setenv("FAKE_PROBE", "umcp-probe:1.24.1:\numcp-sha256:main.py %s\numcp-sha256:config.json %s"
                       % (hashlib.sha256(main).hexdigest(), hashlib.sha256(b"{}").hexdigest()))
    assert run_deploy(tree, recorder) == 0
    copied = [target for _, target in copies(recorder.recorded()[2])]
    assert "main.py" not in copied and "config.json" in copied and len(copied) == 10
    out = capsys.readouterr().out
    assert "10 of 11 files changed" in out and "10 files copied" in out and "(1 unchanged)" in out


def test_deploy_writes_the_tool_catalogue_for_its_config(recorder, tmp_path, capsys):
    """The repository's firmware, a generic board with parts: tools.cat goes beside
    config.json, written for that board and those parts (a tree whose firmware cannot start,
    above, gets none and says so)."""
    parts = [{"type": "relay", "name": "lamp", "pin": 2}, {"type": "dht", "name": "room", "pin": 27}]
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"wifi": {"ssid": "home", "password": "pw"}, "board": "generic",
                                  "chip": "esp32", "url": "ws://x:8000/xiaozhi/v1/", "token": "t",
                                  "parts": parts}))
    stage = tmp_path / "build"
    assert deploy.main(["--port", recorder.port, "--board", "generic", "--config", str(config),
                        "--build-dir", str(stage), "--mpremote", str(recorder)]) == 0
    copied = copies(recorder.recorded()[2])
    assert (str(stage / "tools.cat"), "tools.cat") in copied and (str(stage / "config.json"), "config.json") in copied
    with open(stage / "tools.cat", "rb") as f:
        header = json.loads(f.readline())
        names = [json.loads(f.readline())[0] for _ in range(header["count"])]
    assert header["board"] == "generic" and header["parts"] == parts
    assert names[0] == "self.get_device_status" and "self.lamp.turn_on" in names and "self.room.read" in names
    assert "no tool catalogue" not in capsys.readouterr().out


def test_deploy_romfs_writes_lib_into_the_romfs_partition(tree, recorder, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_PROBE", "umcp-probe:1.25.0:;romfs=1")
    assert run_deploy(tree, recorder, "--romfs") == 0
    stage = tree / "build" / "deploy" / "devkit"
    image = str(stage) + ".romfs"
    connect = ["connect", recorder.port]
    calls = recorder.recorded()
    assert "vfs.rom_ioctl(1)" in calls[0][3]  # the probe asks for ROMFS partitions
    assert calls[1:3] == [
        ["romfs", "--no-mpy", "--output", image, "build", str(stage) + "-romfs"],  # no board needed
        connect + ["romfs", "deploy", image]]
    assert calls[3][:3] == connect + ["exec"] and "lib/" not in calls[3][3]
    assert calls[4] == connect + ["fs", "cp", "-f", str(stage / "config.json"), ":config.json",  # no lib/
                                  "+", "fs", "cp", "-f", str(stage / "main.py"), ":main.py"]
    assert calls[5] == connect + ["reset"]
    # The image's tree: lib/ as compiled, found on the board through /rom/lib.
    romfs_tree = tree / "build" / "deploy" / "devkit-romfs"
    assert sorted(str(p.relative_to(romfs_tree)) for p in romfs_tree.rglob("*.mpy")) == [
        "lib/boards/__init__.mpy", "lib/boards/devkit.mpy", "lib/boards/setup.mpy", "lib/umcp/__init__.mpy", "lib/umcp/server.mpy",
        "lib/umcpfw/__init__.mpy", "lib/umcpfw/app.mpy", "lib/unet/__init__.mpy", "lib/unet/ws.mpy"]
    assert "ROMFS partition" in capsys.readouterr().out


@pytest.mark.parametrize("probe, problem", [("umcp-probe:1.25.0:;romfs=-1", "no ROMFS support"),
                                            ("umcp-probe:1.25.0:;romfs=0", "no ROMFS partition")])
def test_deploy_romfs_needs_a_romfs_partition(tree, recorder, monkeypatch, capsys, probe, problem):
    monkeypatch.setenv("FAKE_PROBE", probe)
    assert run_deploy(tree, recorder, "--romfs") == 1
    assert problem in capsys.readouterr().err
    assert len(recorder.recorded()) == 1  # the probe only: nothing written


def test_deploy_puts_only_packages_into_lib(tree, recorder, capsys):
    # Nothing of ours may land loose in a board's /lib, where a maker's own settings.py
    # or ota.py would shadow it (or be shadowed) without an error.
    (tree / "lib" / "settings.py").write_text("X = 1\n")
    assert run_deploy(tree, recorder) == 1
    assert recorder.recorded() == []
    err = capsys.readouterr().err
    assert "lib/settings.py is not in a package" in err


def test_the_real_tree_deploys_packages_only():
    targets = [target for _, target in deploy.device_files(ROOT, "esp32_s3_box3")]
    assert "main.py" in targets and "lib/boards/esp32_s3_box3.py" in targets
    assert "lib/boards/host.py" not in targets
    assert all(t == "main.py" or (t.startswith("lib/") and t.count("/") >= 2) for t in targets), targets


def test_deploy_names_what_the_board_lacks_and_copies_nothing(tree, recorder, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_PROBE", "umcp-probe:1.22.0:camera,esp32")
    assert run_deploy(tree, recorder) == 1
    err = capsys.readouterr().err
    assert "camera, esp32" in err and "MicroPython 1.22.0 is too old" in err
    assert [call[2] for call in recorder.recorded()] == ["exec"]


def test_deploy_says_when_the_board_does_not_answer(tree, recorder, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_PROBE", "")
    assert run_deploy(tree, recorder) == 1
    assert "did not answer the probe" in capsys.readouterr().err


def test_deploy_refuses_a_missing_config_or_board(tree, recorder, capsys):
    (tree / "config.json").unlink()
    assert run_deploy(tree, recorder) == 1
    assert "write one with your Wi-Fi" in capsys.readouterr().err
    assert deploy.main(["--port", "p", "--board", "nope", "--root", str(tree), "--mpremote", str(recorder)]) == 1
    assert "boards: devkit, other" in capsys.readouterr().err
    # The package's shared modules are no boards.
    assert deploy.main(["--port", "p", "--board", "setup", "--root", str(tree), "--mpremote", str(recorder)]) == 1
    assert "no board 'setup'; boards: devkit, other" in capsys.readouterr().err
    assert recorder.recorded() == []


@pytest.mark.parametrize("config, problem", [
    ({"wifi": {"ssid": "home", "password": "pw"}}, "lacks where to connect"),
    ({"wifi": {"ssid": "home"}, "url": "ws://x/xiaozhi/v1/"}, "no token"),
    ({"wifi": {"ssid": "home"}, "ota_url": "http://x/ota/"}, None),
    ({"wifi": {"ssid": "home"}, "url": "ws://x/", "token": "t"}, None),
    ({"wifi": {"ssid": "home"}, "mcp_endpoint": "wss://api.xiaozhi.me/mcp/?token=T"}, None),
    ({"wifi": {"ssid": "home"}, "mcp_http": {"port": 80, "token": "t"}}, None),
    ({}, None),  # no Wi-Fi: the board's setup page asks for all of it
])
def test_deploy_takes_what_the_firmware_takes(config, problem):
    found = deploy.config_problem(config)
    assert (found is None) if problem is None else (problem in found), found


def test_deploy_takes_tools_from_the_environment(tree, recorder, monkeypatch):
    monkeypatch.setenv("UMCP_MPREMOTE", str(recorder))
    args = deploy.parse_args(["--port", "p", "--board", "devkit"])
    assert args.mpremote == str(recorder)


# ---- repl ------------------------------------------------------------------------

def test_repl_opens_mpremote_on_the_port(recorder):
    assert repl.main(["--port", recorder.port, "--mpremote", str(recorder)]) == 0
    assert recorder.recorded() == [["connect", recorder.port, "repl"]]


def test_repl_names_a_missing_mpremote(tmp_path, recorder, capsys):
    assert repl.main(["--port", recorder.port, "--mpremote", str(tmp_path / "no-such-mpremote")]) == 1
    assert "no-such-mpremote not found" in capsys.readouterr().err


# ---- manifest --------------------------------------------------------------------

class ManifestRecorder:
    """The part of MicroPython's tools/manifestfile.py API our manifest uses: records
    the frozen files as (source path, import path)."""

    def __init__(self):
        self.frozen = []
        self.included = []

    def run(self, path, **options):
        import types

        opts = types.SimpleNamespace(**options)
        opts.defaults = lambda **d: [setattr(opts, k, v) for k, v in d.items() if not hasattr(opts, k)]
        here = os.getcwd()
        os.chdir(os.path.dirname(path))  # manifestfile.py resolves paths from the manifest's folder
        try:
            exec(open(path).read(), {"include": self.included.append, "freeze": self.freeze,
                                     "module": self.module, "package": self.package, "options": opts})
        finally:
            os.chdir(here)

    def freeze(self, path):
        base = os.path.abspath(path)
        for folder, _, names in os.walk(base):
            for name in names:
                if name.endswith(".py"):
                    full = os.path.join(folder, name)
                    self.frozen.append((full, os.path.relpath(full, base)))

    def module(self, name, base_path="."):
        self.frozen.append((os.path.abspath(os.path.join(base_path, name)), name))

    def package(self, name, files=None, base_path="."):
        if files is None:  # manifestfile.py: every .py file of the package, recursively
            top = os.path.join(base_path, name)
            files = sorted(os.path.relpath(os.path.join(d, n), top) for d, _, ns in os.walk(top)
                           for n in ns if n.endswith(".py"))
        for file in files:
            self.frozen.append((os.path.abspath(os.path.join(base_path, name, file)), name + "/" + file))


def real_boards():
    return sorted(n[:-3] for n in os.listdir(os.path.join(ROOT, "lib", "boards"))
                  if n.endswith(".py") and n not in ("__init__.py", "setup.py", "host.py") and not n.startswith("manifest"))


def test_manifest_freezes_what_deploy_copies():
    boards = real_boards()
    assert boards, "no board modules in lib/boards/"
    manifest = ManifestRecorder()
    manifest.run(os.path.join(ROOT, "firmware", "manifest.py"), board=boards[0])
    assert manifest.included == ["$(PORT_DIR)/boards/manifest.py"]
    frozen = {target: source for source, target in manifest.frozen}
    copied = {target.replace("lib/", "", 1): source for source, target in deploy.device_files(ROOT, boards[0])
              if target != "main.py"}
    assert frozen == copied
    assert all(os.path.isfile(source) for source in frozen.values())


def test_the_bench_freezes_what_deploy_copies_for_the_host_board():
    # tools/bench/unixfrozenmanifest.py: the host board's files, plus the simulated hardware.
    manifest = ManifestRecorder()
    manifest.run(os.path.join(ROOT, "tools", "bench", "unixfrozenmanifest.py"))
    assert manifest.included == ["$(MPY_DIR)/extmod/asyncio"]
    frozen = {target: os.path.realpath(source) for source, target in manifest.frozen}
    copied = {target.replace("lib/", "", 1): os.path.realpath(source)
              for source, target in deploy.device_files(ROOT, "host") if target != "main.py"}
    hwsim = {target: source for target, source in frozen.items() if "/tools/sim/hwsim/" in source}
    assert {target: source for target, source in frozen.items() if target not in hwsim} == copied
    assert sorted(hwsim) == ["camera.py", "dht.py", "ds18x20.py", "esp32.py", "hwsim.py", "machine.py",
                             "neopixel.py", "network.py", "onewire.py", "simhistory.py", "siminputs.py",
                             "simlcd.py", "simoled.py", "simspi.py"]
    # Every simulated module but framebuf, which every MicroPython has built in (and finds
    # first); ptyboot.py is the pty board's start, no module of the hardware.
    assert sorted(hwsim) == sorted(name for name in os.listdir(os.path.join(ROOT, "tools", "sim", "hwsim"))
                                   if name.endswith(".py") and name not in ("framebuf.py", "ptyboot.py"))


def test_manifest_without_a_board_freezes_every_real_board():
    manifest = ManifestRecorder()
    manifest.run(os.path.join(ROOT, "firmware", "manifest.py"))
    frozen_boards = sorted(t[len("boards/"):-3] for _, t in manifest.frozen if t.startswith("boards/"))
    assert frozen_boards == sorted(["__init__", "setup"] + real_boards())


def test_the_camera_board_needs_a_camera_enabled_build():
    # Stock MicroPython has no `camera` module: deploy must ask the board for it.
    assert "camera" in deploy.board_requirements(ROOT, "esp32s3_cam")
    assert "camera" not in deploy.board_requirements(ROOT, "esp32_s3_box3")


def test_deploy_takes_an_ota_url_instead_of_url_and_token(tree, recorder, capsys):
    (tree / "config.json").write_text(json.dumps({"wifi": {"ssid": "home", "password": "pw"},
                                                  "ota_url": "http://x:8003/xiaozhi/ota/"}))
    assert run_deploy(tree, recorder) == 0
    (tree / "config.json").write_text(json.dumps({"wifi": {"ssid": "home", "password": "pw"}}))
    assert run_deploy(tree, recorder) == 1
    assert "lacks where to connect: ota_url, url and token, mcp_endpoint, or mcp_http" in capsys.readouterr().err


def test_deploy_takes_the_makers_module_along_as_source(tree, recorder, tmp_path):
    mine = tmp_path / "watering.py"
    mine.write_text("def register(server, board):\n    pass\n")
    assert run_deploy(tree, recorder, "--app", str(mine)) == 0
    stage = tree / "build" / "deploy" / "devkit"
    assert (stage / "app.py").read_text() == mine.read_text()  # as source: tracebacks keep lines
    assert (str(stage / "app.py"), "app.py") in copies(recorder.recorded()[2])
    package = tmp_path / "tools_pkg"
    (package / "more").mkdir(parents=True)
    (package / "__init__.py").write_text("from app.more.x import register\n")
    (package / "more" / "x.py").write_text("def register(server, board):\n    pass\n")
    assert run_deploy(tree, recorder, "--app", str(package)) == 0
    assert (stage / "app" / "more" / "x.py").exists() and not (stage / "app.py").exists()


@pytest.mark.parametrize("files, problem", [
    ({"broken.py": "def register(server, board)\n    pass\n"}, "mpy-cross app.py failed"),
    ({"notes.txt": "hello"}, "give a .py file or a package's folder"),
    ({"folder/x.py": ""}, "a folder needs an __init__.py"),
])
def test_deploy_refuses_a_module_that_cannot_run(tree, recorder, tmp_path, capsys, files, problem):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    path = tmp_path / next(iter(files)).split("/")[0]
    assert run_deploy(tree, recorder, "--app", str(path)) == 1
    assert problem in capsys.readouterr().err
    assert recorder.recorded() == []  # nothing reached the board
