"""What the backend's web console knows: a Record per device (kept after it disconnects),
as the page's device snapshot, and the Photos it shows."""

import time


class Photo:
    def __init__(self, number, device_id, data, mime, source, question=None):
        self.number = number
        self.device_id = device_id
        self.data = data
        self.mime = mime
        self.source = source
        self.question = question
        self.time = time.time()

    def json(self):
        return {"id": self.number, "device": self.device_id, "mime": self.mime, "bytes": len(self.data),
                "source": self.source, "question": self.question, "time": self.time,
                "url": "/api/photos/%d" % self.number}


class Record:
    """What the console knows of one device, kept after it disconnects."""

    def __init__(self, device_id):
        self.id = device_id
        self.device = None  # the live Device while connected
        self.online = False
        self.ready = False
        self.error = None
        self.status = None  # self.get_device_status's answer
        self.info = None  # self.get_system_info's answer
        self.info_time = None
        self.connected_at = None
        self.disconnected_at = None

    def json(self):
        device, info, status = self.device, self.info or {}, self.status or {}
        hello = device.hello if device else {}
        network = status.get("network") or {}
        activation = info.get("activation") or hello.get("activation")
        return {
            "id": self.id,
            "online": self.online,
            "ready": self.ready,
            "error": self.error,
            "transport": hello.get("transport") or ("websocket" if device else None),
            "client_id": device.client_id if device else None,
            "session_id": device.session_id if device else None,
            "server": device.server_info if device else None,
            "protocol": device.protocol_version if device else None,
            "board": info.get("board") or status.get("board"),
            "firmware": info.get("firmware_version") or ((device.server_info or {}).get("version") if device else None),
            "runtime": info.get("runtime"),
            "free_heap": info.get("free_heap"),
            "uptime_s": info.get("uptime_s"),
            "uptime_read_at": self.info_time,
            "network": network,
            "signal": network.get("rssi"),
            "activation": activation if isinstance(activation, dict) else None,
            "status": self.status,
            "tools": len(device.tools) if device else 0,
            "connected_at": self.connected_at,
            "disconnected_at": self.disconnected_at,
        }
