"""Plain MCP transports, without the xiaozhi envelope: the ways a client reaches the
board's McpServer directly. Each serves through a Session of the application's server.
(Modules arrive with the features that need them.)"""
