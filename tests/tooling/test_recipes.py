"""docs/recipes.md's recipes run: each ends with "Try it", a block of the exact commands, a
`umcp` command (the simulator showing the change, run as the clone runs it: python -m
tools.cli, without a terminal, so a whole session and its exit status) and the pytest
command of its tests (each test file named must exist and be collected). A recipe naming a
command, an option, a file or a test that is gone fails here."""

import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.support import ROOT

RECIPES = os.path.join(ROOT, "docs", "recipes.md")
SESSION_TIMEOUT = 300  # one simulated session, on a busy machine

pytestmark = pytest.mark.timeout(2 * SESSION_TIMEOUT)


def try_its(text):
    """{recipe title: [its Try it commands]}, in the page's order."""
    found = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title = section.split("\n", 1)[0].strip()
        block = re.search(r"^Try it[^\n]*:\n\n```sh\n(.*?)^```", section, re.M | re.S)
        found[title] = block.group(1).strip().splitlines() if block else []
    return found


def commands():
    with open(RECIPES, encoding="utf-8") as f:
        return try_its(f.read())


def test_every_recipe_ends_with_a_try_it_of_a_umcp_command_and_its_tests():
    found = commands()
    assert len(found) >= 5 and "A part type (config.json's \"parts\")" in found
    for title, lines in found.items():
        assert [line for line in lines if line.startswith("umcp ")], title
        assert [line for line in lines if line.startswith("pytest ")], title
        assert not [line for line in lines if not line.startswith(("umcp ", "pytest "))], title


def test_the_reader_finds_a_missing_try_it():
    text = "# R\n\n## One\n\n1. a step\n\nTry it:\n\n```sh\numcp sim\npytest tests/x.py\n```\n\n## Two\n\n1. b\n"
    assert try_its(text) == {"One": ["umcp sim", "pytest tests/x.py"], "Two": []}


@pytest.mark.parametrize("line", sorted({line for lines in commands().values() for line in lines
                                         if line.startswith("pytest ")}))
def test_each_recipe_s_tests_exist_and_are_collected(line):
    files = shlex.split(line)[1:]
    for name in files:
        assert os.path.isfile(os.path.join(ROOT, name)), "%s names %s, which is not there" % (RECIPES, name)
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly",
                           "-n", "0"] + files, cwd=ROOT, capture_output=True, text=True, timeout=SESSION_TIMEOUT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("line", sorted({line for lines in commands().values() for line in lines
                                         if line.startswith("umcp ")}))
def test_each_recipe_s_umcp_command_runs_to_its_end(line):
    done = subprocess.run([sys.executable, "-m", "tools.cli"] + shlex.split(line)[1:], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=SESSION_TIMEOUT)
    assert done.returncode == 0, "%s: exit %d\n%s\n%s" % (line, done.returncode, done.stdout[-3000:],
                                                          done.stderr[-3000:])
    words = shlex.split(line)
    if "--config" in words:  # the parts of the file were made: their tools are listed
        with open(os.path.join(ROOT, words[words.index("--config") + 1]), encoding="utf-8") as f:
            parts = json.load(f).get("parts") or []
        out = done.stdout + done.stderr
        assert [entry["name"] for entry in parts if "self.%s." % entry["name"] not in out
                and entry["type"] != "button"] == [], out[-3000:]
