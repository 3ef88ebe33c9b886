"""The simulation: the unchanged firmware on a simulated board.

`board` is the one launcher (SimBoard): a board with a config and a runtime in a child
process, booted again after machine.reset(); `__main__` (python3 -m tools.sim) is its
command line; `device` is the child's entry; `hwsim/` is the simulated hardware
(machine, esp32, network, camera, neopixel, the parts' chips). `demo` (make sim) runs a
scripted session against the local backend with the calls of `calls`; `fullsession` is
the session a backend drives through a board's life (make bench's heap tables, the tests'
heap guard); `hostile` sends a device hostile input and accounts for every answer (the
fuzz of make test, make soak and make bench). board, device, hostile and hwsim: standard
library only."""
