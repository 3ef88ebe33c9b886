"""make bench: `report` (python3 -m tools.bench) runs the parts and prints every figure beside
its floor, `record` writes the tables to docs/bench/*.md. `heap` is what the heap tables
share: the binaries, the firmware staged in each form, the bisection of the smallest heap,
a script of `scripts/` (the MicroPython the bench runs, compiled in make test like the
firmware) run in MicroPython. `core` measures the MCP core inside CPython and
MicroPython; `link` (with `linkdevice`, the device side) round trips over the device's
WebSocket link and `httpheap` the board's HTTP endpoint's heap; `transport` a tools/call
over WebSocket and MQTT; `firmware` the whole firmware's heap in each form
(`firmwaretable` prints it; `imports` the per-import table; `fuzz` hostile input on the
measuring form; `unixfrozenmanifest` and `unixhwsimmanifest` build its binaries);
`generic` the generic board and each part type (`generictable` prints it); `bridge` the
bridge against its floor and under load; `serial` a board on its serial line through the
bridge (the pty board) and the serial session's heap (`serialheap`, its device side);
`fleet` many devices against one backend (`fleetdevices`, their process).
docs/benchmarks.md says what each table measures. Every simulated board is a
tools.sim.board.SimBoard; no host program imports this package (it is not installed)."""
