"""The messages McpServer's message path leaves to this module: every request but
tools/call, tools/list, ping and initialize (resources/*, server/discover,
logging/setLevel, a legacy method in revision 2026-07-28's form, an unknown method), and
every notification but notifications/initialized (notifications/cancelled above all).
A connected device's session sends none of them, so the server loads this module for
each (umcp.compat.call_then_forget, await_then_forget) and drops it again. Reaches the
server through its public names (umcp.server's docstring)."""

from .compat import const, get_logger
from .rpc import EMPTY_RESULT, METHOD_NOT_FOUND, error_frame, result_frame, valid_id

# Methods revision 2026-07-28 removed: a request in its form gets -32601 for them
# (resources/subscribe and unsubscribe: umcp.resource answers so).
_LEGACY_ONLY = const(("ping", "initialize", "logging/setLevel"))

_log = get_logger("umcp")


async def answer(server, session, id_json, method, params, modern):
    """The frame answering `session`'s request `method` (`modern`: in revision
    2026-07-28's form). InvalidParams for params it cannot take."""
    if method.startswith("resources/"):
        from .resource import request

        return await request(server, session, id_json, method, params, modern)
    if method == "server/discover":
        from .modern import discover_frame

        return discover_frame(server, id_json)
    if modern and method in _LEGACY_ONLY:
        # Gone from revision 2026-07-28 (subscriptions/listen replaces subscribe).
        return error_frame(id_json, METHOD_NOT_FOUND, "method not found in 2026-07-28: " + method)
    if method == "logging/setLevel":
        from .notices import set_level

        set_level(session, params)
        return result_frame(id_json, EMPTY_RESULT)
    # Answered at once: a client probing for a method must not wait.
    return error_frame(id_json, METHOD_NOT_FOUND, "method not found: " + method)


def notification(server, session, method, params):
    """Act on `session`'s notification `method`: a cancellation, or nothing (logged)."""
    if method == "notifications/cancelled":
        cancel(server, session, params.get("requestId"))
    else:
        _log.info("ignored notification %s", method)


def cancel(server, session, request_id):
    """notifications/cancelled: `session`'s call `request_id` is no longer owed a
    response. A queued call is dropped, the running one stopped (unless its answer is
    on its way already); an id of no call of this client's is ignored."""
    if not valid_id(request_id):
        return
    call = server.running
    if call is not None and call.session is session and _same_id(call.id, request_id):
        if not call.answering:  # too late once the response is on its way
            server.stop_call(call)
        return
    queue = server.queue
    for index in range(len(queue)):
        call = queue[index]
        if call.session is session and _same_id(call.id, request_id):
            del queue[index]
            return


def _same_id(a, b):
    # 1 and "1" are different ids.
    return type(a) is type(b) and a == b
