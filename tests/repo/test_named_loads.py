"""The device code loads much of itself by name (umcp.compat's call_then_forget and
await_then_forget, OnDemand, umcp.tool's ModuleText, __import__), which import-linter
cannot see. Read from the source (ast) of lib/, with the imports beside them, every such
load must name a module that exists, keep the device's layers (.importlinter's
device-layers contract: a lower layer never loads a higher one) and make no circle among
the modules of a package (docs/DESIGN.md, "The heap": a module loaded on demand that
imports its loader keeps it on the heap). A name built at run time ("parts." + kind)
counts as a load of every module of that package; a maker's module (umcpfw.boot's
__import__(name)) is not ours."""

import ast
import configparser
import os

import pytest

from tests.support import ROOT

LOADERS = ("call_then_forget", "await_then_forget", "OnDemand", "ModuleText", "__import__")


def _modules(lib):
    """{module name: its ast} for every .py under `lib`."""
    found = {}
    for folder, dirs, files in os.walk(lib):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, lib)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                with open(path, encoding="utf-8") as f:
                    found[".".join(parts)] = (os.path.relpath(path, os.path.dirname(lib)),
                                              ast.parse(f.read(), path))
    return found


def _strings(module):
    """The module's top-level NAME = "text" constants."""
    names = {}
    for node in module.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value.value
    return names


def _named(argument, strings):
    """(module name, whole) a load's first argument names: whole False for a prefix."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value, True
    if isinstance(argument, ast.Name) and argument.id in strings:
        return strings[argument.id], True
    if isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Add):
        prefix = _named(argument.left, strings)
        if prefix is not None:
            return prefix[0], False
    return None


def edges(modules):
    """[(path, line, from module, to module, how)]: "import" or "load" (by name)."""
    found = []
    for name, (path, tree) in modules.items():
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        strings = _strings(tree)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [(alias.name, "import") for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [(base, "import")] + [(base + "." + alias.name, "import") for alias in node.names]
            elif isinstance(node, ast.Call) and node.args:
                callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if callee in LOADERS:
                    named = _named(node.args[0], strings)
                    if named is not None:
                        target, whole = named
                        if whole:
                            targets = [(target, "load")]
                        else:
                            targets = [(other, "load") for other in modules
                                       if other.startswith(target) and other != target.rstrip(".")]
            for target, how in targets:
                if how == "import" and target not in modules:
                    continue  # MicroPython's or a name inside a module, not a module of ours
                found.append((path, node.lineno, name, target, how))
    return found


def _layers(config=os.path.join(ROOT, ".importlinter")):
    """{top package: its rank in device-layers (higher loads lower)}."""
    parser = configparser.ConfigParser()
    parser.read(config)
    rows = parser["importlinter:contract:device-layers"]["layers"].split("\n")
    ranks = {}
    for rank, row in enumerate(reversed([row for row in rows if row.strip()])):
        for package in row.split("|"):
            ranks[package.strip()] = rank
    return ranks


def _cycle(graph):
    """One circle of `graph` ({node: set of nodes}) as a list, or None."""
    state = {}

    def visit(node, path):
        state[node] = 1
        path.append(node)
        for other in sorted(graph.get(node, ())):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state:
                found = visit(other, path)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def offences(modules, ranks):
    found = []
    all_edges = edges(modules)
    siblings = {}
    for path, line, source, target, how in all_edges:
        where = "%s:%d: %s %s" % (path, line, "loads" if how == "load" else "imports", target)
        if how == "load" and target not in modules:
            found.append(where + ": no such module")
            continue
        high, low = ranks.get(source.split(".")[0]), ranks.get(target.split(".")[0])
        if how == "load" and high is not None and low is not None and low > high:
            found.append(where + ": a lower layer loads a higher one")
        # Siblings: the children of one package, each standing for what is below it.
        a, b = source.split("."), target.split(".")
        common = 0
        while common < min(len(a), len(b)) - 1 and a[common] == b[common]:
            common += 1
        if common < len(a) and common < len(b) and a[:common] == b[:common] and common > 0:
            parent = ".".join(a[:common])
            x, y = parent + "." + a[common], parent + "." + b[common]
            if x != y:
                siblings.setdefault(parent, {}).setdefault(x, set()).add(y)
    for parent in sorted(siblings):
        circle = _cycle(siblings[parent])
        if circle:
            found.append("a circle in %s: %s" % (parent, " -> ".join(circle)))
    return found


def test_every_load_by_name_is_of_a_module_in_its_layer_and_makes_no_circle():
    modules = _modules(os.path.join(ROOT, "lib"))
    loads = [edge for edge in edges(modules) if edge[4] == "load"]
    assert len(loads) > 30  # the loads this test is for are seen
    assert ("parts.setup", "parts.lcd") in [(edge[2], edge[3]) for edge in loads]  # "parts." + kind
    assert offences(modules, _layers()) == []


def _tree(tmp_path, files):
    lib = tmp_path / "lib"
    for name, text in files.items():
        path = lib / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return _modules(str(lib))


RANKS = {"app": 1, "core": 0}


@pytest.mark.parametrize("files, said", [
    ({"core/__init__.py": "", "core/a.py": 'call_then_forget("core.b", "f")\n',
      "core/b.py": "from core.a import g\n"}, "a circle in core: core.a -> core.b -> core.a"),
    ({"core/__init__.py": "", "core/a.py": '_NEXT = "core.b"\nOnDemand(_NEXT, "f", None)\n',
      "core/b.py": "def f():\n    from .a import g\n"}, "a circle in core: core.a -> core.b -> core.a"),
    ({"core/__init__.py": "", "core/a.py": 'x = __import__("core." + kind)\n',
      "core/b.py": "import core.a\n"}, "a circle in core: core.a -> core.b -> core.a"),
    ({"core/__init__.py": "", "core/a.py": 'call_then_forget("app.ui", "f")\n', "app/__init__.py": "",
      "app/ui.py": ""}, "loads app.ui: a lower layer loads a higher one"),
    ({"core/__init__.py": "", "core/a.py": 'await_then_forget("core.mising", "f")\n'},
     "loads core.mising: no such module"),
])
def test_a_planted_load_is_named(tmp_path, files, said):
    found = offences(_tree(tmp_path, files), RANKS)
    assert len(found) == 1 and found[0].endswith(said), found
