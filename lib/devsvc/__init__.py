"""Device services the application keeps across boots: `settings` (persistent settings,
an atomic JSON file; `settingsload` reads it at boot, then leaves the heap), `otacheck` (the xiaozhi OTA check-in and activation: where to
connect, the clock, a firmware offer), `upgrade` (a firmware image into the next OTA
partition, streamed and verified) and `espimage` (ESP-IDF's image checks, loaded by
upgrade only while an upgrade runs).

mark_valid() is here, not in upgrade: every boot calls it once, and the upgrade's code
need not be loaded (and its names interned for good) for that."""


def mark_valid():
    """Keep the running image: cancel the bootloader's rollback after a good boot.

    False where there is nothing to do (no esp32 module, no rollback support)."""
    try:
        from esp32 import Partition
        Partition.mark_app_valid_cancel_rollback()
        return True
    except (ImportError, AttributeError, OSError):
        return False

