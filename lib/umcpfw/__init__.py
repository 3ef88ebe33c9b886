"""The umcp firmware application: `app` (settings, board, MCP server and link on one
loop), `common_tools` (the self.* tools), `resources` (device://status, system, log,
photo/last), `vision` (the photo upload), `wifi` (the station and the clock), `fleet` (the
OTA check's side of the application, loaded only with ota_url), `wifisetup` (the access
point and setup page, loaded only in that mode), `statusview` (the status screen, loaded
only on a board with one). /main.py starts it."""
