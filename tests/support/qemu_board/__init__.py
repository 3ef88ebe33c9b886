"""What the tests put on the QEMU board (tests/support/qemu.py), copied there as files, never
imported here: stand-ins for the four modules an ESP32 has and the QEMU board lacks
(standin_network.py, standin_esp32.py, standin_socket.py, standin_ssl.py, copied to the
board's /lib under their modules' names), and a maker's module deployed with APP=
(maker_app.py)."""
