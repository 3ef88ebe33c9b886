"""Device services the application keeps across boots: `settings` (an atomic JSON
file) and `ota` (firmware into the next OTA partition)."""
