"""The device's MCP resources: its status, system information, the recent log, the
alarms, the conversation (with a status screen) and the last photo. Custom scheme
`device:` (RFC 3986: a scheme of letters, then any path): they are read through the
device, never fetched elsewhere.

Registered at a client's first resources/* request (McpServer.add_resources_later), and
each read is an umcp.compat.OnDemand: this module is loaded for that and dropped after
(most sessions never read a resource). `tools` is the board's CommonTools."""

from umcp.compat import OnDemand, call_then_forget, forget_modules
from umcpfw.commontools import STATUS_URI

SYSTEM_URI = "device://system"
LOG_URI = "device://log"
PHOTO_URI = "device://photo/last"
_HERE = "umcpfw.resources"
_JSON = "application/json"


def register(tools, server):
    """The status, system, log, alarms, (with a status screen) conversation and (with a
    camera) last photo resources of `tools` on `server`."""
    server.add_resource(STATUS_URI, "status", OnDemand(_HERE, "read_status", tools), mime_type=_JSON,
                        description="Volume, brightness, theme, network and board facts, as "
                                    "self.get_device_status reports them; updated when they change")
    server.add_resource(SYSTEM_URI, "system", OnDemand(_HERE, "read_system", tools), mime_type=_JSON,
                        description="Firmware, board, runtime, heap, uptime and OTA partitions")
    server.add_resource(LOG_URI, "log", OnDemand(_HERE, "read_log", tools), mime_type="text/plain",
                        description="The last %d log lines of the device" % tools.log_ring.capacity)
    server.add_resource("device://alarms", "alarms", OnDemand("umcpfw.alarmlist", "read", tools),
                        mime_type=_JSON, description="The alarms and timers set, as self.alarms.list "
                                                     "reports them; updated when one is set, removed or due")
    view = tools.app.status_view if tools.app is not None else None
    if view is not None:  # a turn's text is kept only with a status screen
        server.add_resource("device://conversation", "conversation", OnDemand("umcpfw.turntext", "read", view),
                            mime_type=_JSON, description="The last lines of the conversation (what the "
                                                         "server heard, what it said) and its emotion, as "
                                                         "the status screen shows them")
    if tools.board.camera:
        server.add_resource(PHOTO_URI, "last photo", OnDemand(_HERE, "read_photo", tools),
                            mime_type="image/jpeg",
                            description="The JPEG the camera took last (none until a photo is taken)")
    forget_modules("umcp.registry")  # the server's registration code, loaded for these


def read_status(tools):
    return tools.get_device_status(None)


def read_system(tools):
    return call_then_forget("umcpfw.sysinfo", "get_system_info", tools, None)


def read_log(tools):
    return tools.log_ring.text()


def read_photo(tools):
    if tools.photo is None:
        raise KeyError(PHOTO_URI)  # not found: no photo yet, or no heap to keep it
    return tools.photo
