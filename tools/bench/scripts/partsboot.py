"""make bench's boot of a board with parts (tools/bench/generic.py, stock.py): the simulated
chips of config.json's parts soldered on before main.py runs (tools/sim/device.py does so
for the simulator). With the argument "qstr", each get_device_status also prints the
interned names' (qstrs') pools to the log, for the generic table: MicroPython's pools
double, so passing a pool's end costs KBs at once.
"""
import json
import sys

import hwsim

with open("config.json") as f:
    hwsim.solder(json.load(f).get("parts"))
if "qstr" in sys.argv[1:]:
    import boards
    import micropython

    _status = boards.Board.status

    def status(board):
        micropython.qstr_info()
        return _status(board)

    boards.Board.status = status
import main  # noqa: E402

main.run()
