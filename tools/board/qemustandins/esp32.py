"""A STAND-IN for the ESP32's esp32 module, put on the QEMU board by the tests: nothing of
it (no OTA partitions, no NVS). The firmware asks for esp32.Partition only where an
ESP32 has one, and takes its absence as "not on an ESP32".
"""
