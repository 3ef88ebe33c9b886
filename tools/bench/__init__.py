"""make bench: `report` (python3 -m tools.bench) prints every figure beside its floor and
`record` writes the tables to docs/bench/*.md; `core` measures the MCP core inside CPython
and MicroPython; `link` (with `link_device`, the device side) round trips over the
device's WebSocket link; `transport` a tools/call over WebSocket and MQTT; `firmware` the
whole firmware's heap as make deploy stages it (`unix_frozen_manifest` builds the frozen
port); `bridge` the bridge against its floor and under load; `serial` a board on its
serial line through the bridge (the QEMU board) and the serial session's heap
(`serial_heap`, its device side); `fleet` many devices against
one backend; `mosquitto` runs a local mosquitto for it and the tests. docs/benchmarks.md
says what each table measures."""
