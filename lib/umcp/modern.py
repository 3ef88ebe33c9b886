"""Revision 2026-07-28's own answers: server/discover and the unsupported-version error.
McpServer imports this module at the first request that needs one: a device whose
clients all speak the legacy revisions (a xiaozhi backend) never loads it."""

from .compat import dumps
from .rpc import UNSUPPORTED_VERSION, error_frame, result_frame

# What server/discover and the unsupported-version error list, newest first.
ALL_VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def discover_frame(server, id_json):
    """server/discover (revision 2026-07-28): versions, capabilities, identity.

    `listChanged` and `subscribe` are absent: on that revision they promise
    subscriptions/listen, which this server does not offer (its legacy clients
    get both through initialize). Logging is request-scoped there."""
    capabilities = {"tools": {}, "logging": {}}
    if server._resources or server._templates or server._later:
        capabilities["resources"] = {}
    result = {
        "resultType": "complete",
        "supportedVersions": ALL_VERSIONS,
        "capabilities": capabilities,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": server.name, "version": server.version}},
        "ttlMs": 0,
        "cacheScope": "private",
    }
    return result_frame(id_json, (dumps(result),))


def unsupported_version_frame(id_json, requested):
    """Revision 2026-07-28's UnsupportedProtocolVersionError."""
    if not isinstance(requested, str):
        requested = dumps(requested)
    data = dumps({"supported": ALL_VERSIONS, "requested": requested})
    return error_frame(id_json, UNSUPPORTED_VERSION, "Unsupported protocol version", data)
