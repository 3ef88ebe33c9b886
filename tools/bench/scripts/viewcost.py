"""The status view's cost (tools/bench/generic.py): its module, and the view on a screen part
(the generic board's display then, for the theme tool: umcpfw.boot sets it so), once
everything a boot with a status screen has loaded before it is there. Its argument (in
argument.txt, as heap.run_script writes it): the screen's entry and its runtime module in
parts ("oled", "lcd"). Prints "module view" in bytes.
"""
import asyncio
import gc
import hwsim, machine, simoled  # noqa: E401,F401
from umcp import McpServer  # noqa: F401
import umcp.tool, umcp.schema  # noqa: E401,F401
from boards import Board
from boards.setup import add_parts
import parts  # noqa: F401

entry, module = eval(open("argument.txt").read())
__import__("parts." + module)
hwsim.solder([entry])
board = Board("generic")
add_parts(board, {"parts": [entry]})


class App:
    pass


app = App()
app.board = board
app.settings = {}
asyncio.Event()  # asyncio loads its Event class at the first use; a boot has used it long before
gc.collect()
before = gc.mem_alloc()
import umcpfw.statusview  # noqa: E402
gc.collect()
module = gc.mem_alloc()
part = board.parts[0]
board.display = part
view = umcpfw.statusview.StatusView(part, app)
part.on_release = view.changed
gc.collect()
print(module - before, gc.mem_alloc() - module)
