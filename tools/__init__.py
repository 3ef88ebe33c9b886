"""Host programs (CPython): `sim` (the simulated board, make sim), `backend` (the local
backend), `bridge` (devices to MCP clients), `hub` (what backend and bridge share), `board`
(deploy, flash, repl), `bench` (make bench), `mpy` (device code inside MicroPython).
docs/DESIGN.md has the map."""
