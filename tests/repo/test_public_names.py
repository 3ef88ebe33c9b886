"""Modules talk through public names (docs/DESIGN.md, "The heap", rules): no module imports
another's `_private` name or reaches into an object for one of ours that is not its own.
Read from the source (ast) of the device code and the host programs: a name counts as ours
when some module of the tree defines it (a function, a class, a module global or an
attribute set on `self`); a third-party object's private attribute is the library's
business (tools/hub/broker.py reads amqtt's listening port so, for want of a public one).
Within a module, `other._x` of its own `_x` (another instance of its class) is fine."""

import ast
import os

import pytest

from tests.support import ROOT

TREES = ("lib", "firmware", "tools")


def _sources(trees=TREES, root=ROOT):
    for tree in trees:
        for folder, dirs, files in os.walk(os.path.join(root, tree)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "node_modules")]
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8") as f:
                        yield os.path.relpath(path, root), ast.parse(f.read(), path)


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _defined(module):
    """The private names `module` defines: functions, classes, globals, self's attributes."""
    names = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            names.add(node.attr)
    return set(name for name in names if _private(name))


def offences(sources):
    """["path:line: what"] for every use of another module's private name."""
    modules = list(sources)
    defined = [_defined(module) for _, module in modules]
    ours = set().union(*defined) if defined else set()
    found = []
    for (path, module), own in zip(modules, defined):
        for node in ast.walk(module):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                for alias in node.names:
                    if _private(alias.name):
                        found.append("%s:%d: from %s import %s" % (path, node.lineno, node.module or ".",
                                                                 alias.name))
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                owner = node.value
                if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                    continue
                if node.attr in own or node.attr not in ours:
                    continue
                found.append("%s:%d: %s.%s" % (path, node.lineno, ast.unparse(owner), node.attr))
    return found


def test_no_module_uses_another_modules_private_names():
    assert offences(_sources()) == []


@pytest.mark.parametrize("planted, shown", [
    ("from xiaozhi.link import _unused_helper\n", "from xiaozhi.link import _unused_helper"),
    ("def peek(endpoint):\n    return endpoint._refusal\n", "endpoint._refusal"),
    ("def wire(part):\n    part._edge_ms = None\n", "part._edge_ms"),
])
def test_a_private_name_used_from_outside_is_named(tmp_path, planted, shown):
    # The check on a tree with one offence planted: a module of its own beside lib/'s.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "owner.py").write_text(
        "def _unused_helper():\n    pass\n\n\nclass Part:\n    def __init__(self):\n"
        "        self._refusal = None\n        self._edge_ms = 0\n")
    (tmp_path / "lib" / "user.py").write_text(planted)
    found = offences(_sources(("lib",), str(tmp_path)))
    assert len(found) == 1 and found[0].startswith("lib/user.py:") and found[0].endswith(shown), found


def test_an_instance_of_the_modules_own_class_may_be_read():
    module = ast.parse("class History:\n    def __init__(self):\n        self._items = []\n"
                       "    def __eq__(self, other):\n        return self._items == other._items\n")
    assert offences([("lib/history.py", module)]) == []
