"""The common tools' output schemas (umcpfw.commonsetup names them as ModuleText), read
only while a tools/list entry is written for a client of 2025-06-18 or later, then
dropped again. Nothing but strings here.

What the JSON-returning tools return, for clients of 2025-06-18 and later (outputSchema,
structuredContent). JSON text, not dicts: a literal is in flash when frozen, and text takes
less heap than nested dicts. Objects may carry more than listed (a board's own facts)."""

STATUS_SCHEMA = (
    '{"type":"object","properties":{'
    '"network":{"type":"object","properties":{"type":{"type":"string"},'
    '"connected":{"type":"boolean"},"ssid":{"type":"string"},"rssi":{"type":"integer"}}},'
    '"audio_speaker":{"type":"object","properties":{"volume":{"type":"integer"}}},'
    '"screen":{"type":"object","properties":{"brightness":{"type":"integer"},'
    '"theme":{"type":"string"}}},'
    '"board":{"type":"string"}},"required":["network","board"]}')
SYSTEM_SCHEMA = (
    '{"type":"object","properties":{"firmware_version":{"type":"string"},'
    '"board":{"type":"string"},"runtime":{"type":"string"},"platform":{"type":"string"},'
    '"device_id":{"type":"string"},"client_id":{"type":"string"},'
    '"uptime_s":{"type":"integer"},"max_message":{"type":"integer"},'
    '"free_heap":{"type":"integer"},"heap_used":{"type":"integer"},'
    '"ota":{"type":"object","properties":{"running":{"type":"string"},"boot":{"type":"string"}}},'
    '"firmware_offer":{"type":"object"},"rtc":{"type":"array","items":{"type":"integer"}},'
    '"mcp_url":{"type":"string"}},'
    '"required":["firmware_version","board","runtime","device_id","uptime_s"]}')
SCREEN_SCHEMA = (
    '{"type":"object","properties":{"width":{"type":"integer"},"height":{"type":"integer"},'
    '"type":{"type":"string"},"monochrome":{"type":"boolean"},"theme":{"type":"string"}},'
    '"required":["width","height"]}')
