# Freezes umcp into a custom MicroPython build, so its bytecode runs from flash and the
# heap stays free for data. From a MicroPython checkout with ESP-IDF 5.x set up:
#   cd ports/esp32
#   make BOARD=ESP32_GENERIC_S3 FROZEN_MANIFEST=/abs/path/to/umcp/firmware/manifest.py
# Relative paths below are relative to this file (firmware/). main.py stays on the
# board's filesystem (make deploy copies it with config.json); it imports the frozen app.
# Another manifest may include this one for a single board:
#   include("/abs/path/to/umcp/firmware/manifest.py", board="esp32_s3_box3")
import os

options.defaults(board=None)

include("$(PORT_DIR)/boards/manifest.py")  # the port's own frozen modules (asyncio, ...)

freeze("../lib")  # umcp/, wsclient, xiaozhi, drivers/... under their import names

for name in sorted(os.listdir(".")):
    if name.endswith(".py") and name not in ("main.py", "boot.py", "manifest.py"):
        module(name)

if options.board:
    package("boards", files=("__init__.py", options.board + ".py"), base_path="..")
else:  # every real board; config.json picks one at boot
    package("boards", files=sorted(n for n in os.listdir("../boards")
                                   if n.endswith(".py") and n != "host.py"), base_path="..")
