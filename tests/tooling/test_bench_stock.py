"""make bench's stock table (tools/bench/stock.py): its rows say each target met or MISSED
from the figures against issue 44's targets, a board measured in one area shows that
column, and a binary that is not the measuring form (32-bit, split heap, hardware frozen)
is refused in one line saying what it is (the table itself needs that binary: make bench,
docs/bench/stock.md)."""

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
               "f": _board(104), "g": _board(125), "h": _board(102), "i": _board(110), "host": (118 * 1024, 11)}
    lines = stock.table(figures)
    rows = dict((line.split(")")[0].strip("| ("), line) for line in lines if line.startswith("| ("))
    assert [line.split(")")[0].strip("| (") for line in lines if line.startswith("| (")] == [
        "a", "b", "c", "d", "e", "f", "g", "h", "i"]  # the host board's row in its place
    assert "| 103K (12 runs) | 100K | 90.0 KB | 10.0 KB | 80.0 KB | 900 |" in rows["a"]
    assert "| 107K (12 runs) | - |" in rows["b"]  # not measured in one area
    assert "118K (11 runs)" in rows["e"]
    said = dict((line.split(")")[0][len("Board ("):], line) for line in lines if line.startswith("Board ("))
    assert sorted(said) == ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
    assert said["a"] == "Board (a) completes in 103K; target (v1.28.0, two areas): in 96K: MISSED"
    assert said["b"].endswith("in 96K: MISSED")
    assert said["c"].endswith("in 104K: MISSED")
    assert said["d"].endswith("in 112K: MISSED")
    assert said["e"] == "Board (e) completes in 118K; target (v1.28.0, two areas): in 112K: MISSED"
    assert said["f"].endswith("in 112K: met")
    assert said["g"].endswith("in 112K: MISSED")
    assert said["h"].endswith("in 96K: MISSED")  # issue 42's board: (a)'s target
    assert said["i"].endswith("in 112K: met")  # over HTTP: the stock heap itself
    assert stock.table(dict(figures, i=_board(113)))[-1].endswith("in 112K: MISSED")
    met = stock.table(dict(figures, a=_board(96), c=_board(104)))
    assert "Board (a) completes in 96K; target (v1.28.0, two areas): in 96K: met" in met
    assert "Board (c) completes in 104K; target (v1.28.0, two areas): in 104K: met" in met


def test_the_http_board_s_session_runs_over_http_and_reads_the_heap(tmp_path):
    # Board (i)'s session (tools/bench/httpboard.py) in the venv's MicroPython: the listing,
    # the heap read over the board's own endpoint, each call, the names interned.
    from tools.bench import generic, httpboard

    stage_dir = generic.stage("generic", str(tmp_path / "stage"), "mpy")
    row, = [row for row in stock.BOARDS if row[0] == "i"]
    figures = httpboard.run(MICROPYTHON, stage_dir, 2 * 1024 * 1024, "mpy", stock.board_config(row[2]), row[3],
                            qstr=True)
    assert figures["tools"] == 8  # self.get_device_status, the alarms' three, the lamp's three, the room's
    assert 20 * 1024 < figures["boot"] < 1024 * 1024 and 20 * 1024 < figures["session"] < 1024 * 1024
    assert figures["qstrs_boot"][1] > 100 and figures["qstrs_session"][1] >= figures["qstrs_boot"][1]
    with pytest.raises(stock.BoardFailed, match="self.lamp.no_such_tool"):
        httpboard.run(MICROPYTHON, stage_dir, 2 * 1024 * 1024, "mpy", stock.board_config(row[2]),
                      [("self.lamp.no_such_tool", {})])


def _fuzz(**changes):
    said = {"heapsize": 128 * 1024, "limit": 4096, "sent": 5000, "requests": 3312, "answered": 3312,
            "unanswered": 0, "out_of_memory": 0, "null_errors": 919, "expected_null": 919, "drops": 0,
            "bad": 0, "problems": [], "invalid": [1007] * 10}
    return dict(said, **changes)


@pytest.mark.parametrize("changes, verdict", [
    ({}, "met"),
    ({"invalid": [1007] * 9 + [None]}, "MISSED"),  # one frame taken as text
    ({"drops": 1}, "MISSED"),
    ({"answered": 3311, "unanswered": 1}, "MISSED"),
    ({"null_errors": 918}, "MISSED"),
    ({"invalid": []}, "MISSED"),  # none sent: nothing shown
])
def test_the_fuzz_is_held_against_its_target(changes, verdict):
    figures = {key: _board(96) for key in "abcdfghi"}
    lines = stock.table(dict(figures, host=(112 * 1024, 11), fuzz=_fuzz(**changes)))
    assert lines[-1] == "Fuzz target: every id exact, no link dropped, 1007 for every frame that is not UTF-8: " + verdict
    assert "Fuzz, the host board at 128K ((e)'s target plus 16 KB): 5000 hostile messages" in "\n".join(lines)
    invalid = _fuzz(**changes)["invalid"]
    assert "%d of %d text frames that are not UTF-8" % (invalid.count(1007), len(invalid)) in "\n".join(lines)


def test_a_binary_that_is_not_the_measuring_form_is_refused_in_one_line(capsys):
    assert stock.print_stock(MICROPYTHON) is False  # the venv's port: 64-bit, one area, nothing frozen
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("the stock table refuses its instrument: %s is MicroPython v" % MICROPYTHON)
    assert out[0].endswith(": 64-bit, not 32-bit (an ESP32's object sizes); the heap in one area, not the heap split "
                           "in two areas; without tools/sim/hwsim frozen in")


def test_without_its_binary_the_table_says_what_it_needs(capsys):
    assert stock.print_stock(None) is True
    assert capsys.readouterr().out.strip() == stock.NEEDS
    assert "32-bit unix port of MicroPython v1.28.0 with the heap split in two areas" in stock.NEEDS
