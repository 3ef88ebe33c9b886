# The common tools' registration (CommonTools.register): their names, descriptions,
# parameters and output schemas, as the reference firmware (xiaozhi-esp32
# main/mcp_server.cc) names and words them. Loaded once at boot and dropped again: only
# what the tools keep (their texts and parameter lists) stays on the heap.
from drivers.display import THEMES
from umcp import INTEGER, STRING, McpTool, Property, PropertyList
from umcpfw.common_tools import REBOOT_DELAY_MS

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


def register(tools):
    """The common tools of `tools` (a CommonTools) on its server, those the board has the
    hardware for."""
    s, b = tools.server, tools.board
    s.add_tool(McpTool("self.get_device_status", STATUS_DESCRIPTION, None,
                       tools.get_device_status, read_only=True, output_schema=STATUS_SCHEMA))
    if b.speaker:
        s.add_tool(
            "self.audio_speaker.set_volume",
            "Set the volume of the audio speaker. If the current volume is unknown, you must "
            "call `self.get_device_status` tool first and then call this tool.",
            PropertyList([Property("volume", INTEGER, minimum=0, maximum=100)]),
            tools.set_volume, destructive=False, idempotent=True, open_world=False)
    if b.backlight:
        s.add_tool(
            "self.screen.set_brightness", "Set the brightness of the screen.",
            PropertyList([Property("brightness", INTEGER, minimum=0, maximum=100)]),
            tools.set_brightness, destructive=False, idempotent=True, open_world=False)
    if b.display:
        s.add_tool(
            "self.screen.set_theme",
            "Set the theme of the screen. The theme can be `light` or `dark`.",
            PropertyList([Property("theme", STRING, enum=THEMES)]),
            tools.set_theme, destructive=False, idempotent=True, open_world=False)
    if b.camera:
        s.add_tool("self.camera.take_photo", PHOTO_DESCRIPTION,
                   PropertyList([Property("question", STRING)]),
                   tools.take_photo, read_only=True, open_world=True)
    _register_user_only(tools, s)


def _register_user_only(tools, s):
    s.add_tool(McpTool("self.get_system_info", "Get the system information", None,
                       tools.get_system_info, user_only=True, read_only=True,
                       output_schema=SYSTEM_SCHEMA))
    s.add_user_only_tool("self.reboot", "Reboot the system", PropertyList([]),
                         tools.reboot_tool, destructive=True, open_world=False)
    s.add_user_only_tool(
        "self.upgrade_firmware",
        "Upgrade firmware from a specific URL. This will download and install the "
        "firmware, then reboot the device.",
        PropertyList([
            Property("url", STRING,
                     description="The URL of the firmware binary file to download and install"),
            Property("sha256", STRING, default="",
                     description="Optional SHA-256 of the firmware image, 64 hex "
                     "digits; without it the image's own appended SHA-256 is checked"),
        ]),
        tools.upgrade_firmware, destructive=True, open_world=True)
    if tools.board.camera:
        # The picture itself, for MCP clients that see images (through the bridge);
        # user-only because xiaozhi backends read only text results.
        s.add_user_only_tool(
            "self.camera.get_photo", "Take a photo and return it as a JPEG image.",
            PropertyList([]), tools.get_photo, read_only=True, open_world=False)
    if tools.board.display:
        s.add_tool(McpTool(
            "self.screen.get_info",
            "Information about the screen, including width, height, etc.",
            None, tools.screen_info, user_only=True, read_only=True,
            output_schema=SCREEN_SCHEMA))
    if tools.board.wlan is not None:
        from umcpfw.wifi import add_reconfigure_tool  # loaded on a board with a radio

        add_reconfigure_tool(s, tools.settings, tools.reboot, REBOOT_DELAY_MS)
    s.add_user_only_tool(
        "self.assets.set_download_url", "Set the download url for the assets",
        PropertyList([Property("url", STRING)]),
        tools.set_assets_url, destructive=False, idempotent=True, open_world=False)

