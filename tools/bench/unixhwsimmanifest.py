"""The simulated hardware frozen into a MicroPython unix port: the measuring form of
make bench and `tools.sim --frozen-hardware`. On a board machine, esp32, network, camera
and neopixel are C modules in flash; frozen here, their bytecode is not on the heap
either, and the firmware's own .mpy files (staged as make deploy stages them) are what
the heap holds. asyncio is frozen as in every ESP32 build. The measuring binaries
(docs/benchmarks.md) are 32-bit unix ports of MicroPython v1.28.0 with these frozen in;
the bench says what each binary it is given is. Paths are relative to this file
(tools/bench/).
"""
include("$(MPY_DIR)/extmod/asyncio")
for name in ("machine", "esp32", "network", "camera", "neopixel", "dht", "onewire", "ds18x20",
             "simoled", "simlcd", "simspi", "siminputs", "simhistory", "hwsim"):
    module(name + ".py", base_path="../sim/hwsim")
