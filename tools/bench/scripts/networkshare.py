"""What importing the simulated `network` module costs once the rest of the simulated
hardware is loaded (mcp_http sets the host name with it, on the host board too, whose
firmware otherwise never imports it; a board has it in flash): prints bytes. make bench's
firmware table (tools/bench/firmware.py) runs it.
"""
import gc

import machine, esp32, camera, neopixel  # noqa: E401,F401  (hwsim imports network)
gc.collect()
before = gc.mem_alloc()
import network  # noqa: E402
network.hostname("umcp-123456")
gc.collect()
print(gc.mem_alloc() - before)
