"""Plain MCP transports, without the xiaozhi envelope: the ways a client reaches the
board's McpServer directly. Each serves through Sessions of the application's server.
`http`: MCP over Streamable HTTP on the board (config.json's mcp_http), on unet.httpd."""
