"""Notifications the server sends of its own accord: notify(), a tool's log lines
(notifications/message) and progress, logging/setLevel, and the list-change
announcements. McpServer imports this module at the first of them and keeps it: a
device whose tools never log and whose lists never change (a xiaozhi session) never
loads it. Reaches the server through its public names (umcp.server's docstring)."""

import asyncio
import gc

from .args import InvalidParams
from .compat import dumps, get_logger
from .rpc import LOG_LEVELS

_log = get_logger("umcp")


async def notify(server, method, params=None, session=None):
    """A notification to `session`, or to every client. One that finds no heap (to be
    built or sent) is dropped and counted (`server.notices_lost`), never raised."""
    try:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        pieces = (dumps(message),)
        message = params = None
        if session is not None:
            await server.send(session, pieces)
            return
        for session in server.sessions[:]:  # a send may end a session
            if session.send is not None:  # a default session no transport uses
                await server.send(session, pieces)
    except MemoryError:
        message = params = pieces = None
        lost(server, method)


async def log(server, level, data, logger=None):
    """A notifications/message, to the client of the running call when that call's task
    logs it, else (outside a call, or from a task of its own) to every client; each
    unless it set a higher level.

    Revision 2026-07-28 makes logging request-scoped: during a call that came in that
    form, only if its `_meta` asked for this level or a lower one; outside a call,
    nothing to a client whose latest request came in that form.
    """
    if level not in LOG_LEVELS:
        raise ValueError("unknown log level %s" % level)
    rank = LOG_LEVELS.index(level)
    call = server.current_call()
    try:
        params = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
    except MemoryError:
        lost(server, "notifications/message")
        return
    if call is not None:
        if call.modern:
            if call.log_level is None or rank < call.log_level or call.answering:
                return
        elif rank < call.session.min_log_level:
            return
        await notify(server, "notifications/message", params, call.session)
        return
    for session in server.sessions[:]:
        if rank >= session.min_log_level and not session.modern and session.send is not None:
            await notify(server, "notifications/message", params, session)


async def progress(server, value, total=None, message=None):
    """notifications/progress for the running call; True if it went out (see
    McpServer.progress)."""
    if not server.progress_requested():
        return False
    call = server.current_call()
    if call.answering:
        return False
    if call.last_progress is not None and not value > call.last_progress:
        _log.warning("progress %s does not exceed %s: not sent", value, call.last_progress)
        return False
    call.last_progress = value
    try:
        params = {"progressToken": call.progress_token, "progress": value}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
    except MemoryError:
        lost(server, "notifications/progress")
        return False
    count = server.notices_lost
    await notify(server, "notifications/progress", params, call.session)
    return count == server.notices_lost


def set_level(session, params):
    """logging/setLevel: the session's lowest level from now on."""
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams("unknown log level %s" % (level,))
    session.min_log_level = LOG_LEVELS.index(level)


def lost(server, method):
    gc.collect()
    server.notices_lost += 1
    _log.warning("out of memory: a %s was dropped", method)


def announce(server, method):
    """One `method` notification (a list changed) per burst of changes, to the clients
    that initialized: the task runs after the burst."""
    if method in server.announcing:
        return
    server.announcing.append(method)
    asyncio.create_task(_announce(server, method))


async def _announce(server, method):
    server.announcing.remove(method)
    message = '{"jsonrpc":"2.0","method":"%s"}' % method
    for session in server.sessions[:]:  # a send may end a session
        if session.protocol is not None and session.send is not None:
            await server.send(session, (message,))
