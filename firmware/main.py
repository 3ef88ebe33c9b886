# Boot entry: read config.json (Wi-Fi, server URL, token, board) and run the application.
import gc

# MicroPython collects only when an allocation fails, so garbage piles up between the
# objects that stay and, once collected, leaves them scattered: a small heap ends up with
# plenty free and no piece big enough. Collecting after every few KB allocated keeps what
# stays packed together (about 20 KB less heap for a full session on a 32-bit build);
# 1/32 of the heap at least, so that a large (PSRAM) heap is not scanned too often.
if hasattr(gc, "threshold"):
    gc.threshold(max(4096, (gc.mem_free() + gc.mem_alloc()) // 32))

import time

from umcpfw import app
from umcpfw.app import ConfigError, log_exception

CONFIG_FILE = "config.json"
# Something that ends the application after it ran this long (a bug on a rare path, the heap
# run out where nothing could catch it) gets a fresh start; what ends it sooner would end
# the next start the same way, so the board stays at the REPL saying why, not in a loop.
RESTART_AFTER_S = 60


def load_config(path=CONFIG_FILE):
    """config.json's object; ConfigError saying what is wrong with it (umcpfw.boot reads
    it: the start's code, which leaves the heap once the application is built)."""
    from umcpfw.boot import read_config

    return read_config(path)


def setup_logging():
    """Info-level log lines where a logging module exists (CPython, micropython-lib)."""
    try:
        import logging
    except ImportError:
        return
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def run():
    """Run the firmware until it stops; again after Ctrl-C at the REPL (`main.run()`).
    True when it ran; False when config.json is unusable: its one line is printed and the
    board stays at the REPL (a SystemExit here would soft-reset into main.py again, a loop).
    Ctrl-C stops it cleanly and is raised again (the REPL shows it). Anything else that ends
    it resets the board after RESTART_AFTER_S of running; sooner, it is printed with its
    traceback and run() returns False (the REPL)."""
    setup_logging()
    started = time.time()
    try:
        app.run(load_config())
    except ConfigError as e:
        # Printed where `make repl` shows it; nothing else can run without a config.
        print("umcp cannot start:", e)
        return False
    except Exception as e:
        # Nothing should end the application but Ctrl-C.
        if time.time() - started < RESTART_AFTER_S:
            log_exception("umcp stopped at its start (a fresh start would stop the same way)", e)
            return False
        print("umcp stopped:", repr(e))  # after a good while: the board starts again
        import machine

        machine.reset()
    return True


if __name__ == "__main__":
    run()
