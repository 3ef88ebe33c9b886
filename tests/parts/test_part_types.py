"""A part type is one entry of lib/parts/types.py (docs/recipes.md, "A part type"): the
example parts (tools/sim/generic.json, one of each type but the SPI LCD) and the docs
(docs/boards.md's example and its table of types) follow TYPES, so they cannot drift; and a
toy type added to a copy of the tree by the recipe's four files alone (its entry and
wiring, its methods and state, its example, its docs row) is made, listed, called and
shown by the tables test, which fails when one of its pieces is left out."""

import ast
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.support import ROOT
from tools.sim.calls import GENERIC_PARTS

TYPES_PY = os.path.join("lib", "parts", "types.py")
EXAMPLES = os.path.join("tools", "sim", "generic.json")
BOARDS_MD = os.path.join("docs", "boards.md")
OUTPUT_PY = os.path.join("lib", "parts", "output.py")
NOT_IN_THE_EXAMPLES = ("lcd",)  # an SPI colour panel: the OLED is the examples' screen
SECTION = "## The generic board and its parts"
TABLES_TEST = os.path.join("tests", "portable", "test_portable_parts_tables.py")


def types_of(root):
    """The type names of TYPES in `root`'s lib/parts/types.py, read from the source."""
    with open(os.path.join(root, TYPES_PY), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["TYPES"]:
            return [key.value for key in node.value.keys]
    raise AssertionError("no TYPES in " + TYPES_PY)


def examples(root):
    with open(os.path.join(root, EXAMPLES), encoding="utf-8") as f:
        return json.load(f)["parts"]


def boards_md(root):
    """(the parts of the example config.json, the types of the table's rows) in docs/boards.md."""
    with open(os.path.join(root, BOARDS_MD), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", 1)]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    rows = [row for row in re.findall(r"^\| `(\w+)` \|", section, re.M) if row != "type"]  # not the header
    return json.loads(block)["parts"], rows


def drift(root):
    """What the examples and the docs of `root` miss or add against its TYPES: [] when none."""
    kinds = types_of(root)
    found = []
    shown = [entry["type"] for entry in examples(root)]
    wanted = [kind for kind in kinds if kind not in NOT_IN_THE_EXAMPLES]
    if sorted(shown) != sorted(wanted):
        found.append("%s has %s, TYPES less %s: %s" % (EXAMPLES, sorted(shown), NOT_IN_THE_EXAMPLES, sorted(wanted)))
    parts, rows = boards_md(root)
    if parts != examples(root):
        found.append("%s's example is not %s's parts" % (BOARDS_MD, EXAMPLES))
    if sorted(rows) != sorted(kinds):
        found.append("%s's table has rows for %s, TYPES is %s" % (BOARDS_MD, sorted(rows), sorted(kinds)))
    return found


def test_the_examples_and_the_docs_follow_the_types():
    assert GENERIC_PARTS == examples(ROOT)  # the list the tests, the bench and make sim-generic take
    assert len(types_of(ROOT)) >= 12
    assert drift(ROOT) == []


# -- the recipe, followed in a copy of the tree ----------------------------------------

TOY_ENTRY = '''    "rgb": (
        "output",
        (("red", _OUT, REQUIRED), ("green", _OUT, REQUIRED), ("blue", _OUT, REQUIRED)),
        (("set_color", "Set the colour of the %s.", _SETS, "set_rgb", _COLOR, None),),
        None),
'''
TOY_WIRING = '''    elif kind == "rgb":
        part.rgb = (0, 0, 0)
        part.pwms = [PWM(Pin(entry[c], Pin.OUT), freq=1000, duty_u16=0) for c in ("red", "green", "blue")]
'''
TOY_METHOD = '''    def set_rgb(self, args):
        self.rgb = (args["red"], args["green"], args["blue"])
        for pwm, value in zip(self.pwms, self.rgb):
            pwm.duty_u16(value * 257)
        return True

'''
TOY_STATE = '''        if kind == "rgb":
            return {"color": list(self.rgb)}
'''
TOY_PART = {"type": "rgb", "name": "mood", "red": 16, "green": 17, "blue": 18}
TOY_ROW = "| `rgb` | RGB LED on three PWM pins | `red`, `green`, `blue` | `set_color` {`red`, `green`, `blue` 0-255} |\n"


def edit(root, path, anchor, text, before=True):
    """`text` put in `root`'s `path` before (or after) the one line holding `anchor`."""
    full = os.path.join(root, path)
    with open(full, encoding="utf-8") as f:
        source = f.read()
    assert source.count(anchor) == 1, (path, anchor)
    source = source.replace(anchor, text + anchor if before else anchor + text)
    with open(full, "w", encoding="utf-8") as f:
        f.write(source)


def changed(left, right):
    """The files that differ between two trees (or are in one only), relative."""
    found = []
    compared = filecmp.dircmp(left, right, ignore=["__pycache__"])
    stack = [("", compared)]
    while stack:
        prefix, here = stack.pop()
        found += [os.path.join(prefix, name) for name in here.left_only + here.right_only + here.diff_files]
        found += [os.path.join(prefix, name) for name in filecmp.cmpfiles(here.left, here.right, here.common_files,
                                                                          shallow=False)[1]
                  if os.path.join(prefix, name) not in found]
        stack += [(os.path.join(prefix, name), sub) for name, sub in here.subdirs.items()]
    return sorted(set(found))


def tables_test(root):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "-n", "0", TABLES_TEST], cwd=root, capture_output=True, text=True, timeout=300)


