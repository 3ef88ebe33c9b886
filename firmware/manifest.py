# Freezes umcp into a custom MicroPython build of your own (this file as its frozen
# manifest), so its bytecode runs from flash and the heap stays free for data. Relative
# paths below are relative to this file (firmware/). main.py stays on the board's
# filesystem (make deploy copies it with config.json); it imports the frozen app.
# Another manifest may include this one for a single board:
#   include("/abs/path/to/umcp/firmware/manifest.py", board="esp32_s3_box3")
import os

options.defaults(board=None)

include("$(PORT_DIR)/boards/manifest.py")  # the port's own frozen modules (asyncio, ...)

# Every package of lib/ under its import name (umcp, xiaozhi, unet, ...), boards apart.
for name in sorted(os.listdir("../lib")):
    if name != "boards" and os.path.isfile(os.path.join("../lib", name, "__init__.py")):
        package(name, base_path="../lib")

if options.board:
    package("boards", files=("__init__.py", "setup.py", options.board + ".py"), base_path="../lib")
else:  # every real board; config.json picks one at boot
    package("boards", files=sorted(n for n in os.listdir("../lib/boards")
                                   if n.endswith(".py") and n != "host.py"), base_path="../lib")
