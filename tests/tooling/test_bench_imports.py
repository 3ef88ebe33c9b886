"""make bench's per-import table (tools/bench/imports.py): the boot script's wrapper measures
each first import in the real MicroPython unix port (the venv's), nested and relative
imports included, and the rows read back and print as the table."""

import os
import subprocess

from tools.bench import imports
from tools.mpy import ROOT, micropython_env

MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")
KEPT = 6000  # bytes the leaf module's top level keeps

# A package whose module imports another (relatively) that keeps KEPT bytes: the outer
# one's own share leaves the inner one out, its total takes it in.
FILES = {
    "pkg/__init__.py": "",
    "pkg/outer.py": "from . import inner\nOUTER = [1, 2, 3]\n",
    "pkg/inner.py": "KEPT = bytearray(%d)\n" % KEPT,
}


def run_profiled(tmp_path, then):
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    program = tmp_path / "program.py"
    program.write_text(then)
    done = subprocess.run([MICROPYTHON, imports.PATH, str(program)], env=micropython_env([str(tmp_path)]),
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_each_first_import_is_measured_with_and_without_what_it_imported(tmp_path):
    output = run_profiled(tmp_path, "import pkg.outer\nimport pkg.inner\nprint('ran', pkg.outer.OUTER)")
    assert output[-1] == "ran [1, 2, 3]"  # the program itself ran as it would alone
    rows = {name: (own, total) for name, own, total in imports.parse(output)}
    # `import pkg.outer` is one import: the package comes in its row.
    assert set(rows) == {"pkg.outer", "pkg.inner"}
    inner_own, inner_total = rows["pkg.inner"]
    outer_own, outer_total = rows["pkg.outer"]
    assert KEPT <= inner_own == inner_total < KEPT + 2048
    assert outer_total == outer_own + inner_total  # the relative import, named in full
    assert outer_own < KEPT
    # The second `import pkg.inner` was already loaded: one row each.
    assert [name for name, _, _ in imports.parse(output)].count("pkg.inner") == 1


def test_rows_are_read_once_per_module_and_ranked_by_their_own_share():
    lines = ["booting", "import-heap a 100 300", "import-heap b 200 200", "import-heap machine 50 50",
             "import-heap a 999 999"]  # a second boot imports a again: its first import counts
    rows = imports.parse(lines)
    assert rows == [("a", 100, 300), ("b", 200, 200), ("machine", 50, 50)]
    table = imports.table(rows, top=2, simulated=("machine",))
    assert table[2:4] == ["| b | 200 B | 200 B |", "| a | 100 B | 300 B |"]
    assert table[4] == "| 3 modules in all: the firmware's | 300 B | |"
    assert table[5] == "| the simulated hardware's (nothing on a board) | 50 B | |"
