"""python3 -m tools.bridge: every connected umcp device as one standard MCP server (stdio
or streamable HTTP): `bridge` (Bridge), `app` (the device panel as an MCP App; static/
holds its view adapter and the vendored ext-apps App class)."""

from .bridge import Bridge

__all__ = ["Bridge"]
