"""python3 -m tools.backend: a local xiaozhi-compatible backend for umcp devices.

`backend` (Backend: devices over WebSocket and MQTT, the OTA check, the vision endpoint),
`console` (the stdin console), `web` (the web console's API; the page is in static/)."""

from .backend import Backend

__all__ = ["Backend"]
