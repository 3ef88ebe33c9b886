"""The simulation: the unchanged firmware on a simulated board.

`launcher` (python3 -m tools.sim) boots the firmware in a child process and boots it
again after machine.reset(); `device` is that child's entry; `hwsim/` is the simulated
hardware (machine, esp32, network, camera, neopixel); `demo` (make sim) runs a scripted
session against the local backend. Standard library only, like the launcher."""
