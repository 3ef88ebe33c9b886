"""make bench: `report` (python3 -m tools.bench) prints every figure beside its floor;
`core` measures the MCP core inside CPython and MicroPython; `firmware` measures the
whole firmware's heap as make deploy stages it."""
