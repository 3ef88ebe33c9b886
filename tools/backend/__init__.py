"""python3 -m tools.backend: a local xiaozhi-compatible backend for umcp devices."""

from tools.backend.backend import Backend

__all__ = ["Backend"]
