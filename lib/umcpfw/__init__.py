"""The umcp firmware application: `app` (settings, board, MCP server and link on one
loop), `boot` (what app builds once at the start: loaded for that only), `linkconfig`
(where the board connects, and the link for it: loaded for each),
`common_tools` (the self.* tools), `common_setup` (their
registration, loaded at boot only), `common_texts` and `common_schemas` (their long
descriptions and output schemas, loaded only while a tools/list entry is written), `upgrading` (self.upgrade_firmware and
auto_upgrade, loaded only while an upgrade runs), `resources` (device://status, system, log,
photo/last; `resource_entries` registers them at the first resources/* request), `vision`
(the photo upload), `wifi` (the station's upkeep, resident), `station` (its bring-up and the
clock, loaded for that only), `fleet` (the
OTA check's side of the application, loaded only with ota_url), `mcp_http` (the board's own
MCP endpoint as a service, loaded only with mcp_http), `mcp_serial` (the firmware served
over the serial line instead of a network: the bridge's --serial starts it through the raw
REPL; main.py never loads it), `wifisetup` (the access point and
setup page, loaded only in that mode), `statusview` (the status screen, loaded only on a
board with one). /main.py starts it."""