@pytest.fixture
def tree(tmp_path):
    """Two copies of what the recipe and the tables test touch: one to follow the recipe in,
    one as it was."""
    copies = []
    for name in ("before", "after"):
        root = tmp_path / name
        for folder in ("lib", "tools", os.path.join("tests", "portable"), "docs"):
            shutil.copytree(os.path.join(ROOT, folder), root / folder,
                            ignore=shutil.ignore_patterns("__pycache__", "node_modules", "static", "bench"))
        copies.append(str(root))
    return copies


@pytest.mark.timeout(600)
def test_a_type_added_by_the_recipe_alone_is_made_listed_called_and_shown(tree):
    before, after = tree
    # 1. its entry in TYPES, and its wiring; 2. its method and its state; 3. its example;
    # 4. its docs: the table's row and the example there.
    edit(after, TYPES_PY, "TYPES = {\n", TOY_ENTRY, before=False)
    edit(after, TYPES_PY, '    elif kind == "lcd" or kind == "display":', TOY_WIRING)
    edit(after, OUTPUT_PY, "    def state(self, args=None):", TOY_METHOD)
    edit(after, OUTPUT_PY, '        if kind != "buzzer":', TOY_STATE)
    edit(after, EXAMPLES, '  {"type": "relay"', "  %s,\n" % json.dumps(TOY_PART))
    edit(after, BOARDS_MD, "| `relay` |", TOY_ROW)
    edit(after, BOARDS_MD, '  {"type": "relay", "name": "lamp"', "  %s,\n" % json.dumps(TOY_PART))
    assert changed(before, after) == sorted([TYPES_PY, OUTPUT_PY, EXAMPLES, BOARDS_MD])
    assert "rgb" in types_of(after) and drift(after) == []

    done = tables_test(after)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]

    # Its state left out: the tables test says which type has none.
    with open(os.path.join(after, OUTPUT_PY), encoding="utf-8") as f:
        source = f.read()
    with open(os.path.join(after, OUTPUT_PY), "w", encoding="utf-8") as f:
        f.write(source.replace(TOY_STATE, ""))
    done = tables_test(after)
    assert done.returncode != 0 and "ValueError: rgb" in done.stdout, done.stdout[-3000:]


def test_the_drift_check_sees_a_type_without_its_example_or_its_docs(tree):
    _, after = tree
    edit(after, TYPES_PY, "TYPES = {\n", TOY_ENTRY, before=False)
    found = drift(after)
    assert len(found) == 2 and EXAMPLES in found[0] and "table has rows" in found[1], found
