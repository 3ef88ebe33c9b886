"""What make bench's "frozen" column needs frozen into its MicroPython unix port: asyncio,
the host board's packages and the simulated hardware (C modules on a board, frozen here
so that neither's bytecode is on the heap). The binary is one of your own, 32-bit like the
port of your other measurements; UMCP_MICROPYTHON_FROZEN or --frozen names it, and the
bench says what it is. Paths are relative to this file (tools/bench/).
"""
import os

include("$(MPY_DIR)/extmod/asyncio")
# Every package of lib/ (as firmware/manifest.py), boards apart: what deploy copies.
for name in sorted(os.listdir("../../lib")):
    if name != "boards" and os.path.isfile(os.path.join("../../lib", name, "__init__.py")):
        package(name, base_path="../../lib")
package("boards", files=("__init__.py", "setup.py", "host.py"), base_path="../../lib")
for name in ("machine", "esp32", "network", "camera", "neopixel", "dht", "onewire", "ds18x20",
             "simoled", "simlcd", "simspi", "siminputs", "simhistory", "hwsim"):
    module(name + ".py", base_path="../sim/hwsim")
