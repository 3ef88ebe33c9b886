"""The parts package's own bytes (tools/bench/generic.py): parts/__init__ with the core and a
board loaded first. Prints bytes.
"""
import gc

import hwsim, machine  # noqa: E401,F401
from umcp import McpServer  # noqa: F401
import umcp.tool, umcp.schema  # noqa: E401,F401
from boards import Board  # noqa: F401

gc.collect()
before = gc.mem_alloc()
import parts  # noqa: E402,F401
gc.collect()
print(gc.mem_alloc() - before)
