# The common tools' long texts (umcpfw.common_setup names them as ModuleText): loaded
# only while a tools/list entry is written, then dropped, so that they are not on the heap
# in between (a .mpy module's strings are heap objects while it is loaded). Nothing but
# strings here: each reading loads all of them.
STATUS_DESCRIPTION = (
    "Provides the real-time information of the device, including the current status of "
    "the audio speaker, screen, battery, network, etc.\n"
    "Use this tool for: \n"
    "1. Answering questions about current condition (e.g. what is the current volume of "
    "the audio speaker?)\n"
    "2. As the first step to control the device (e.g. turn up / down the volume of the "
    "audio speaker, etc.)")
PHOTO_DESCRIPTION = (
    "Take a photo and explain it. Use this tool after the user asks you to see something.\n"
    "Args:\n"
    "  `question`: The question that you want to ask about the photo.\n"
    "Return:\n"
    "  A JSON object that provides the photo information.")
VOLUME_DESCRIPTION = (
    "Set the volume of the audio speaker. If the current volume is unknown, you must "
    "call `self.get_device_status` tool first and then call this tool.")
UPGRADE_DESCRIPTION = (
    "Upgrade firmware from a specific URL. This will download and install the "
    "firmware, then reboot the device.")

# What the JSON-returning tools return, for clients of 2025-06-18 and later (outputSchema,
# structuredContent). JSON text, not dicts: a literal is in flash when frozen, and text takes
# less heap than nested dicts. Objects may carry more than listed (a board's own facts).
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
