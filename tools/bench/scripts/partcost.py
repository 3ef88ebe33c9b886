"""One part type's cost (tools/bench/generic.py): everything it needs loaded first (the core,
a board, a server, the parts package, the module of its type, the simulated chip) and a
first part of the type made (what any boot leaves, such as the names of parts.check and
parts.setup, interned for good); then a part made on a board of its own and its tools
registered with a server of its own (with the simulated Pin, PWM, ADC... objects it made,
a few bytes of C on a board: an upper bound); then its resource. Its argument (in
argument.txt, as heap.run_script writes it): the entry and its runtime module. Prints
"part resource" in bytes.
"""
import gc
import hwsim, machine, dht, onewire, ds18x20, neopixel, simoled  # noqa: E401,F401
from umcp import McpServer
import umcp.tool, umcp.schema, umcp.resource  # noqa: E401,F401
from boards import Board
from boards.setup import add_parts
import parts  # noqa: F401
from parts.toolset import resources  # (call_then_forget drops it again: only its code is kept)

entry, module = eval(open("argument.txt").read())
hwsim.solder([entry])
__import__("parts." + module)
first = Board("generic")
add_parts(first, {"parts": [entry]})
first.register_tools(McpServer("bench", "1"))
server = McpServer("bench", "1")
board = Board("generic")
gc.collect()
before = gc.mem_alloc()
add_parts(board, {"parts": [entry]})
board.register_tools(server)
gc.collect()
after = gc.mem_alloc()
resources(board.parts, server)  # the sensors' resources, as a client's first resources/* adds them
gc.collect()
print(after - before, gc.mem_alloc() - after)
