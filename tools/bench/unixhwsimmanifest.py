"""The simulated hardware frozen into a MicroPython unix port: the measuring form of
make bench and `tools.sim --frozen-hardware`. On a board machine, esp32, network, camera
and neopixel are C modules in flash; frozen here, their bytecode is not on the heap
either, and the firmware's own .mpy files (staged as make deploy stages them) are what
the heap holds. asyncio is frozen as in every ESP32 build. docs/benchmarks.md says which
build to make with it. Paths are relative to this file (tools/bench/).
"""
include("$(MPY_DIR)/extmod/asyncio")
for name in ("machine", "esp32", "network", "camera", "neopixel", "dht", "onewire", "ds18x20",
             "simoled", "simlcd", "simspi", "siminputs", "simhistory", "hwsim"):
    module(name + ".py", base_path="../sim/hwsim")
