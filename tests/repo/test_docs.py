"""The documentation holds together: a short README, a design page without figures,
relative links and #anchors that lead somewhere, one module map that matches lib/,
firmware/, tools/ and tests/support/, package docstrings that name their modules, short
module docstrings, and no history or branch names in the pages."""

import ast
import os
import re

import pytest

from tests.support import ROOT

README = os.path.join(ROOT, "README.md")
DESIGN = os.path.join(ROOT, "docs", "DESIGN.md")
LIB = os.path.join(ROOT, "lib")
TOOLS = os.path.join(ROOT, "tools")
SUPPORT = os.path.join(ROOT, "tests", "support")
DESIGN_LINES = 300
# A size or a heap figure ("12 KB", "96K", "256 bytes"): docs/bench/ and benchmarks.md hold them.
FIGURE = re.compile(r"[0-9]+(\.[0-9]+)? ?(KB|K\b|bytes)")
DOCSTRING_LINES = 15
SKIP_DIRS = {".git", ".venv", "node_modules", "build", "__pycache__", ".pytest_cache"}

LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def markdown_files():
    """Every Markdown file of the repository (README, CHANGES, docs/, notes beside code)."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return found


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if fence is None:
            opening = re.match(r"(`{3,}|~{3,})", stripped)
            if opening:
                fence = opening.group(1)
                continue
            yield number, re.sub(r"(`+)(?:(?!\1).)+?\1", "``", line)
        elif stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            fence = None


def slug(heading):
    """GitHub's anchor for a heading: its rendered text lowercased, punctuation other than
    '-' and '_' dropped, spaces made hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text):
    """Every #anchor a Markdown text offers (repeated headings get -1, -2, ... as on GitHub)."""
    seen = {}
    found = set()
    for _, line in prose_lines_raw(text):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else "%s-%d" % (base, count))
        found.update(HTML_ANCHOR.findall(line))
    return found


def prose_lines_raw(text):
    """Lines outside fenced code blocks, inline code kept (a heading's slug uses it)."""
    lines = text.splitlines()
    for number, _ in prose_lines(text):
        yield number, lines[number - 1]


def links(text):
    """(line number, target) of every link and reference definition outside code."""
    for number, line in prose_lines(text):
        for match in LINK.finditer(line):
            yield number, match.group(2)
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group(1)


