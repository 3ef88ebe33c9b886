"""No import circles where import-linter cannot look: the simulated hardware
(tools/sim/hwsim, modules the simulator puts on the device's path under the board's own
names: machine, simspi, hwsim) and the tests' shared code (tests/support). Every import
counts, at the top of a module or inside a function (a load on first use is an import
too). .importlinter's acyclic contracts hold lib/ and tools/ to the same rule."""

import ast
import os

from tests.support import ROOT

# (folder, the package its modules are in: "" for modules imported by their own names)
PLACES = [("tools/sim/hwsim", ""), ("tests/support", "tests.support")]


def imports(folder, package):
    """{module: the set of the folder's modules it imports}, read from the source (ast)."""
    names = {}
    for name in os.listdir(folder):
        if name.endswith(".py"):
            module = name[:-3]
            names[(package + "." + module).lstrip(".") if module != "__init__" else package] = name
    graph = {}
    for module, name in names.items():
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            tree = ast.parse(f.read(), name)
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: inside the package
                    base = (package + "." + base).rstrip(".")
                found.add(base)
                found.update(base + "." + alias.name for alias in node.names)
        graph[module] = {other for other in found if other in names and other != module}
    return graph


def circles(graph):
    """Each circle as the list of its modules (Tarjan's strongly connected components)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_circles_in_the_simulated_hardware_or_the_test_support():
    for folder, package in PLACES:
        graph = imports(os.path.join(ROOT, folder), package)
        assert len(graph) > 3, folder  # the folder was read
        assert circles(graph) == [], folder


def test_a_planted_circle_is_found(tmp_path):
    # simspi imported machine while machine loads simspi: the circle issue 43 broke.
    (tmp_path / "machine.py").write_text("def __getattr__(name):\n    from simspi import SPI\n    return SPI\n")
    (tmp_path / "simspi.py").write_text("import machine\n")
    (tmp_path / "hwsim.py").write_text("import machine\n")
    graph = imports(str(tmp_path), "")
    assert graph == {"machine": {"simspi"}, "simspi": {"machine"}, "hwsim": {"machine"}}
    assert circles(graph) == [["machine", "simspi"]]
