"""make bench's "httpcall" part (python -m tools.bench --only httpcall): one tools/call over
the board's MCP endpoint beside the smallest handler that could answer it.

Board (a) of the stock table with "mcp_http": {"auth": "none"} and no link, as make deploy
stages it, and tools/bench/scripts/minhttp.py (a minimal HTTP JSON-RPC handler), both in
the same binary, heap size and folder. One client times, in turns, ROUNDS x CALLS round
trips of the same 2026-07-28 tools/call to each, a new connection per call and on one
kept-alive connection: medians, 90th percentiles, their ratio against TARGET (issue 44),
and each server's CPU per call (/proc/<pid>/stat). Then the drift: the board's heap in use
(self.get_system_info, read over the endpoint) before and after DRIFT_CALLS more calls
(target: DRIFT_TARGET), from once its mDNS responder answers. docs/benchmarks.md says more.
Figures, not a test.
"""

import os
import shutil
import socket
import statistics
import tempfile

from . import generic, stock
from .httpboard import (WAIT_S, answer, calls_kept, calls_new, connect, free_port, heap_used, log_tail, request,
                        wait_mdns, wait_serving)
from ..sim.board import BoardFailed, SimBoard, has_frozen_hardware

CALLS = 500
ROUNDS = 3
WARMUP = 20  # before each timed run: the endpoint's code loads at its first connection
HEAPSIZE = 112 * 1024  # the stock plain ESP32's heap
TARGET = 2.0  # the board's round trip at most this many times the minimal handler's
DRIFT_CALLS = 10000
DRIFT_TARGET = 1024
FLOOR_SCRIPT = "minhttp.py"
TOOL = "self_lamp_turn_on"
PARTS = [stock.RELAY, stock.DHT22, stock.BUTTON]


MODES = (("new", "a new connection per call", calls_new), ("kept", "one kept-alive connection", calls_kept))


