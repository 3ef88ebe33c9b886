"""The umcp firmware application: `app` (settings, board, MCP server and link on one
loop), `common_tools` (the self.* tools), `resources` (device://status, system, log,
photo/last), `vision` (the photo upload), `wifi` (the station and the clock), `fleet` (the
OTA check's side of the application, loaded only with ota_url), `mcp_http` (the board's own
MCP endpoint as a service, loaded only with mcp_http). /main.py starts it."""
