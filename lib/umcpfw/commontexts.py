"""The user-only common tools' long descriptions (umcpfw.commonsetup names them as
ModuleText): loaded only while a tools/list entry is written, then dropped, so that they
are not on the heap in between (a .mpy module's strings are heap objects while it is
loaded). Only a console's listing (withUserTools) reads them; the visible tools' texts
are plain strings (commonsetup): every session lists those, and a text loaded at the
listing is paid at the session's peak. Their output schemas are in
umcpfw.commonschemas: a client before 2025-06-18 (a xiaozhi backend) never reads those."""

UPGRADE_DESCRIPTION = (
    "Upgrade firmware from a specific URL. This will download and install the "
    "firmware, then reboot the device.")
RECONFIGURE_DESCRIPTION = (
    "Restart into Wi-Fi setup: the board opens its own access point with a setup page "
    "for the network, its password and the server.")
TOOLS_DESCRIPTION = (
    "Show or hide tools on every link, kept across restarts: `name` is a tool name or a "
    'prefix ending in "*"; the latest choice that matches a tool decides.')
