# The common tools' long descriptions (umcpfw.commonsetup names them as ModuleText):
# loaded only while a tools/list entry is written, then dropped, so that they are not on
# the heap in between (a .mpy module's strings are heap objects while it is loaded).
# Nothing but strings here: each reading loads all of them. Their output schemas are in
# umcpfw.commonschemas: a client before 2025-06-18 (a xiaozhi backend) never reads those.
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
RECONFIGURE_DESCRIPTION = (
    "Restart into Wi-Fi setup: the board opens its own access point with a setup page "
    "for the network, its password and the server.")
