"""The simulated hardware's heap in a board's runs (tools/bench/generic.py): its modules, and
what the board's start-up leaves in them (on a board nothing: C modules and silicon). Its
argument (in argument.txt, as heap.run_script writes it): the board module's name and
config.json's parts. Prints "modules state" in bytes.
"""
import gc
board_module, parts = eval(open("argument.txt").read())
gc.collect()
base = gc.mem_alloc()
import hwsim, machine, esp32, network, camera, neopixel, dht, onewire, ds18x20, simoled, simhistory  # noqa
gc.collect()
modules = gc.mem_alloc()
import boards  # noqa: E402,F401
create = __import__(board_module, None, None, ["create"]).create
# A first start-up loads every firmware module the board needs (not the hardware's share).
hwsim.solder(parts)
board = create({"parts": parts}, None)
board = None
hwsim.reset()
gc.collect()
before = gc.mem_alloc()
hwsim.solder(parts)
board = create({"parts": parts}, None)
board = None
gc.collect()
print(modules - base, gc.mem_alloc() - before)
