"""What a MicroPython unix port given to make bench is (tools/bench/heap.py's
instrument()): its version, its word size, how many areas its heap is split in, and
whether asyncio, the simulated hardware (tools/sim/hwsim) and the firmware (lib/'s
umcp) are frozen in. Run with
-X heapsize=128K and MICROPYPATH=.frozen alone (so that only a frozen module imports);
prints one JSON line.
"""
import gc
import json
import sys

v = sys.implementation.version
version = "%d.%d.%d" % v[:3] + ("-" + v[3] if len(v) > 3 and v[3] else "")
gc.collect()
areas = 4  # four or more: not even a block of 48 KB fits
for size, split in ((80, 1), (48, 2)):  # KB: more than half the heap fits only in one area
    try:
        block = bytearray(size * 1024)
        areas = split
        break
    except MemoryError:
        pass
block = None
try:
    import asyncio  # noqa: F401
    frozen_asyncio = True
except ImportError:
    frozen_asyncio = False
try:
    import machine
    hardware = hasattr(machine, "sim_attach_i2c")
except ImportError:
    hardware = False
try:
    import umcp  # noqa: F401
    firmware = True
except ImportError:
    firmware = False
print(json.dumps({"version": version, "build": sys.version, "bits": 64 if sys.maxsize > 2 ** 32 else 32,
                  "areas": areas, "asyncio": frozen_asyncio, "hardware": hardware,
                  "firmware": firmware}))