def broken_links(path, root=ROOT):
    """['file:line: target (why)'] for each relative link of `path` that leads nowhere."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems = []
    for number, target in links(text):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue  # https:, mailto: ...: not ours to check
        where = "%s:%d: %s" % (os.path.relpath(path, root), number, target)
        file_part, _, anchor = target.partition("#")
        destination = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not (destination == root or destination.startswith(root + os.sep)):
            problems.append(where + " (outside the repository)")
            continue
        if not os.path.exists(destination):
            problems.append(where + " (no such file)")
            continue
        if anchor:
            if not destination.endswith(".md"):
                problems.append(where + " (an anchor into a file that is not Markdown)")
                continue
            with open(destination, encoding="utf-8") as f:
                offered = anchors(f.read())
            if anchor not in offered:
                problems.append(where + " (no heading with that anchor)")
    return problems


def test_the_readme_is_at_most_200_lines():
    with open(README, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) <= 200, "README.md has %d lines: move the detail into docs/" % len(lines)


def test_every_relative_link_and_anchor_in_the_docs_resolves():
    files = markdown_files()
    names = {os.path.relpath(f, ROOT) for f in files}
    assert {"README.md", "CHANGES.md", os.path.join("docs", "DESIGN.md"),
            os.path.join("docs", "CONTRIBUTING.md")} <= names
    problems = [problem for path in files for problem in broken_links(path)]
    assert not problems, "links that lead nowhere:\n" + "\n".join(problems)


def test_the_readme_links_every_topic_page():
    with open(README, encoding="utf-8") as f:
        targets = {target.partition("#")[0] for _, target in links(f.read())}
    pages = {"docs/" + name for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md")}
    assert pages - targets == set(), "topic pages the README does not link"


def test_the_link_checker_finds_what_is_broken(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        "# A page: `config.json` and more\n\n## Twice\n\n## Twice\n\n"
        "```sh\n# not a heading\n[inside code](missing.md)\n```\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/page.md#a-page-configjson-and-more) [dup](docs/page.md#twice-1) "
        "[web](https://example.org/x.md) `[code](missing.md)`\n"
        "[gone](docs/gone.md) [bad anchor](docs/page.md#not-a-heading) [here](#nowhere)\n"
        "[out](../../etc/passwd)\n[ref]: docs/also-gone.md\n")
    problems = broken_links(str(tmp_path / "README.md"), root=str(tmp_path))
    assert [p.split(": ", 1)[1] for p in problems] == [
        "docs/gone.md (no such file)",
        "docs/page.md#not-a-heading (no heading with that anchor)",
        "#nowhere (no heading with that anchor)",
        "../../etc/passwd (outside the repository)",
        "docs/also-gone.md (no such file)",
    ]
    assert broken_links(str(tmp_path / "docs" / "page.md"), root=str(tmp_path)) == []


def test_slugs_follow_githubs_rules():
    assert slug("How the firmware takes the heap") == "how-the-firmware-takes-the-heap"
    assert slug("config.json") == "configjson"
    assert slug("umcp (lib/umcp)") == "umcp-libumcp"
    assert slug("Settings, the OTA check and upgrades") == "settings-the-ota-check-and-upgrades"
    assert slug("The backend's web console (tools/backend/web.py, tools/backend/static/)") == \
        "the-backends-web-console-toolsbackendwebpy-toolsbackendstatic"
    assert slug("`self.get_device_status` and [links](x.md)") == "selfget_device_status-and-links"


def design_map():
    """The module map's code block in docs/DESIGN.md, as lines."""
    with open(DESIGN, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Where things live"):]
    block = section[section.index("```\n") + 4:]
    return block[:block.index("```")].splitlines()


def mapped_modules(lines, top):
    """{package: module names} the map shows under `top` (e.g. "lib/"): the .py files named
    on a package's lines, a path-qualified name (tools/board/roots.py) not counted. A
    package is its path below `top` ("sim/hwsim"), "" for `top` itself; a package's header
    is indented two spaces a level, and its lines run to the next header."""
    found, package, inside, path = {}, None, False, []
    for line in lines:
        if line and not line.startswith(" "):
            inside, package, path = line.startswith(top), "", []
            if inside:
                found[package] = set()
        if not inside:
            continue
        header = re.match(r"^((?:  )+)(\w+)/", line)
        if header:
            path = path[:len(header.group(1)) // 2 - 1] + [header.group(2)]
            package = "/".join(path)
            found[package] = set()
        found[package].update(re.findall(r"(?<![\w/.])(\w+)\.py\b", line))
    return found


def package_modules(package_dir):
    return {name[:-3] for name in os.listdir(package_dir) if name.endswith(".py")}


def test_the_module_map_names_every_device_module_and_no_other():
    lines = design_map()
    device = mapped_modules(lines, "lib/")
    packages = sorted(name for name in os.listdir(LIB) if os.path.isdir(os.path.join(LIB, name))
                      and name != "__pycache__")
    assert sorted(p for p in device if p) == packages
    for package in packages:
        actual = package_modules(os.path.join(LIB, package)) - {"__init__"}
        assert device[package] - {"__init__"} == actual, "lib/%s/ in the map of docs/DESIGN.md" % package
    firmware = mapped_modules(lines, "firmware/")[""]
    assert firmware == package_modules(os.path.join(ROOT, "firmware"))


def host_packages(top):
    """{package path below `top`: its module names but __init__} of every folder of `top`
    that holds Python files (static files, caches and node_modules aside)."""
    found = {}
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        names = {name[:-3] for name in files if name.endswith(".py")} - {"__init__"}
        if names or "__init__.py" in files:
            found[os.path.relpath(folder, top).replace(os.sep, "/")
                  if folder != top else ""] = names
    return found


def test_the_module_map_names_every_host_module_and_no_other():
    lines = design_map()
    mapped = mapped_modules(lines, "tools/")
    assert {k: v - {"__init__"} for k, v in mapped.items()} == host_packages(TOOLS), \
        "tools/ in the map of docs/DESIGN.md"
    support = {k[len("support"):].lstrip("/"): v - {"__init__"}
               for k, v in mapped_modules(lines, "tests/").items() if k.startswith("support")}
    assert support == host_packages(SUPPORT), "tests/support/ in the map of docs/DESIGN.md"


def test_the_map_checker_sees_a_stale_name():
    lines = ["lib/   the board", "  devsvc/    services", "    ota.py   old (see tools/x/ota2.py)",
             "firmware/   x", "  main.py",
             "tools/   host", "  a.py", "  sim/   b.py,", "          c.py", "    hw/   d.py",
             "  hub/   e.py"]
    assert mapped_modules(lines, "lib/") == {"": set(), "devsvc": {"ota"}}
    assert mapped_modules(lines, "firmware/") == {"": {"main"}}
    assert mapped_modules(lines, "tools/") == {"": {"a"}, "sim": {"b", "c"}, "sim/hw": {"d"},
                                               "hub": {"e"}}


def test_the_design_page_is_short_and_holds_no_figures():
    with open(DESIGN, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) <= DESIGN_LINES, "docs/DESIGN.md has %d lines: move detail to its topic page" % len(lines)
    figures = ["%d: %s" % (n, line) for n, line in enumerate(lines, 1) if FIGURE.search(line)]
    assert not figures, "figures in docs/DESIGN.md (they belong in docs/benchmarks.md):\n" + "\n".join(figures)


def test_the_figure_pattern_finds_sizes():
    assert [bool(FIGURE.search(t)) for t in ("94 KB", "1.5 KB", "102K to 96K", "256 bytes",
                                             "the K of", "2 areas", "8000")] == \
        [True, True, True, True, False, False, False]


@pytest.mark.parametrize("package", sorted(
    name for name in os.listdir(LIB) if os.path.isfile(os.path.join(LIB, name, "__init__.py"))))
def test_each_device_package_docstring_names_its_modules(package):
    with open(os.path.join(LIB, package, "__init__.py"), encoding="utf-8") as f:
        docstring = ast.get_docstring(ast.parse(f.read())) or ""
    missing = [name for name in sorted(package_modules(os.path.join(LIB, package)) - {"__init__"})
               if "`%s`" % name not in docstring]
    assert not missing, "lib/%s/__init__.py's docstring does not name %s" % (package, ", ".join(missing))


def device_modules():
    """Every device file: lib/'s modules and firmware/main.py."""
    found = [os.path.join(ROOT, "firmware", "main.py")]
    for folder, dirs, files in os.walk(LIB):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return found


@pytest.mark.parametrize("path", device_modules(), ids=lambda p: os.path.relpath(p, ROOT))
def test_each_device_module_states_its_contract_in_a_docstring(path):
    # The docstring is the module's contract (DESIGN.md keeps only the map and what no
    # docstring can hold); a compiled module drops it, so it costs a board no heap.
    with open(path, encoding="utf-8") as f:
        docstring = ast.get_docstring(ast.parse(f.read())) or ""
    assert len(docstring.split()) >= 8, "%s has no docstring saying what it is for" % os.path.relpath(path, ROOT)


def python_modules():
    """Every module of lib/, firmware/, tools/ and tests/support/."""
    found = []
    for top in (LIB, os.path.join(ROOT, "firmware"), TOOLS, SUPPORT):
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return found


def docstring_lines(source):
    """How many lines a module's docstring spans (0 without one)."""
    docstring = ast.get_docstring(ast.parse(source), clean=False)
    return len(docstring.strip("\n").splitlines()) if docstring else 0


@pytest.mark.parametrize("path", python_modules(), ids=lambda p: os.path.relpath(p, ROOT))
def test_each_module_docstring_is_at_most_15_lines(path):
    # A module's docstring says what it is for and its contract; the rest belongs in its
    # classes' docstrings or on a docs/ page.
    with open(path, encoding="utf-8") as f:
        lines = docstring_lines(f.read())
    assert lines <= DOCSTRING_LINES, "%s: a module docstring of %d lines (at most %d)" % (
        os.path.relpath(path, ROOT), lines, DOCSTRING_LINES)


def test_the_docstring_counter_counts_lines():
    assert docstring_lines('"""One line."""\nx = 1\n') == 1
    assert docstring_lines('"""First.\n\nThird.\n"""\n') == 3
    assert docstring_lines("x = 1\n") == 0


def test_the_pages_carry_no_branch_names_or_branch_history():
    pattern = re.compile(r"\bi\d+dev\b|\bthis branch\b|\bon branch\b|\buntil it is merged\b", re.I)
    hits = []
    for path in markdown_files():
        if os.path.basename(path) == "CHANGES.md":
            continue  # history belongs there
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if pattern.search(line):
                    hits.append("%s:%d: %s" % (os.path.relpath(path, ROOT), number, line.strip()))
    assert not hits, "history in the docs (CHANGES.md and git log hold it):\n" + "\n".join(hits)
