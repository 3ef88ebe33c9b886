"""The REPL as a maker uses it (mpremote's REPL on a board), here the MicroPython unix
port's own REPL on a pseudo-terminal: main.py run as a board runs it at boot, a bad
config.json leaving a usable prompt (no soft-reset loop), Ctrl-C typed at the terminal
stopping the firmware cleanly (its WebSocket closed with a goodbye), and `main.run()` again
in the same interpreter serving the same tools once each, without a second log sink."""

import asyncio
import fcntl
import json
import os
import pty
import re
import select
import subprocess
import termios
import time

import pytest

from tests.support.firmwareharness import MICROPYTHON, ROOT, TOKEN, Backend, run
from tools.mpy import micropython_env

pytestmark = pytest.mark.timeout(120)

PROMPT = ">>> "
WAIT_S = 20


class Terminal:
    """The unix port on a pseudo-terminal that is its controlling terminal, as a shell
    would start it: what is typed goes to its REPL, Ctrl-C becomes SIGINT."""

    def __init__(self, cwd, *args):
        self.master, slave = pty.openpty()
        path = [os.path.join(ROOT, "firmware"), os.path.join(ROOT, "lib"),
                os.path.join(ROOT, "tools", "sim", "hwsim")]
        self.proc = subprocess.Popen(
            [MICROPYTHON] + list(args), cwd=str(cwd), env=micropython_env(path),
            stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.seen = ""

    def read_until(self, pattern, timeout=WAIT_S):
        """Everything the terminal showed up to and including `pattern` (a regex), from
        where the last read ended."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.seen)
            if match:
                shown, self.seen = self.seen[:match.end()], self.seen[match.end():]
                return shown
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]:
                raise AssertionError("%r never showed; the terminal said:\n%s" % (pattern, self.seen))
            if select.select([self.master], [], [], min(left, 0.2))[0]:
                try:
                    self.seen += os.read(self.master, 4096).decode(errors="replace")
                except OSError:  # the process is gone
                    pass

    async def read_until_async(self, pattern, timeout=WAIT_S):
        return await asyncio.get_running_loop().run_in_executor(None, self.read_until, pattern, timeout)

    def type(self, text):
        os.write(self.master, text.encode())

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.master)


def write_config(folder, config):
    (folder / "config.json").write_text(json.dumps(config))


def test_a_bad_config_leaves_a_usable_prompt(tmp_path):
    # As a board boots: main.py runs, then the REPL; with sys.exit() the process would end
    # here (on a board: a soft reset that runs main.py again, for ever).
    terminal = Terminal(tmp_path, "-i", os.path.join(ROOT, "firmware", "main.py"))
    try:
        shown = terminal.read_until(PROMPT)
        assert "umcp cannot start: cannot read config.json: write one and copy it to the board" in shown
        assert "Traceback" not in shown
        terminal.type("print(6 * 7)\r")
        assert "42" in terminal.read_until(PROMPT)
        # A config that names a part wrongly: one line again, and the prompt.
        write_config(tmp_path, {"board": "generic", "url": "ws://127.0.0.1:9/", "token": "t",
                                "parts": [{"type": "relay", "name": "lamp", "pin": 34}]})
        terminal.type("import main; main.run()\r")
        shown = terminal.read_until(PROMPT)
        assert "umcp cannot start: config.json parts[0] (relay 'lamp'): pin: GPIO 34 is input-only" in shown
        assert "False" in shown and "Traceback" not in shown
        terminal.type("print('still here')\r")
        assert "still here" in terminal.read_until(PROMPT)
    finally:
        terminal.close()


def test_ctrl_c_stops_cleanly_and_the_app_runs_again(tmp_path):
    async def scenario():
        backend = await Backend().start()
        write_config(tmp_path, {"board": "host", "url": backend.url, "token": TOKEN,
                                "backoff_min": 0.05, "backoff_max": 0.3})
        terminal = Terminal(tmp_path)
        try:
            await terminal.read_until_async(PROMPT)
            terminal.type("import main; main.run()\r")
            listed = []
            for run_number in (1, 2):
                device = await backend.next_device(WAIT_S)
                await device.initialize()
                tools, _ = await device.list_tools(with_user_tools=True)
                listed.append([tool["name"] for tool in tools])
                assert (await device.call_json("self.audio_speaker.set_volume", {"volume": 20 + run_number})) is True
                ended = len(backend.close_codes)
                # Ctrl-C once the board idles, as a maker types it: the unix port's SIGINT
                # jumps out of wherever the interpreter is, and one that lands inside a
                # collection (which follows an answer within its 2 KB of allocations)
                # leaves the heap locked ("heap is locked" instead of KeyboardInterrupt).
                # A board's Ctrl-C waits for a safe point.
                await asyncio.sleep(0.5)
                terminal.type("\x03")  # Ctrl-C at the terminal: SIGINT
                shown = await terminal.read_until_async(PROMPT)
                assert "KeyboardInterrupt" in shown
                for _ in range(100):  # the goodbye: a WebSocket close from the device
                    if len(backend.close_codes) > ended:
                        break
                    await asyncio.sleep(0.05)
                assert backend.close_codes[ended:] == [1000], (backend.close_codes, terminal.seen)
                if run_number == 1:
                    terminal.type("main.run()\r")
            assert listed[0] == listed[1]  # the same tools, each once
            assert len(set(listed[0])) == len(listed[0]) and "self.get_device_status" in listed[0]
            # Nothing of the two runs is left: no log sink, no task.
            terminal.type("import umcp.compat, asyncio; print('sinks', len(umcp.compat._sinks), "
                          "'queued', asyncio.core._task_queue.peek())\r")
            assert "sinks 0 queued None" in await terminal.read_until_async(PROMPT)
        finally:
            terminal.close()
            await backend.stop()

    run(scenario(), timeout=100)
