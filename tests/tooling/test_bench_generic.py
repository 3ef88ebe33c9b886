"""make bench's generic-board table (tools/bench/generic.py): each part type's cost and the
status view's are measured in a real MicroPython (the venv's unix port here: quick), and the
table renders the three boards side by side."""

import asyncio

import pytest

from tests.support.firmwareharness import MICROPYTHON
from tools.bench import generic, generictable

pytestmark = pytest.mark.timeout(120)


def test_each_part_type_is_measured_alone():
    package, modules, costs, view = generic.measure_types(MICROPYTHON)
    assert package > 0
    assert sorted(costs) == sorted(entry["type"] for entry in generic.GENERIC_PARTS)
    # The alike types share a runtime module, measured once.
    assert modules["output"][0] == ["relay", "pwm", "strip", "servo", "buzzer"]
    assert sorted(modules["sensor"][0]) == ["analog", "battery", "button", "dht", "ds18b20"]
    assert all(size > 0 for _, size in modules.values())
    for kind, (module, part, resource) in costs.items():
        assert kind in modules[module][0] and part > 0, kind
    sensors = {"button", "analog", "dht", "ds18b20", "battery"}
    assert all(costs[kind][2] > costs["relay"][2] for kind in sensors)  # a sensor adds a resource
    module, view_itself = view  # the status view: its module, and a view on the OLED part
    assert module > 0 and view_itself > 0


def test_the_status_screen_board_is_the_ten_parts_and_the_oled_as_status_screen():
    board, extra, calls = generic.BOARDS["generic-status"]
    assert board == "generic" and extra["parts"][:-1] == generic.TEN_PARTS
    assert extra["parts"][-1]["type"] == "oled" and extra["parts"][-1]["status"] is True
    assert calls == generic.BOARDS["generic"][2]  # the same session: the screen is the difference


def test_the_table_puts_the_boards_side_by_side():
    board = {"tools": 8, "boot": 140000, "session": 150000, "smallest": 160 * 1024, "simulated": 30000}
    other = dict(board, tools=13, boot=150240)
    screen = dict(board, tools=15, boot=152288)
    figures = {"bits": 32, "micropython": "mp",
               "boards": {"host": board, "generic": other, "generic-status": screen},
               "types": (1024, {"output": (["relay"], 2048), "sensor": (["dht"], 3072)},
                         {"relay": ("output", 700, 0), "dht": ("sensor", 800, 150)}, (2600, 300))}
    lines = generictable.table(figures)
    assert "| tools offered to the model | 8 | 13 | | 15 | |" in lines
    assert "| heap in use after boot (the firmware's own) | 107 KB | 117 KB | +10.0 KB | 119 KB | +12.0 KB |" in lines
    assert "| parts.output | relay | 2048 B |" in lines
    assert "| relay | 700 B | | 3.7 KB |" in lines and "| dht | 800 B | 150 B | 4.8 KB |" in lines
    # 1024 + 2048 + 3072 B of code, then 700 + 800 B of parts
    assert "| all 2 types, one part each (their code once) | 7.5 KB | | |" in lines
    assert "| umcpfw.statusview (loaded only on a board with a status screen) | 2600 B |" in lines
    assert lines[-1].startswith("| the view on the panel") and lines[-1].endswith("| 300 B |")
    assert "| smallest heap for the session (simulated hardware included) | 160.0 KB | 160.0 KB | +0.0 KB " \
        "| 160.0 KB | +0.0 KB |" in lines
    assert "Ten parts and the status screen over the host board, the firmware's own: +12.0 KB after boot, " \
        "+0.0 KB to the smallest heap (target: at most 12 KB: met)" in lines
    # Either figure over 12 KB misses the target (the smallest heap bisected to 512 B).
    figures["boards"]["generic-status"] = dict(screen, smallest=160 * 1024 + 12800)
    assert "Ten parts and the status screen over the host board, the firmware's own: +12.0 KB after boot, " \
        "+12.5 KB to the smallest heap (target: at most 12 KB: MISSED)" in generictable.table(figures)


def test_the_table_shows_the_interned_names_pools_when_measured():
    board = {"tools": 8, "boot": 140000, "session": 150000, "smallest": 160 * 1024, "simulated": 30000,
             "qstrs_boot": (6, 1239, 23142), "qstrs_session": (7, 1272, 32440)}
    other = dict(board, tools=13, qstrs_boot=(7, 1307, 32666), qstrs_session=(7, 1307, 32666))
    screen = dict(board, tools=15, qstrs_boot=(7, 1400, 33690), qstrs_session=(7, 1400, 33690))
    figures = {"bits": 32, "micropython": "mp",
               "boards": {"host": board, "generic": other, "generic-status": screen},
               "types": (1024, {}, {}, (0, 0))}
    lines = generictable.table(figures)
    assert "| of the heap in use after boot: names interned (qstrs), in pools | 1239 in 6: 22.6 KB | " \
        "1307 in 7: 31.9 KB | +9.3 KB | 1400 in 7: 32.9 KB | +10.3 KB |" in lines
    assert generic.qstr_pools("WARNING other\nqstr pool: n_pool=7, n_qstr=1307, n_str_data_bytes=13654, "
                              "n_total_bytes=31654\nqstr pool: n_pool=7, n_qstr=1310, n_str_data_bytes=13680, "
                              "n_total_bytes=31680\n") == [(7, 1307, 31654), (7, 1310, 31680)]


def test_the_lcd_status_screen_is_measured_with_its_buffers():
    lcd = generic.measure_lcd(MICROPYTHON)
    assert lcd["buffers"] == 320 * 4 * 2 + 320 + 8  # the strip, the 1-bit line, palette, window
    assert lcd["part"] > lcd["buffers"] > 0  # the part holds them, and its driver and tools
    assert lcd["module"] > 0 and lcd["view_module"] > 0 and lcd["view"] > 0
    lines = generictable.lcd_table(lcd)
    assert "| of which its line and strip buffers, allocated once | %d B |" % lcd["buffers"] in lines
    total = lcd["module"] + lcd["part"] + lcd["view_module"] + lcd["view"]
    assert lines[-1] == "| all resident | %.1f KB |" % (total / 1024)


def test_the_smallest_heap_is_bisected_to_512_bytes(monkeypatch):
    tried = []

    async def run_board(micropython, name, stage_dir, heapsize):
        tried.append(heapsize)
        if heapsize < 150000:
            raise generic.GenericFailed("out of memory")
        return {}

    monkeypatch.setattr(generic, "run_board", run_board)
    assert asyncio.run(generic._smallest("mp", "host", "stage")) == 150016  # 293 * 512
    assert max(tried) <= generic.HEAPSIZE and 149504 in tried  # the 512 B below it failed
