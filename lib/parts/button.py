"""A button or contact input (a door switch, a reed contact): no tool; its state is a
resource, device://parts/<name> ({"pressed", "presses"}), and in self.get_device_status. A press is
caught by the pin's interrupt (however short), counted, logged and told to every client
as a log notification; subscribers of the resource hear of each change."""

from machine import Pin

import parts
from umcp.compat import ticks_diff, ticks_ms

_POLL_MS = 100  # how soon a press reaches the log and the clients
_PULLS = {"up": Pin.PULL_UP, "down": Pin.PULL_DOWN}


class Part(parts.Sensor):
    def __init__(self, entry):
        entry["interval_ms"] = _POLL_MS
        super().__init__(entry)
        self.active = 1 if entry["active"] == "high" else 0
        self.debounce_ms = entry["debounce_ms"]
        self.presses = 0
        self._counted = 0  # presses already logged
        self._edge_ms = None
        pull = _PULLS.get(entry["pull"])
        self.pin = Pin(entry["pin"], Pin.IN, pull) if pull is not None else Pin(entry["pin"], Pin.IN)
        self.pin.irq(self._edge, Pin.IRQ_RISING if self.active else Pin.IRQ_FALLING)
        self.reading = self.read()

    def _edge(self, pin):
        # An interrupt: count and return, nothing more (a hard IRQ may not allocate).
        now = ticks_ms()
        if self._edge_ms is None or ticks_diff(now, self._edge_ms) >= self.debounce_ms:
            self.presses += 1
        self._edge_ms = now

    def read(self):
        presses = self.presses
        if presses != self._counted:
            parts.log.info("%s pressed (%d)", self.where, presses)
            self.event = {"part": self.name, "event": "pressed", "presses": presses}
            self._counted = presses
        return {"pressed": self.pin.value() == self.active, "presses": presses}
