"""A module of the parts package (tools/bench/generic.py): its bytecode and what it makes at
import. Its argument (in argument.txt, as heap.run_script writes it): the module's name in
parts and the simulated modules to load first beside the usual ones (the LCD's: simspi,
simlcd; a board has machine.SPI in C). Prints bytes.
"""
import gc
import hwsim, machine, dht, onewire, ds18x20, neopixel, simoled  # noqa: E401,F401
from umcp import McpServer  # noqa: F401
import umcp.tool, umcp.schema  # noqa: E401,F401
from boards import Board  # noqa: F401
import parts  # noqa: F401

module, simulated = eval(open("argument.txt").read())
for name in simulated:
    __import__(name)
gc.collect()
before = gc.mem_alloc()
__import__("parts." + module)
gc.collect()
print(gc.mem_alloc() - before)
