"""The common tools' registration (CommonTools.register): their names, descriptions,
parameters and output schemas, as the reference firmware (xiaozhi-esp32
main/mcp_server.cc) names and words them. Loaded once at boot and dropped again: only
what the tools keep (their short texts and parameter lists) stays on the heap; the long
texts are in umcpfw.commontexts and commonschemas, loaded only while a tools/list
entry is written, and the user-only tools' and the camera's code in umcpfw.sysinfo,
umcpfw.systools, umcpfw.upgrading and umcpfw.vision, loaded for each call (OnDemand)."""

from umcp import BOOLEAN, INTEGER, STRING, McpTool, Property, PropertyList
from umcp.compat import OnDemand
from umcp.tool import ModuleText

_TEXTS = "umcpfw.commontexts"
_SCHEMAS = "umcpfw.commonschemas"
_SYSTOOLS = "umcpfw.systools"
_VISION = "umcpfw.vision"
_ALARMS = "umcpfw.alarmtools"

# The visible tools' texts: every session lists them (the first tools/list, the session's
# peak), so they stay on the heap with their tools rather than load at that peak.
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
ALARM_DESCRIPTION = (
    "Set an alarm or timer: in `in_seconds` seconds, or `at` \"HH:MM\" (local time). When due, "
    "the device says `label` (1-120 characters); with `ask`, it comes to you as the user's words.")
VOLUME_DESCRIPTION = (
    "Set the volume of the audio speaker. If the current volume is unknown, you must "
    "call `self.get_device_status` tool first and then call this tool.")
# The user-only tools' long texts and every output schema: read from their modules only
# while an entry is written (a console's listing, a client of 2025-06-18 and later).
UPGRADE_DESCRIPTION = ModuleText(_TEXTS, "UPGRADE_DESCRIPTION")
RECONFIGURE_DESCRIPTION = ModuleText(_TEXTS, "RECONFIGURE_DESCRIPTION")
TOOLS_DESCRIPTION = ModuleText(_TEXTS, "TOOLS_DESCRIPTION")
STATUS_SCHEMA = ModuleText(_SCHEMAS, "STATUS_SCHEMA")
SYSTEM_SCHEMA = ModuleText(_SCHEMAS, "SYSTEM_SCHEMA")
SCREEN_SCHEMA = ModuleText(_SCHEMAS, "SCREEN_SCHEMA")


def register(tools):
    """The common tools of `tools` (a CommonTools) on its server, those the board has the
    hardware for."""
    s, b = tools.server, tools.board
    s.add_tool(McpTool("self.get_device_status", STATUS_DESCRIPTION, None,
                       tools.get_device_status, read_only=True, output_schema=STATUS_SCHEMA))
    if b.speaker:
        s.add_tool(
            "self.audio_speaker.set_volume", VOLUME_DESCRIPTION,
            PropertyList([Property("volume", INTEGER, minimum=0, maximum=100)]),
            tools.set_volume, destructive=False, idempotent=True, open_world=False)
    if b.backlight:
        s.add_tool(
            "self.screen.set_brightness", "Set the brightness of the screen.",
            PropertyList([Property("brightness", INTEGER, minimum=0, maximum=100)]),
            tools.set_brightness, destructive=False, idempotent=True, open_world=False)
    if b.display:
        from drivers import THEMES  # (the board's display has them loaded already)

        s.add_tool(
            "self.screen.set_theme",
            "Set the theme of the screen. The theme can be `light` or `dark`.",
            PropertyList([Property("theme", STRING, enum=THEMES)]),
            tools.set_theme, destructive=False, idempotent=True, open_world=False)
    if b.camera:
        s.add_tool("self.camera.take_photo", PHOTO_DESCRIPTION,
                   PropertyList([Property("question", STRING)]),
                   OnDemand(_VISION, "take_photo", tools), read_only=True, open_world=True)
    _register_alarms(tools, s)
    _register_user_only(tools, s)


def _register_alarms(tools, s):
    # Every board's: their code (umcpfw.alarmtools, alarmlist, alarms) loads only when called.
    s.add_tool(
        "self.alarms.add", ALARM_DESCRIPTION,
        PropertyList([
            Property("in_seconds", INTEGER, default=0, minimum=0, maximum=604800),
            Property("at", STRING, default=""),
            Property("label", STRING),
            Property("repeat", STRING, default="none", enum=("none", "daily")),
            Property("ask", BOOLEAN, default=False),
        ]),
        OnDemand(_ALARMS, "add", tools), destructive=False, open_world=False)
    s.add_tool("self.alarms.list", "List the alarms and timers set on the device.", PropertyList([]),
               OnDemand("umcpfw.alarmlist", "listed", tools), read_only=True, open_world=False)
    s.add_tool("self.alarms.remove", "Remove an alarm or timer by its id (self.alarms.list).",
               PropertyList([Property("id", INTEGER, minimum=1)]),
               OnDemand(_ALARMS, "remove", tools), destructive=True, idempotent=True, open_world=False)


def _register_user_only(tools, s):
    s.add_tool(McpTool("self.get_system_info", "Get the system information", None,
                       OnDemand("umcpfw.sysinfo", "get_system_info", tools), user_only=True, read_only=True,
                       output_schema=SYSTEM_SCHEMA))
    s.add_user_only_tool("self.reboot", "Reboot the system", PropertyList([]),
                         OnDemand(_SYSTOOLS, "reboot", tools), destructive=True, open_world=False)
    s.add_user_only_tool(
        "self.upgrade_firmware", UPGRADE_DESCRIPTION,
        PropertyList([
            Property("url", STRING,
                     description="The URL of the firmware binary file to download and install"),
            Property("sha256", STRING, default="",
                     description="Optional SHA-256 of the firmware image, 64 hex "
                     "digits; without it the image's own appended SHA-256 is checked"),
        ]),
        OnDemand("umcpfw.upgrading", "tool", tools), destructive=True, open_world=True)
    if tools.board.camera:
        # The picture itself, for MCP clients that see images (through the bridge);
        # user-only because xiaozhi backends read only text results.
        s.add_user_only_tool(
            "self.camera.get_photo", "Take a photo and return it as a JPEG image.",
            PropertyList([]), OnDemand(_VISION, "get_photo", tools), read_only=True, open_world=False)
    if tools.board.display:
        s.add_tool(McpTool(
            "self.screen.get_info",
            "Information about the screen, including width, height, etc.",
            None, OnDemand(_SYSTOOLS, "screen_info", tools), user_only=True, read_only=True,
            output_schema=SCREEN_SCHEMA))
    if tools.board.wlan is not None:
        s.add_user_only_tool("self.system.reconfigure_wifi", RECONFIGURE_DESCRIPTION,
                             PropertyList([]), OnDemand(_SYSTOOLS, "reconfigure_wifi", tools),
                             destructive=True, open_world=False)
    s.add_user_only_tool(
        "self.assets.set_download_url", "Set the download url for the assets",
        PropertyList([Property("url", STRING)]),
        OnDemand(_SYSTOOLS, "set_assets_url", tools), destructive=False, idempotent=True,
        open_world=False)
    s.add_user_only_tool(
        "self.tools.set_enabled", TOOLS_DESCRIPTION,
        PropertyList([Property("name", STRING), Property("enabled", BOOLEAN)]),
        OnDemand("umcpfw.toolbudget", "set_enabled", tools), destructive=False, idempotent=True,
        open_world=False)
