"""`umcp boards` (tools/board/boards.py): every board of lib/boards, every chip and part type
the parts' check knows, each with what it takes, as the firmware's own files say; run as the
command runs (tools.cli), and through the installed wheel in tests/tooling/test_wheel.py."""

import os
import re
import subprocess
import sys

from tests.support import ROOT
from tools.cli import COMMANDS

LIB = os.path.join(ROOT, "lib")


def listed():
    done = subprocess.run([sys.executable, "-m", "tools.cli", "boards"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.splitlines()


def section(lines, title):
    """The indented lines under the heading that starts with `title`."""
    start = [n for n, line in enumerate(lines) if line.startswith(title)][0] + 1
    end = start
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return [line.strip() for line in lines[start:end]]


def test_umcp_boards_lists_every_board_chip_and_part_type():
    assert COMMANDS["boards"][:2] == ("board.boards", "main")
    lines = listed()
    boards = {line.split()[0]: line.split(None, 1)[1] for line in section(lines, "boards ")}
    on_disk = {name[:-3] for name in os.listdir(os.path.join(LIB, "boards"))
               if name.endswith(".py") and name not in ("__init__.py", "setup.py")}
    assert set(boards) == on_disk and "generic" in boards and "host" in boards
    assert boards["generic"].startswith("Any ESP32") and boards["esp32_s3_box3"] == "Espressif ESP32-S3-BOX-3"
    with open(os.path.join(LIB, "parts", "check.py")) as source:
        check = source.read()
    chips = section(lines, "chips ")[0].split()
    assert chips == sorted(re.findall(r'^    "(esp32\w*)": \{', check, re.M)) and "esp32c6" in chips
    types = dict(line.split(None, 1) for line in section(lines, "part types "))
    with open(os.path.join(LIB, "parts", "types.py")) as source:
        declared = re.search(r"^TYPES = \{(.*?)^\}", source.read(), re.M | re.S).group(1)
    assert list(types) == re.findall(r'^    "(\w+)": \(', declared, re.M)  # the table's entries, in order
    assert types["relay"] == "pin, invert=false"
    assert types["button"] == "pin, pull=up, active?, debounce_ms=50"
    assert types["oled"].startswith("sda, scl, i2c=0")


def test_umcp_boards_takes_no_arguments():
    done = subprocess.run([sys.executable, "-m", "tools.cli", "boards", "generic"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unrecognized arguments: generic" in done.stderr
