"""The umcp firmware application: `app` (settings, board, MCP server and link on one
loop), `common_tools` (the self.* tools), `vision`, `wifi`. /main.py starts it."""
