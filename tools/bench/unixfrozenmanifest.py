r"""The firmware frozen into a MicroPython unix port, for make bench's "frozen" column: the
host board's packages and the simulated hardware (C modules on a board, frozen here so
that neither's bytecode is on the heap). From a MicroPython checkout (v1.24+; the
micropython-lib submodule is not needed):
  make -C ports/unix FROZEN_MANIFEST=/abs/path/to/umcp/tools/bench/unixfrozenmanifest.py \
      CFLAGS_EXTRA=-m32 "LDFLAGS_EXTRA=-m32 -static" MICROPY_PY_FFI=0 MICROPY_PY_BTREE=0 ...
(32-bit: the options of the unix port your other measurements use, with this manifest),
then UMCP_MICROPYTHON_FROZEN=ports/unix/build-standard/micropython make bench.
Paths are relative to this file (tools/bench/).
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
