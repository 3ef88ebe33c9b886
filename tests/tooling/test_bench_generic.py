"""make bench's generic-board table (tools/bench/generic.py): each part type's cost is
measured in a real MicroPython (the venv's unix port here: quick), and the table renders."""

import pytest

from tests.support.firmware_harness import MICROPYTHON
from tools.bench import generic

pytestmark = pytest.mark.timeout(120)


def test_each_part_type_is_measured_alone():
    package, costs = generic.measure_types(MICROPYTHON)
    assert package > 0
    assert sorted(costs) == sorted(entry["type"] for entry in generic.GENERIC_PARTS)
    for kind, (module, part, resource) in costs.items():
        assert module > 0 and part > 0, kind
    sensors = {"button", "analog", "dht", "ds18b20", "battery"}
    assert all(costs[kind][2] > costs["relay"][2] for kind in sensors)  # a sensor adds a resource


def test_the_table_puts_the_boards_side_by_side():
    board = {"tools": 8, "boot": 140000, "session": 150000, "smallest": 160 * 1024, "simulated": 30000}
    other = dict(board, tools=13, boot=150240)
    figures = {"bits": 32, "micropython": "mp",
               "boards": {"host": board, "generic": other},
               "types": (3072, {"relay": (900, 700, 0), "dht": (1000, 800, 150)})}
    lines = generic.table(figures)
    assert "| tools offered to the model | 8 | 13 | |" in lines
    assert "| heap in use after boot (the firmware's own) | 107 KB | 117 KB | +10.0 KB |" in lines
    assert "| relay | 900 B | 700 B | |" in lines and "| dht | 1000 B | 800 B | 150 B |" in lines
    assert lines[-1] == "| all 2 types, one part each | 6.3 KB | | |"
