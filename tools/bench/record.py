"""make bench's record: the tables a bench run prints, also written to a Markdown file.

`make bench` passes --record docs/bench/latest.md to python -m tools.bench and --record
docs/bench/fleet.md to python -m tools.bench.fleet. The file is headed with what the
figures depend on: the date, the commit, the CPU, its cores and load, the OS, and the
Python and MicroPython builds that ran. Each part of the run is a section holding what it
printed, verbatim in a fenced block: the console's table is the table, nothing is typed
twice. Docs link to the file instead of copying figures (docs/benchmarks.md says what
each table measures).
"""

import contextlib
import datetime
import json
import os
import platform
import subprocess
import sys

from . import heap
from ..mpy import ROOT, micropython_env

WASM_PACKAGE = os.path.join(ROOT, "node_modules", "@micropython", "micropython-webassembly-pyscript",
                            "package.json")
# Changes that cannot move a figure (the docs, the records themselves) do not make a run
# "uncommitted".
NOT_MEASURED = (":(exclude)docs", ":(exclude,glob)**/*.md")

_MICROPYTHON_FACTS = ("import sys\n"
                      "print(sys.version)\n"
                      "v = sys.implementation.version\n"
                      "print('%d.%d.%d' % v[:3] + ('-' + v[3] if len(v) > 3 and v[3] else ''))\n"
                      "print(64 if sys.maxsize > 2**32 else 32)\n")


class Tee:
    """A text stream that writes through to `out` and keeps a copy of everything."""

    def __init__(self, out):
        self.out = out
        self.parts = []

    def write(self, text):
        self.parts.append(text)
        return self.out.write(text)

    def flush(self):
        self.out.flush()

    def isatty(self):
        # Whoever asks (uvicorn's log formatter, for colours) asks about the real stream.
        return self.out.isatty()

    def fileno(self):
        return self.out.fileno()

    def text(self):
        return "".join(self.parts)


class Record:
    """The sections of one bench run: (title, printed text, whether the part ran)."""

    def __init__(self):
        self.sections = []

    @contextlib.contextmanager
    def section(self, title):
        """Keep what the block prints (it still reaches stdout unchanged). The block sets
        `part.ran` to False when its part did not run through."""
        tee = Tee(sys.stdout)
        part = _Part()
        try:
            with contextlib.redirect_stdout(tee):
                yield part
        finally:
            self.sections.append((title, tee.text(), part.ran))


class _Part:
    ran = True


def _run(command, env=None):
    """A command's stdout, stripped, or None when it cannot run."""
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def os_name():
    try:
        name = platform.freedesktop_os_release().get("PRETTY_NAME")
    except OSError:
        name = None
    return "%s (%s %s, %s)" % (name or platform.system(), platform.system(), platform.release(),
                               platform.machine())


def micropython_build(binary):
    """'MicroPython 1.29.0-preview (9458e3a23f on 2026-07-05), 64-bit: PATH', or why not."""
    out = _run([binary, "-c", _MICROPYTHON_FACTS], env=micropython_env([]))
    shown = os.path.relpath(binary, ROOT) if os.path.abspath(binary).startswith(ROOT + os.sep) else binary
    if not out or len(out.splitlines()) != 3:
        return "%s: did not run" % shown
    version_line, version, bits = out.splitlines()
    build = version_line.split("MicroPython", 1)[-1].strip()
    return "MicroPython %s (%s), %s-bit: %s" % (version, build, bits, shown)


def wasm_build():
    try:
        with open(WASM_PACKAGE) as f:
            return "MicroPython %s (npm @micropython/micropython-webassembly-pyscript), 32-bit" % json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return "not installed (npm ci)"


def commit():
    """The commit the working tree is at, and whether code differs from it."""
    head = _run(["git", "rev-parse", "--short=12", "HEAD"])
    if head is None:
        return "unknown (not a git checkout)"
    changed = _run(["git", "status", "--porcelain", "--untracked-files=no", "--", "."] + list(NOT_MEASURED))
    return head + (" with uncommitted changes" if changed else "")


def instrument_build(binary):
    """'MicroPython v1.28.0, 32-bit, the heap split in two areas, ...: PATH' (heap.describe),
    or why not."""
    try:
        return "%s: %s" % (heap.describe(heap.instrument(binary)), binary)
    except heap.BenchFailed:
        return "%s: did not run" % binary


def machine_facts(micropython=None, frozen=None, wasm=False, stock=None, hardware_frozen=None):
    """[(what, value)]: the figures' circumstances, taken when the run starts; `stock` and
    `hardware_frozen` the stock table's instruments, when it runs."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    facts = [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("commit", commit()),
        ("CPU", cpu_model()),
        ("cores", str(os.cpu_count() or "unknown")),
        ("load average at start", "%.2f, %.2f, %.2f (1, 5, 15 min)" % load if load else "unknown"),
        ("OS", os_name()),
        ("Python", "%s %s" % (platform.python_implementation(), platform.python_version())),
    ]
    if micropython:
        facts.append(("MicroPython unix port", micropython_build(micropython)))
    if frozen:
        facts.append(("MicroPython, firmware frozen", micropython_build(frozen)))
    if stock:
        facts.append(("MicroPython, stock table", instrument_build(stock)))
    if hardware_frozen:
        facts.append(("MicroPython, hardware frozen", instrument_build(hardware_frozen)))
    if wasm:
        facts.append(("MicroPython wasm", wasm_build()))
    return facts


def _cell(text):
    return str(text).replace("|", "\\|")


def _fence(text):
    """A backtick fence longer than any run of backticks in `text`."""
    longest, run = 0, 0
    for c in text:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _block(text):
    """`text` without its leading and trailing blank lines and line-end spaces."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def guide_link(path):
    """docs/benchmarks.md, relative to where the record at `path` lies."""
    guide = os.path.join(ROOT, "docs", "benchmarks.md")
    return os.path.relpath(guide, os.path.dirname(os.path.abspath(path))).replace(os.sep, "/")


def render(command, facts, sections, note=None, guide="../benchmarks.md"):
    """The Markdown file: a heading naming `command`, the facts as a table, `note` (a
    paragraph, e.g. that only some parts ran), then each section's printed text. `guide`:
    the link to docs/benchmarks.md from where the file lies (guide_link)."""
    lines = ["# make bench: `%s`" % command, "",
             "Written by the bench itself (tools/bench/record.py), not by hand: run it again to "
             "replace it. What each table measures and its targets: [benchmarks](%s)." % guide,
             "", "| | |", "|---|---|"]
    lines += ["| %s | %s |" % (_cell(what), _cell(value)) for what, value in facts]
    not_run = [title for title, _, ran in sections if not ran]
    if not_run:
        lines += ["", "Did not run through (the section says why): %s." % "; ".join(not_run)]
    if note:
        lines += ["", note]
    for title, text, _ in sections:
        body = _block(text) or ["(nothing printed)"]
        fence = _fence("\n".join(body))
        lines += ["", "## " + title, "", fence + "text"] + body + [fence]
    return "\n".join(lines) + "\n"


def write(path, text):
    """Write the record (its folder made if needed) -> the path as given."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path
