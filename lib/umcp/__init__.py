"""umcp: a Model Context Protocol server for MicroPython devices."""

from .schema import BOOLEAN, INTEGER, NUMBER, STRING, InvalidParams, Property, PropertyList
from .tool import ImageContent, McpTool
from .server import LATEST_VERSION, LOG_LEVELS, SUPPORTED_VERSIONS, McpServer, get_instance
