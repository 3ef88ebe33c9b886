# The device's resources registered on the server (umcpfw.resources.DeviceResources, at
# a client's first resources/* request): their names, types and descriptions. Loaded for
# that once and dropped again.
from umcpfw.resources import LOG_URI, PHOTO_URI, STATUS_URI, SYSTEM_URI


def register(resources, server):
    """`resources`' status, system, log and (with a camera) last photo on `server`."""
    server.add_resource(STATUS_URI, "status", resources.read_status, mime_type="application/json",
                        description="Volume, brightness, theme, network and board facts, as "
                                    "self.get_device_status reports them; updated when they change")
    server.add_resource(SYSTEM_URI, "system", resources.read_system, mime_type="application/json",
                        description="Firmware, board, runtime, heap, uptime and OTA partitions")
    server.add_resource(LOG_URI, "log", resources.ring.text, mime_type="text/plain",
                        description="The last %d log lines of the device" % resources.ring.capacity)
    if resources.board.camera:
        server.add_resource(PHOTO_URI, "last photo", resources.read_photo, mime_type="image/jpeg",
                            description="The JPEG the camera took last (none until a photo is taken)")
