"""Plain MCP transports, without the xiaozhi envelope: the ways a client reaches the
board's McpServer directly. Each serves through Sessions of the application's server.

`http`: MCP over Streamable HTTP on the board (config.json's mcp_http), on unet.httpd;
`httpmodern` (its 2026-07-28 requests) and `httpsession` (its legacy sessions, GET stream
and DELETE) are loaded by it at a family's first request, `httperrors` (its refusals'
texts) at the first refusal; `httpexchange` (a request's answer, the pieces all of them
share) with it.
`endpoint` (EndpointLink: the board connects out to an MCP endpoint, MCP 接入点, and
serves its tools to a xiaozhi assistant as plain JSON-RPC over the WebSocket); `http` (MCP
over Streamable HTTP on the board, config.json's mcp_http, on unet.httpd); `serial`
(SerialLink: MCP over the board's serial line, the USB cable, for the bridge's --serial;
umcpfw.mcpserial starts it). Imports nothing itself; take what you need."""
