"""The house's style, checked where a rule can be: one naming style for the host code's
modules (tools/, tests/support/: words run together in lowercase, as the device packages
and micropython-lib name theirs; tests keep pytest's test_ prefix), each module's header a
docstring (its contract, docs/CONTRIBUTING.md), and make bench apart from the tests (only
the bench's own tests import tools.bench; the bench takes nothing from tests/)."""

import ast
import os
import re

from tests.support import ROOT

STYLED = ("tools", os.path.join("tests", "support"))
NAME = re.compile(r"^[a-z][a-z0-9]*$")
SPECIAL = {"__init__", "__main__"}


def files(top, ending):
    for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "node_modules", "static")]
        for name in names:
            if name.endswith(ending):
                yield os.path.join(folder, name)


def test_host_modules_are_named_in_one_style():
    bad = []
    for top in STYLED:
        for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in dirs + [n.rsplit(".", 1)[0] for n in names if n.endswith((".py", ".mjs"))]:
                if name not in SPECIAL and name not in ("static",) and not NAME.match(name):
                    bad.append(os.path.relpath(os.path.join(folder, name), ROOT))
    assert bad == [], "name these as words run together in lowercase: %s" % ", ".join(sorted(set(bad)))


def test_host_modules_open_with_a_docstring():
    bare = []
    for top in STYLED:
        for path in files(top, ".py"):
            with open(path, encoding="utf-8") as source:
                tree = ast.parse(source.read())
            if ast.get_docstring(tree) is None and tree.body:
                bare.append(os.path.relpath(path, ROOT))
    assert bare == [], "a module's header is its docstring: %s" % ", ".join(sorted(bare))


def test_only_the_bench_s_own_tests_import_the_bench_and_the_bench_takes_nothing_from_tests():
    importers = []
    for path in files("tests", ".py"):
        with open(path, encoding="utf-8") as source:
            text = source.read()
        if re.search(r"^\s*(from|import) tools\.bench\b", text, re.M):
            importers.append(os.path.relpath(path, ROOT))
    own = [p for p in importers if re.match(r"tests/tooling/test_(bench|fleet)_\w+\.py$", p)]
    assert own and sorted(importers) == sorted(own)  # the checker sees them, and no one else
    for path in files(os.path.join("tools", "bench"), ".py"):
        with open(path, encoding="utf-8") as source:
            text = source.read()
        assert not re.search(r"^\s*(from|import) tests\b", text, re.M), path
        assert '"tests"' not in text and "tests/" not in text.replace("tests/bench", ""), path


def test_the_style_checks_see_a_bad_name_and_a_bare_header(tmp_path):
    assert not NAME.match("fleet_devices") and NAME.match("fleetdevices") and NAME.match("ws2")
    assert ast.get_docstring(ast.parse("# a comment header\nimport os\n")) is None
