"""The MicroPython harness can fail: proof that broken device code or a failing
device test makes compileall, rununix and runwasm.mjs exit non-zero with the
right counts, and that async tests really run inside MicroPython."""

import os
import subprocess
import sys
import textwrap

import pytest

from tools.mpy import ROOT

PYTHON = sys.executable
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")

pytestmark = pytest.mark.timeout(60)

# Two sync tests (one fails), three async ones (one fails after awaiting, so it only
# fails if its coroutine really runs); the background task, sleep and wait_for are
# what device tests use and what the WebAssembly build only allows inside a task.
MIXED = textwrap.dedent("""
    import asyncio

    def test_sync_passes():
        assert [1, 2] == [1, 2]

    def test_sync_fails():
        assert 1 == 2, "sync failure"

    async def _later(value):
        await asyncio.sleep(0.01)
        return value

    async def test_async_task_sleep_wait_for():
        done = asyncio.Event()

        async def background():
            await asyncio.sleep(0.01)
            done.set()

        asyncio.create_task(background())
        await asyncio.wait_for(done.wait(), 2)
        assert await asyncio.wait_for(_later(7), 2) == 7
        try:
            await asyncio.wait_for(_later(8), 0.001)
        except asyncio.TimeoutError:
            return
        raise AssertionError("wait_for did not time out")

    async def test_async_fails_after_await():
        assert await _later(1) == 2, "async failure"

    async def test_async_passes():
        assert await _later("x") == "x"
""")


def _write(folder, files):
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _run_unix(test_dir):
    return subprocess.run([PYTHON, "-m", "tools.mpy.rununix", "--micropython", MICROPYTHON,
                           "--tests", str(test_dir)], cwd=ROOT, capture_output=True, text=True)


def _run_wasm(test_dir):
    return subprocess.run(["node", os.path.join(ROOT, "tools", "mpy", "runwasm.mjs"),
                           "--tests", str(test_dir)], cwd=ROOT, capture_output=True, text=True)


RUNNERS = [pytest.param(_run_unix, id="unix"), pytest.param(_run_wasm, id="wasm")]


def _last_line(proc):
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_counts_failures_and_exits_non_zero(run, tmp_path):
    _write(tmp_path, {"test_mixed.py": MIXED, "helper_not_a_test.py": "def test_never(): raise ValueError\n"})
    proc = run(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last_line(proc) == "3 passed, 2 failed"
    assert "FAIL test_mixed.py::test_sync_fails" in proc.stdout
    assert "AssertionError: sync failure" in proc.stdout
    assert "FAIL test_mixed.py::test_async_fails_after_await" in proc.stdout
    assert "AssertionError: async failure" in proc.stdout
    assert "micropython 1." in proc.stdout  # it ran inside MicroPython


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_fails_modules_that_do_not_import(run, tmp_path):
    _write(tmp_path, {
        "test_fine.py": "def test_fine():\n    pass\n",
        "test_missing_import.py": "import no_such_module\n\ndef test_x():\n    pass\n",
        "test_bad_syntax.py": "def test_x(a, /):\n    pass\n",
    })
    proc = run(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last_line(proc) == "1 passed, 2 failed"
    assert "FAIL test_missing_import.py (import)" in proc.stdout
    assert "FAIL test_bad_syntax.py (import)" in proc.stdout


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_passes_a_passing_suite(run, tmp_path):
    _write(tmp_path, {"test_ok.py": "import asyncio\n\nasync def test_ok():\n    await asyncio.sleep(0)\n"})
    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _last_line(proc) == "1 passed, 0 failed"


@pytest.mark.parametrize("run", RUNNERS)
def test_runner_fails_when_nothing_ran(run, tmp_path):
    proc = run(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last_line(proc) == "0 passed, 0 failed"


def _compile_all(*dirs):
    return subprocess.run([PYTHON, "-m", "tools.mpy.compileall"] + [str(d) for d in dirs],
                          cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("source, line", [
    ("def f(a, /):\n    return a\n", 1),
    ("x = 1\nmatch x:\n    case 1:\n        pass\n", 2),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", 3),
], ids=["positional-only", "match", "except-star"])
def test_compile_all_rejects_syntax_micropython_lacks(source, line, tmp_path):
    compile(source, "cpython_accepts_it.py", "exec")
    _write(tmp_path, {"fine.py": "x = 1\n", "bad.py": source})
    proc = _compile_all(tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "FAIL %s line %d: SyntaxError" % (tmp_path / "bad.py", line) in proc.stdout
    assert "compiled 1 of 2 files, 1 failed" in proc.stdout


def test_compile_all_passes_valid_files_and_leaves_nothing_behind(tmp_path):
    (tmp_path / "pkg").mkdir()
    _write(tmp_path, {"a.py": "import micropython\n\n@micropython.native\ndef f(x):\n    return x\n",
                      "pkg/b.py": "async def g(x):\n    return {k: v for k, v in x.items()}\n"})
    proc = _compile_all(tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "compiled 2 files"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["a.py", "b.py"]


def test_compile_all_fails_when_it_finds_nothing(tmp_path):
    proc = _compile_all(tmp_path)
    assert proc.returncode == 1
    assert "no .py files" in proc.stdout


def test_the_portable_cases_wire_checks_each_message_against_the_sdk_under_cpython():
    import asyncio

    import portable_support
    from tests.support.mcpwire import SdkChecker

    portable_support.CHECKER, kept = SdkChecker, portable_support.CHECKER
    del portable_support.FAILURES[:]
    try:
        wire = portable_support.Wire()
        asyncio.run(wire.request("ping", id=1))
        assert portable_support.FAILURES == []
        asyncio.run(wire._send(['{"jsonrpc": "1.0", "id": 1, "result": {}}']))  # not JSON-RPC 2.0
        assert len(portable_support.FAILURES) == 1
    finally:
        portable_support.CHECKER = kept
        del portable_support.FAILURES[:]
