"""make bench's stock table (tools/bench/stock.py): its rows say each target met or MISSED
from the figures, a board measured in one area shows that column, and a binary that is not
the 32-bit measuring form is refused with how to build one (the table itself needs that
binary: make bench, docs/bench/stock.md)."""

import pytest

from tests.support.firmwareharness import MICROPYTHON
from tools.bench import stock

pytestmark = pytest.mark.timeout(60)


def _board(smallest, one_area=None):
    board = {"tools": 5, "smallest": smallest * 1024, "runs": 12, "in_use": 90 * 1024,
             "simulated": 10 * 1024, "names": 900}
    if one_area is not None:
        board["one_area"] = one_area * 1024
    return board


def test_the_table_says_each_target_met_or_missed():
    figures = {"a": _board(103, 100), "b": _board(107), "c": _board(113), "d": _board(123),
               "f": _board(104), "g": _board(125), "host": (118 * 1024, 11)}
    lines = stock.table(figures)
    rows = dict((line.split(")")[0].strip("| ("), line) for line in lines if line.startswith("| ("))
    assert [line.split(")")[0].strip("| (") for line in lines if line.startswith("| (")] == [
        "a", "b", "c", "d", "e", "f", "g"]  # the host board's row in its place
    assert "| 103K (12 runs) | 100K | 90.0 KB | 10.0 KB | 80.0 KB | 900 |" in rows["a"]
    assert "| 107K (12 runs) | - |" in rows["b"]  # not measured in one area
    assert "118K (11 runs)" in rows["e"]
    said = [line for line in lines if "against" in line]
    assert said[0].startswith("Board (a)") and said[0].endswith(": met")
    assert said[1].startswith("Board (b)") and said[1].endswith(": met")
    assert said[2].startswith("Board (d)") and said[2].endswith(": MISSED")
    assert said[3].startswith("Board (f)") and said[3].endswith(": met")
    assert said[4].startswith("Board (g)") and said[4].endswith(": MISSED")
    assert said[5] == "The host board's whole session against it: 118K: MISSED"
    spare = "Board (a) with 16 KB of the stock heap to spare: completes in %dK; target: in 96K: %s"
    assert spare % (103, "MISSED") in lines
    assert spare % (96, "met") in stock.table(dict(figures, a=_board(96)))


def test_a_binary_that_is_not_the_measuring_form_is_refused(capsys):
    assert stock.print_stock(MICROPYTHON) is False  # the venv's port: 64-bit, nothing frozen
    out = capsys.readouterr().out
    assert "is not a 32-bit build with the simulated hardware frozen in" in out
    assert "MICROPY_GC_SPLIT_HEAP" in out
