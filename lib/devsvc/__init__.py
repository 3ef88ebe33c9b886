"""Device services the application keeps across boots: `settings` (persistent settings,
an atomic JSON file; `settingsload` reads it at boot, then leaves the heap), `otacheck` (the xiaozhi OTA check-in and activation: where to
connect, the clock, a firmware offer), `upgrade` (a firmware image into the next OTA
partition, streamed and verified) and `espimage` (ESP-IDF's image checks, loaded by
upgrade only while an upgrade runs)."""
