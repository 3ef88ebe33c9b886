"""Boot entry, copied to the board's /: runs the firmware (umcpfw.app.start: config.json,
then the application; what happens when it cannot start or stops is said there). At the
REPL, `import main; main.run()` runs it again. A few lines only: a board compiles
main.py from source at every boot, and the compiler's heap is heap the start needs."""

import gc

# MicroPython collects only when an allocation fails, so garbage piles up between the
# objects that stay and, once collected, leaves them scattered: a small heap ends up with
# plenty free and no piece big enough. Collecting after every 2 KB allocated (1/64 of the
# heap on a larger one, so that a PSRAM heap is not scanned too often) keeps what stays
# packed together: a plain ESP32's two 56 KB areas then serve a session 4 KB smaller
# than with 4 KB between collections (docs/benchmarks.md).
if hasattr(gc, "threshold"):
    gc.threshold(max(2048, (gc.mem_free() + gc.mem_alloc()) // 64))

from umcpfw.app import start as run

if __name__ == "__main__":
    run()
