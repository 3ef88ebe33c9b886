"""Slow preparations a test only waits for, started as soon as pytest has collected a test
that needs them (tests/conftest.py's pytest_collection_finish), each on a thread of its own
at niceness 10 (its child processes inherit it: the tests that run meanwhile come first),
while the tests before it run. Background(work).start(); result() waits for what work()
returned, or raises what it raised."""

import os
import threading

NICE = 10


class Background:
    def __init__(self, work, name):
        self.work = work
        self.name = name
        self.value = self.error = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        try:
            if hasattr(os, "setpriority"):  # Linux: per thread, and inherited by its children
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        except OSError:
            pass
        try:
            self.value = self.work()
        except BaseException as e:  # the test that waits for it fails with it
            self.error = e

    def result(self, timeout=600):
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError("%s was not ready within %d s" % (self.name, timeout))
        if self.error is not None:
            raise self.error
        return self.value
