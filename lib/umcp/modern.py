"""Revision 2026-07-28's own answers: server/discover, the unsupported-version error and
a request's log level. McpServer imports this module at the first request that needs
one: a device whose clients all speak the legacy revisions (a xiaozhi backend) never
loads it."""

from .args import InvalidParams
from .compat import const, dumps
from .rpc import LOG_LEVELS, UNSUPPORTED_VERSION, error_frame, result_frame

_META_LOG_LEVEL = const("io.modelcontextprotocol/logLevel")

# What server/discover and the unsupported-version error list, newest first.
ALL_VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def discover_frame(server, id_json):
    """server/discover (revision 2026-07-28): versions, capabilities, identity.

    `listChanged` and `subscribe` are absent: on that revision they promise
    subscriptions/listen, which this server does not offer (its legacy clients
    get both through initialize). Logging is request-scoped there."""
    capabilities = {"tools": {}, "logging": {}}
    if server.has_resources():
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


def request_log_level(meta):
    """The log level a request's `_meta` asks for, as an index of LOG_LEVELS (None: none)."""
    level = meta.get(_META_LOG_LEVEL)
    if level is None:
        return None
    if level not in LOG_LEVELS:
        raise InvalidParams("unknown log level %s" % (level,))
    return LOG_LEVELS.index(level)
