"""What the simulated hardware holds on the heap beside the host board (on a board nothing:
C modules, silicon): its modules, then what it keeps of the board's start-up (register
files, bounded histories) once the board itself is dropped. Prints "modules state" in
bytes. make bench's firmware table (tools/bench/firmware.py) runs it.
"""
import gc

gc.collect()
base = gc.mem_alloc()
import hwsim, machine, esp32, network, camera, neopixel  # noqa: E401,E402,F401
gc.collect()
modules = gc.mem_alloc()
from boards import host  # noqa: E402
import boards.setup  # noqa: E402,F401  (what create() loads of the firmware: not the hardware's)
gc.collect()
before = gc.mem_alloc()
board = host.create({}, None)
board = None
gc.collect()
print(modules - base, gc.mem_alloc() - before)
