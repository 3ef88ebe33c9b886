"""make bench's generic table, printed (tools/bench/generic.py measures it): the generic
board beside the host board, issue 19's target under it, the parts' code, each type's cost,
the status screen's; alone: python -m tools.bench.generic."""

import subprocess

from . import generic, heap
from ..board import deploy

TARGET_KB = generic.TARGET_KB


def lcd_table(lcd):
    total = lcd["module"] + lcd["part"] + lcd["view_module"] + lcd["view"]
    return ["| the SPI LCD (320x240) as the status screen | bytes |", "|---|---|",
            "| parts.lcd (with parts.screen and drivers.st7789) | %d B |" % lcd["module"],
            "| a part and its tools | %d B |" % lcd["part"],
            "| of which its line and strip buffers, allocated once | %d B |" % lcd["buffers"],
            "| umcpfw.statusview | %d B |" % lcd["view_module"],
            "| the view on the panel (the generic board's display too) | %d B |" % lcd["view"],
            "| all resident | %.1f KB |" % (total / 1024)]


def table(figures):
    host = figures["boards"]["host"]
    others = [figures["boards"][name] for name in ("generic", "generic-status")]
    lines = ["| | host board | generic board, ten parts | difference | ten parts and the status screen "
             "| difference |", "|---|---|---|---|---|---|"]

    def row(title, key, simulated=True, size="%d KB"):
        a = host[key] - (host["simulated"] if simulated else 0)
        cells = [size % (a // 1024 if size == "%d KB" else a / 1024)]
        for board in others:
            b = board[key] - (board["simulated"] if simulated else 0)
            cells += [size % (b // 1024 if size == "%d KB" else b / 1024), "%+.1f KB" % ((b - a) / 1024)]
        lines.append("| %s | %s |" % (title, " | ".join(cells)))

    lines.append("| tools offered to the model | %d | %d | | %d | |" % (host["tools"], others[0]["tools"],
                                                                     others[1]["tools"]))
    row("heap in use after boot (the firmware's own)", "boot")
    row("heap in use after the session (the firmware's own)", "session")
    for when, key in (("after boot", "qstrs_boot"), ("after the session", "qstrs_session")):
        if key in host and all(key in board for board in others):
            a_pools, a_names, a_bytes = host[key]
            cells = ["%d in %d: %.1f KB" % (a_names, a_pools, a_bytes / 1024)]
            for board in others:
                b_pools, b_names, b_bytes = board[key]
                cells += ["%d in %d: %.1f KB" % (b_names, b_pools, b_bytes / 1024), "%+.1f KB" % ((b_bytes - a_bytes) / 1024)]
            lines.append("| of the heap in use %s: names interned (qstrs), in pools | %s |" % (when, " | ".join(cells)))
    row("smallest heap for the session (simulated hardware included)", "smallest", False, "%.1f KB")
    lines.append("| simulated hardware in those figures (left out above) | %.1f KB | %.1f KB | | %.1f KB | |"
                 % (host["simulated"] / 1024, others[0]["simulated"] / 1024, others[1]["simulated"] / 1024))
    # Issue 19's target: the ten parts and the screen at most 12 KB over the host board,
    # the firmware's own (the simulated hardware left out of both, as above).
    screen = others[1]
    over = [(screen[key] - screen["simulated"] - host[key] + host["simulated"]) / 1024
            for key in ("boot", "smallest")]
    lines += ["", "Ten parts and the status screen over the host board, the firmware's own: %+.1f KB after "
              "boot, %+.1f KB to the smallest heap (target: at most %d KB: %s)"
              % (over[0], over[1], TARGET_KB, "met" if max(over) <= TARGET_KB else "MISSED")]
    package, modules, costs, view = figures["types"]
    lines += ["", "| code (resident once, whatever the number of parts) | the types it holds | bytes |",
              "|---|---|---|", "| the parts package (parts/__init__) | all | %d B |" % package]
    total = package
    for module, (kinds, size) in modules.items():
        lines.append("| parts.%s | %s | %d B |" % (module, ", ".join(kinds), size))
        total += size
    lines += ["", "| part type | a part and its tools (simulated objects it made included) | its resource "
              "(at the first resources/*) | one part alone: with its module and the package |", "|---|---|---|---|"]
    for kind, (module, part, resource) in costs.items():
        alone = package + modules[module][1] + part
        lines.append("| %s | %d B |%s| %.1f KB |" % (kind, part, " %d B " % resource if resource > 32 else " ",
                                                      alone / 1024))
        total += part
    lines.append("| all %d types, one part each (their code once) | %.1f KB | | |" % (len(costs), total / 1024))
    lines += ["", "| the status screen (an OLED part with \"status\": true), beyond the OLED part | bytes |", "|---|---|",
              "| umcpfw.statusview (loaded only on a board with a status screen) | %d B |" % view[0],
              "| the view on the panel (the generic board's display too, for the theme tool) | %d B |"
              % view[1]]
    return lines


def print_generic(micropython):
    """Print the table; returns whether it ran."""
    print("The generic board (ten parts, one of each type but the OLED and the LCD; then with the OLED as the status "
          "screen too) beside the host board, as .mpy files (make deploy) on %s:" % micropython)
    try:
        figures = generic.measure(micropython)
    except (generic.GenericFailed, deploy.DeployError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("the generic board bench did not run:\n%s" % e)
        return False
    if figures["bits"] != 32:
        print("(a %d-bit build: objects are larger than an ESP32's; UMCP_MICROPYTHON picks a 32-bit one)"
              % figures["bits"])
    print()
    print("\n".join(table(figures)))
    print()
    print("\n".join(lcd_table(figures["lcd"])))
    print()
    print("Sessions: the host board's make sim calls (volume, status, a photo); the generic board's")
    print("make sim-generic calls (one per part, the OLED's apart; the same with the status screen),")
    print("then a reconnection and a call.")
    print("The firmware's own heap leaves out the simulated hardware (its .mpy modules and state:")
    print("a board has them in C and silicon). The parts' code is resident once (the package, and")
    print("the module of each kind in use); a part's own cost is its objects and its tools (tools")
    print("of one type share their parameter lists); a sensor's resource is registered at a")
    print("client's first resources/* request and costs the second column then. Interned names")
    print("(qstrs) stay for good, in pools that double: a firmware that passes a pool's end pays")
    print("for the next pool at once (the 7th holds names 1261 to 2540, about 9 KB on 32 bits).")
    return True


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.bench.generic", description=__doc__.split("\n")[0])
    parser.add_argument("--micropython", default=heap.default_micropython(),
                        help="the unix port to measure with (default: UMCP_MICROPYTHON, else make setup's)")
    return 0 if print_generic(parser.parse_args(argv).micropython) else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
