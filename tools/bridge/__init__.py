"""python3 -m tools.bridge: a umcp device as a standard MCP server (stdio or streamable HTTP)."""

from tools.bridge.bridge import Bridge

__all__ = ["Bridge"]
