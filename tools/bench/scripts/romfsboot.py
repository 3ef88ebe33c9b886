"""make bench's boot of the ROMFS form (tools/bench/firmware.py): the unix port has no flash,
so the image (umcp.romfs, as make deploy ROMFS=1 builds it) is read into the heap first (one
block, allocated first, so it fragments nothing) and the bytes it takes are printed for
the bench to leave out; then mounted at /rom and run in place, as a board runs it.
"""
import gc
import sys

import vfs

gc.collect()
before = gc.mem_alloc()
with open("umcp.romfs", "rb") as f:
    image = f.read()
gc.collect()
print("romfs image heap %d" % (gc.mem_alloc() - before))
vfs.mount(vfs.VfsRom(image), "/rom")
sys.path.insert(1, "/rom/lib")
import main  # noqa: E402

main.run()
