"""An SPI LCD part's driver buffers, allocated once (what a part's figure holds of them;
tools/bench/generic.py). Its argument (in argument.txt, as heap.run_script writes it): the
entry. Prints bytes.
"""
import hwsim
from boards import Board
from boards.setup import add_parts
from drivers.st7789 import STRIP_ROWS

entry = eval(open("argument.txt").read())
hwsim.solder([entry])
board = Board("generic")
add_parts(board, {"parts": [entry]})
lcd = board.parts[0].display
print(lcd.width * STRIP_ROWS * 2 + (lcd.width + 7) // 8 * 8 + 4 + 4)
