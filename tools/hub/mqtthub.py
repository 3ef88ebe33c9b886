"""Devices over MQTT in one object: the broker and the credentials beside the MqttServer."""

import asyncio
from urllib.parse import unquote, urlsplit

from .. import devicelib  # noqa: F401 (lib/ on sys.path: unet.mqtt)
from .broker import BACKEND_USER, PREFIX, Credentials, EmbeddedBroker, MosquittoFiles
from .mqtt import MqttServer
from unet.mqtt import MqttRefused


def parse_mqtt_url(url):
    """mqtt://[user[:password]@]host[:port] -> (host, port, user, password)."""
    parts = urlsplit(url if "://" in url else "mqtt://" + url)
    if parts.scheme != "mqtt":
        raise ValueError("expected mqtt://host:port, got %r" % url)
    return (parts.hostname or "127.0.0.1", parts.port or 1883,
            unquote(parts.username) if parts.username else None,
            unquote(parts.password) if parts.password else None)


class MqttHub:
    """Devices over MQTT in one object: the credentials, the broker (the embedded amqtt one,
    or yours at mqtt://[user:password@]host:port, whose mosquitto password file this keeps
    when `passwd` is given) and the MqttServer. What a program that already runs a
    XiaozhiServer adds to take MQTT devices too (tools.hub.front.DeviceFront does):

        hub = MqttHub("embedded", host, public_host)
        await hub.start(on_device=..., on_notification=..., on_gone=..., devices=server.devices)
        hub.credentials.issue(device_id, hub.endpoint)   # what an OTA answer hands out
        await hub.close()
    """

    def __init__(self, mqtt="embedded", host="127.0.0.1", public_host="127.0.0.1", port=0, passwd=None,
                 pidfile=None, secret=None, backend_password=None, issued=None, idle_timeout=None, log=print,
                 name="backend"):
        """idle_timeout: the MqttServer's (None: its default); name: who speaks in the log."""
        self.mqtt = mqtt
        self.host = host
        self.public_host = public_host
        self.port = port
        self.passwd = passwd
        self.pidfile = pidfile
        self.idle_timeout = idle_timeout
        self.log = log
        self.name = name
        self.credentials = Credentials(secret, backend_password)
        self.credentials.devices.update(issued or {})
        self.broker = None  # EmbeddedBroker
        self.mosquitto = None  # MosquittoFiles
        self.endpoint = None  # host:port, as devices reach the broker
        self.server = None  # MqttServer

    async def start(self, **server_options):
        """Start the broker (embedded) or prepare yours, then the MqttServer with
        `server_options` (MqttServer's arguments: callbacks, devices, ...); returns it."""
        if self.mqtt == "embedded":
            self.broker = EmbeddedBroker(self.credentials)
            broker_port = await self.broker.start(self.host, self.port)
            broker_host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
            user, password = BACKEND_USER, self.credentials.backend_password
            self.endpoint = "%s:%d" % (self.public_host, broker_port)
            self.log("%s: embedded MQTT broker (amqtt) at %s, per-device credentials" % (self.name, self.endpoint))
        else:
            broker_host, broker_port, user, password = parse_mqtt_url(self.mqtt)
            if self.passwd:  # we write the broker's password file: our own login is ours to pick
                if password:
                    self.credentials.backend_password = password
                user, password = BACKEND_USER, self.credentials.backend_password
                self.mosquitto = MosquittoFiles(self.credentials, self.passwd, self.pidfile, log=self.log)
                self.mosquitto.signal()
            reachable = self.public_host if broker_host in ("127.0.0.1", "localhost") else broker_host
            self.endpoint = "%s:%d" % (reachable, broker_port)
            self.log("%s: MQTT broker at %s:%d" % (self.name, broker_host, broker_port))
        server_options.setdefault("names", self.credentials.devices)
        server_options.setdefault("public_host", self.public_host)
        if self.idle_timeout:
            server_options.setdefault("idle_timeout", self.idle_timeout)
        self.server = MqttServer(**server_options)
        attempts = 25 if self.passwd else 1  # mosquitto reads its password file on SIGHUP, soon
        for attempt in range(attempts):
            try:
                udp_port = await self.server.start(broker_host, broker_port, user, password, udp_host=self.host)
                break
            except MqttRefused:
                if attempt == attempts - 1:
                    raise
                await asyncio.sleep(0.2)
        self.log("%s: devices over MQTT on %s/<device>/up and %s/<device>/down, UDP audio on port %d"
                 % (self.name, PREFIX, PREFIX, udp_port))
        return self.server

    async def close(self):
        if self.server is not None:
            await self.server.close()
        if self.broker is not None:
            await self.broker.close()
