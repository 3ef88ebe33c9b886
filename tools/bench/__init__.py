"""make bench: `report` (python3 -m tools.bench) runs the parts and prints every figure beside
its floor, `record` writes the tables to docs/bench/*.md, `heap` is what the heap tables
share (the binaries, the staged forms, the bisection, a script of `scripts/` run in
MicroPython). The parts: `core` (the MCP core inside each interpreter), `link` with
`linkdevice`, `httpheap`, `transport`, `firmware` with `firmwaretable`, `imports`, `fuzz`,
`unixfrozenmanifest` and `unixhwsimmanifest` (the binaries to build), `generic` with
`generictable`, `stock`, `bridge`, `serial` with `serialheap`, `fleet` with
`fleetdevices`, `web`. docs/benchmarks.md says what each table measures.

Every simulated board is a tools.sim.board.SimBoard; no host program imports this package
(it is not installed).
"""
