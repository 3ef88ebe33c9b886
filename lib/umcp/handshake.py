"""The legacy era's initialize handshake: the version negotiated, the capabilities and
the server's identity, and the vision endpoint a client may offer. McpServer loads this
module for each initialize request and drops it again: a client sends one per session,
and the heap serves the session better without it meanwhile."""

from .args import InvalidParams
from .compat import dumps, get_logger, iscoroutine
from .rpc import describe, result_frame

_log = get_logger("umcp")


async def initialize_frame(server, session, id_json, params, supported, default):
    """The answer to `session`'s initialize request (`supported`: the versions it may
    negotiate, newest last; `default`: the one a request that names none gets)."""
    requested = params.get("protocolVersion", default)
    if not isinstance(requested, str):
        raise InvalidParams("protocolVersion must be a string")
    version = requested if requested in supported else supported[-1]
    capabilities = params.get("capabilities")
    vision = capabilities.get("vision") if isinstance(capabilities, dict) else None
    if isinstance(vision, dict) and isinstance(vision.get("url"), str):
        await _offer_vision(server, vision["url"], vision.get("token"))
    session.protocol = version
    session.modern = False
    session.subscriptions = ()  # a new session: the old one's subscriptions are gone
    capabilities = {"tools": {"listChanged": True}, "logging": {}}
    if server.has_resources():
        capabilities["resources"] = {"subscribe": True, "listChanged": True}
    max_message = session.max_message or server.max_message
    if max_message:
        capabilities["experimental"] = {"messageLimit": {"maxBytes": max_message}}
    result = {
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": {"name": server.name, "version": server.version},
    }
    return result_frame(id_json, (dumps(result),))


async def _offer_vision(server, url, token):
    if server.vision is None:
        return
    try:
        done = server.vision(url, token if isinstance(token, str) else "")
        if iscoroutine(done):
            await done
    except Exception as e:
        _log.error("vision callback failed: %s", describe(e))