def cpu_seconds(pid):
    """User and system time the process `pid` has used (Linux), or None."""
    try:
        with open("/proc/%d/stat" % pid) as source:
            fields = source.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(micropython, calls=CALLS, rounds=ROUNDS, drift_calls=DRIFT_CALLS, heapsize=HEAPSIZE):
    """{"times": {(server, mode): [seconds]}, "cpu": {(server, mode): seconds per call},
    "drift": (heap before, heap after) or None, "runtime": the form the board ran}, server
    "floor" or "board". Raises BoardFailed or deploy.DeployError."""
    runtime = "mpy-frozen-hardware" if has_frozen_hardware(micropython) else "mpy"
    folder = tempfile.mkdtemp(prefix="umcp-bench-httpcall-")
    servers = {}
    try:
        stage_dir = generic.stage("generic", os.path.join(folder, "stage"), runtime)
        shutil.copyfile(os.path.join(generic.heap.SCRIPTS, FLOOR_SCRIPT), os.path.join(stage_dir, FLOOR_SCRIPT))
        ports = {"board": free_port(), "floor": free_port()}
        configs = {
            "board": stock.board_config(PARTS),
            "floor": stock.board_config(PARTS),
        }
        mdns_port = free_port(socket.SOCK_DGRAM)
        configs["board"]["mcp_http"] = {"port": ports["board"], "auth": "none", "bind": "127.0.0.1",
                                        "mdns_port": mdns_port}
        entries = {"board": [generic.BOOT], "floor": [FLOOR_SCRIPT, str(ports["floor"])]}
        for name in ("floor", "board"):
            log = open(os.path.join(folder, name + ".log"), "w+", errors="replace")
            servers[name] = SimBoard(configs[name], runtime, micropython, heapsize, stage=stage_dir,
                                     entry=entries[name], log=log)
            servers[name].start()
        data = {name: request(port, TOOL) for name, port in ports.items()}
        for name in servers:
            try:
                wait_serving(servers[name], ports[name], data[name])
            except BoardFailed as e:
                raise BoardFailed("%s: %s\n%s" % (name, e, log_tail(servers[name])))
        try:  # before the timed calls too: its start takes a few seconds and some heap
            wait_mdns(servers["board"], mdns_port)
        except BoardFailed as e:
            raise BoardFailed("board: %s\n%s" % (e, log_tail(servers["board"])))
        times = {}
        cpu = {}
        for _ in range(rounds):
            for mode, _, run in MODES:
                for name in ("floor", "board"):
                    pid = servers[name].process.pid
                    try:
                        run(ports[name], data[name], WARMUP)
                        before = cpu_seconds(pid)
                        times.setdefault((name, mode), []).extend(run(ports[name], data[name], calls))
                    except OSError as e:
                        raise BoardFailed("%s, %s: %s\n%s" % (name, mode, e or "timed out", log_tail(servers[name])))
                    after = cpu_seconds(pid)
                    if before is not None and after is not None:
                        cpu[(name, mode)] = cpu.get((name, mode), 0.0) + after - before
        cpu = {key: value / (calls * rounds) for key, value in cpu.items()}
        drift = None
        if drift_calls:
            port = ports["board"]
            try:
                before = heap_used(port)
                calls_new(port, data["board"], drift_calls // 2)
                calls_kept(port, data["board"], drift_calls - drift_calls // 2)
                drift = (before, heap_used(port))
            except (OSError, BoardFailed) as e:
                raise BoardFailed("board, drift: %s\n%s" % (e or "timed out", log_tail(servers["board"])))
        return {"times": times, "cpu": cpu, "drift": drift, "drift_calls": drift_calls, "runtime": runtime,
                "heapsize": heapsize}
    finally:
        for server in servers.values():
            server.close()
            server.log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _ms(seconds):
    return "%.2f ms" % (seconds * 1000)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def table(figures):
    times, cpu = figures["times"], figures["cpu"]
    lines = ["| tools/call over HTTP | minimal handler | umcp board (a), mcp_http | umcp / minimal |",
             "|---|---|---|---|"]
    verdicts = []
    for mode, what, _ in MODES:
        floor, board = times[("floor", mode)], times[("board", mode)]
        for label, pick in (("median", statistics.median), ("p90", lambda v: percentile(v, 0.9))):
            a, b = pick(floor), pick(board)
            lines.append("| %s, %s | %s | %s | %.2fx |" % (what, label, _ms(a), _ms(b), b / a))
        if ("floor", mode) in cpu and ("board", mode) in cpu:
            a, b = cpu[("floor", mode)], cpu[("board", mode)]
            lines.append("| %s, server CPU per call | %s | %s | %.2fx |" % (what, _ms(a), _ms(b), b / a if a else 0))
        ratio = statistics.median(board) / statistics.median(floor)
        verdicts.append("tools/call over HTTP, %s: %.2fx the minimal handler's median; target at most %.1fx: %s"
                        % (what, ratio, TARGET, "met" if ratio <= TARGET else "MISSED"))
    lines.append("")
    lines.extend(verdicts)
    if figures["drift"] is not None:
        before, after = figures["drift"]
        lines.append("Drift over %d more calls over HTTP (half on new connections): heap in use %d -> %d bytes, "
                     "%+d; target at most %d: %s" % (figures["drift_calls"], before, after, after - before, DRIFT_TARGET,
                                                     "met" if after - before <= DRIFT_TARGET else "MISSED"))
    return lines


def print_httpcall(micropython, calls=CALLS, rounds=ROUNDS, drift_calls=DRIFT_CALLS, heapsize=HEAPSIZE):
    """Print the part's table; returns whether it ran."""
    from ..board import deploy

    try:
        figures = measure(micropython, calls, rounds, drift_calls, heapsize)
    except (BoardFailed, deploy.DeployError, OSError, ValueError) as e:
        print("the HTTP call bench did not run:\n%s" % e)
        return False
    print("Board (a) (a relay, a DHT22, a button; \"mcp_http\": {\"auth\": \"none\"}, no link) as the .mpy files")
    print("make deploy stages (%s), and tools/bench/scripts/%s beside it, each in %s" % (figures["runtime"], FLOOR_SCRIPT, micropython))
    print("with -X heapsize=%dK; %d rounds of %d calls of %s each, taken in turns:" % (heapsize // 1024, rounds, calls, TOOL))
    print()
    print("\n".join(table(figures)))
    print()
    print("Round trips from this process's client (blocking sockets, TCP_NODELAY); the request is the SDK's")
    print("2026-07-28 POST with its headers. Server CPU: user and system time of the server's process over the")
    print("timed calls, per call (10 ms ticks of /proc/<pid>/stat). Drift: heap_used of self.get_system_info")
    print("(after a collection), read over HTTP before and after, from once the board's mDNS responder answers.")
    return True


def main(argv=None):
    import argparse

    from . import heap

    parser = argparse.ArgumentParser(prog="python -m tools.bench.httpcall", description=__doc__.split("\n\n")[0])
    parser.add_argument("--micropython", default=heap.default_hardware_frozen() or heap.default_micropython())
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--drift-calls", type=int, default=DRIFT_CALLS)
    parser.add_argument("--heapsize", type=int, default=HEAPSIZE // 1024, help="KB")
    args = parser.parse_args(argv)
    return 0 if print_httpcall(args.micropython, args.calls, args.rounds, args.drift_calls,
                               args.heapsize * 1024) else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
