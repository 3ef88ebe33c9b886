"""The layout of tests/ (docs/testing.md): no module name repeats anywhere under tests/ (the
portable cases are imported by their bare names, inside MicroPython and under pytest), and
the portable cases say in their names that they are."""

import collections
import os

from tests.support import ROOT
from tools.mpy import PORTABLE_TESTS

PER_PACKAGE = {"__init__.py", "conftest.py"}  # one in each folder by nature


def module_paths():
    """Paths (from the repository root) of the .py files under tests/."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(ROOT, "tests")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [os.path.relpath(os.path.join(folder, f), ROOT) for f in files if f.endswith(".py")]
    return found


def test_no_module_name_repeats_under_tests():
    by_name = collections.defaultdict(list)
    for path in module_paths():
        if os.path.basename(path) not in PER_PACKAGE:
            by_name[os.path.basename(path)].append(path)
    assert "test_portable_on_cpython.py" in by_name and "runner.py" in by_name  # the walk saw the tree
    repeated = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not repeated, repeated


def test_the_portable_cases_are_named_test_portable():
    cases = [f for f in os.listdir(PORTABLE_TESTS) if f.startswith("test_") and f.endswith(".py")]
    assert cases
    assert [f for f in cases if not f.startswith("test_portable_")] == []
