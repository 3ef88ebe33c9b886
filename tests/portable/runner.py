# Runs the portable test cases inside MicroPython (unix port and WebAssembly build).
#
# A test module is a `test_*.py` file in the test folder; its tests are the
# module-level functions named `test_*`, plain or `async def`. A test passes when
# it returns (an async one: when it completes within TEST_TIMEOUT_S); anything it
# raises fails it, and a module that does not import is a failure too. pytest
# collects the same cases through `discover` and `tests_in`
# (tests/test_portable_on_cpython.py).
#
#   micropython tests/portable/runner.py TEST_DIR    (module path in MICROPYPATH)
#   await asyncio.create_task(runner.run_dir(TEST_DIR))    (WebAssembly build)
import os
import sys

import asyncio

TEST_TIMEOUT_S = 30


def discover(test_dir):
    """Names of the test modules in `test_dir`, sorted."""
    return sorted(f[:-3] for f in os.listdir(test_dir) if f.startswith("test_") and f.endswith(".py"))


def tests_in(module):
    """[(name, function)] of the module's tests, sorted by name."""
    found = []
    for name in sorted(dir(module)):
        value = getattr(module, name)
        if name.startswith("test_") and callable(value):
            found.append((name, value))
    return found


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def fail(self, what, exc):
        self.failed += 1
        print("FAIL " + what)
        sys.print_exception(exc)

    def ok(self):
        # Nothing ran is a failure too: a broken discovery must not look like success.
        return self.failed == 0 and self.passed > 0

    def summary(self):
        return "%d passed, %d failed" % (self.passed, self.failed)


async def run_test(function):
    result = function()
    if hasattr(result, "send"):  # an async def test: run its coroutine
        await asyncio.wait_for(result, TEST_TIMEOUT_S)


async def run_module(name, tally):
    try:
        module = __import__(name)
    except Exception as e:  # includes SyntaxError: the module did not load
        tally.fail(name + ".py (import)", e)
        return
    for test_name, function in tests_in(module):
        try:
            await run_test(function)
        except (Exception, asyncio.CancelledError) as e:
            tally.fail(name + ".py::" + test_name, e)
        else:
            tally.passed += 1


async def run_dir(test_dir):
    """Run every test module in `test_dir`; print failures and the summary; return the Tally."""
    impl = sys.implementation
    print("%s %s (%s)" % (impl.name, ".".join(str(n) for n in impl.version[:3]), getattr(impl, "_machine", "")))
    if test_dir not in sys.path:
        sys.path.insert(0, test_dir)
    tally = Tally()
    for name in discover(test_dir):
        await run_module(name, tally)
    print(tally.summary())
    return tally


def main(test_dir):
    tally = asyncio.run(run_dir(test_dir))
    sys.exit(0 if tally.ok() else 1)


if __name__ == "__main__":
    main(sys.argv[1])
