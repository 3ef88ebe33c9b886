"""What the QEMU board lacks of an ESP32 (tools/board/qemu.py's standins() puts them in its
/lib under these names; never imported here): `network` (a Wi-Fi that is never found),
`esp32`, `socket` and `ssl` (sockets that fail), so that make deploy's check of the board
passes and the firmware starts as on a board without a network. The tests' QEMU rig and
make bench's serial table put them there."""
