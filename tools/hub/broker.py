"""MQTT credentials per device, and the brokers that enforce them.

Topic layout (docs/mqtt.md): a device named N (its Device-Id with `_` for `:`,
topic_name) publishes on `umcp/N/up` and subscribes to `umcp/N/down`. MQTT 3.1.1 has no
sender in PUBLISH, so the sender is in the topic, and the broker's ACL binds that topic to
the device's credentials: no device can speak for another.

Credentials: user name N, client id `umcp-N`, password the URL-safe base64 HMAC-SHA256 of
`client_id|username` under the backend's secret, issued by the OTA endpoint. Enforced by
EmbeddedBroker (amqtt in this process: UmcpAuthPlugin and the topic check ask the
Credentials object) or MosquittoFiles (a mosquitto `password_file` rewritten as
credentials are issued, then SIGHUP; a static pattern ACL).
"""

import asyncio
import base64
import dataclasses
import hashlib
import hmac
import logging
import os
import re
import secrets
import signal

from amqtt.broker import Broker
from amqtt.contexts import Action
from amqtt.mqtt.constants import QOS_1, QOS_2
from amqtt.plugins.base import BaseAuthPlugin

PREFIX = "umcp"
BACKEND_USER = "umcp-backend"
_TOPIC_SAFE = re.compile(r"[^A-Za-z0-9_.-]")

_registries = {}  # id -> Credentials, for the amqtt plugins (amqtt builds them from a path)


def topic_name(device_id):
    """The device's name in MQTT topics and credentials: the MAC with `_` for `:` (as the
    xiaozhi gateway writes it); anything outside [A-Za-z0-9_.-] becomes `_` too, so a
    device can never name a wildcard (`+`, `#`) or another level (`/`)."""
    return _TOPIC_SAFE.sub("_", device_id)


def up_topic(name):
    return "%s/%s/up" % (PREFIX, name)


def down_topic(name):
    return "%s/%s/down" % (PREFIX, name)


class Credentials:
    """The MQTT identities this backend issued, and the backend's own."""

    def __init__(self, secret=None, backend_password=None):
        self.secret = secret or secrets.token_bytes(32)
        self.backend_password = backend_password or secrets.token_urlsafe(18)
        self.devices = {}  # user name -> device id (issued so far)
        self.listeners = []  # called with (username, password) when one is issued

    def password(self, client_id, username):
        # URL-safe base64 without padding: it fits mqtt:// URLs and password files as it is
        digest = hmac.new(self.secret, ("%s|%s" % (client_id, username)).encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def issue(self, device_id, endpoint):
        """The OTA answer's `mqtt` block for `device_id`."""
        name = topic_name(device_id)
        client_id = "%s-%s" % (PREFIX, name)
        password = self.password(client_id, name)
        fresh = name not in self.devices
        self.devices[name] = device_id
        if fresh:
            for listener in self.listeners:
                listener(name, password)
        return {"endpoint": endpoint, "client_id": client_id, "username": name, "password": password,
                "publish_topic": up_topic(name), "subscribe_topic": down_topic(name)}

    def check(self, client_id, username, password):
        """True for the backend's own login and for issued device credentials (the client
        id must be the one issued with them)."""
        if username == BACKEND_USER:
            return hmac.compare_digest(password or "", self.backend_password)
        own = "%s-%s" % (PREFIX, username)
        if username not in self.devices or not (client_id == own or (client_id or "").startswith(own + "@")):
            return False  # a device may use its own client id, or that id + "@anything" for a second link
        return hmac.compare_digest(password or "", self.password(own, username))

    @staticmethod
    def allowed(username, topic, action):
        """The ACL: a device publishes only to its up topic and subscribes only to its down
        topic; the backend may do anything."""
        if username == BACKEND_USER:
            return True
        if action == "publish":
            return topic == up_topic(username)
        if action == "subscribe":
            return topic == down_topic(username)
        return True  # receive: only what it could subscribe to reaches it


class UmcpAuthPlugin(BaseAuthPlugin):
    @dataclasses.dataclass
    class Config:
        registry: str = ""

    async def authenticate(self, *, session):
        credentials = _registries.get(self.config.registry)
        if credentials is None:
            return False
        return credentials.check(session.client_id, session.username, session.password)


class _Subscriptions(dict):
    """amqtt's subscription table (topic filter -> [(session, qos)]), indexed for a fleet.

    amqtt walks the whole table for every message it broadcasts (a thousand devices, a
    thousand filters, each compared and logged), and walks it across awaits, so a
    subscription made meanwhile ends the walk with 'dictionary changed size during
    iteration', and the broker's broadcast loop with it. Here `items()` hands out a
    snapshot, and the filters with wildcards are kept apart: a message's subscribers are
    the exact filter equal to its topic plus the matching wildcard filters."""

    def __init__(self):
        super().__init__()
        self.wildcards = set()

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        if "+" in key or "#" in key:
            self.wildcards.add(key)

    def __delitem__(self, key):
        super().__delitem__(key)
        self.wildcards.discard(key)

    def clear(self):
        super().clear()
        self.wildcards.clear()

    def items(self):
        return list(super().items())


class _UmcpBroker(Broker):
    """amqtt's Broker with fleet-sized changes, none in what a client sees: the topic
    check is Credentials.allowed called directly (amqtt's plugin path starts a task per
    check, per message and subscriber); a broadcast looks its subscribers up in the
    indexed table; a new subscription skips the retained-message walk when nothing is
    retained (amqtt walks every filter for every connecting client); a disconnect drops
    the session's subscriptions without a log line per filter."""

    def __init__(self, config, credentials):
        super().__init__(config)
        self.credentials = credentials
        self._subscriptions = _Subscriptions()

    async def _topic_filtering(self, session, topic, action):
        kind = {Action.PUBLISH: "publish", Action.SUBSCRIBE: "subscribe"}.get(action, "receive")
        return self.credentials.allowed(session.username, topic, kind)

    async def _publish_retained_messages_for_subscription(self, subscription, session):
        if self._retained_messages:
            await super()._publish_retained_messages_for_subscription(subscription, session)

    async def _del_all_subscriptions(self, session):
        # amqtt logs every filter it looks at (formatting the session each time): O(N) per
        # disconnect with a formatted string per filter; here a plain scan
        for topic_filter in list(dict.keys(self._subscriptions)):
            subscribers = dict.get(self._subscriptions, topic_filter)
            kept = [entry for entry in subscribers if entry[0].client_id != session.client_id]
            if len(kept) == len(subscribers):
                continue
            if kept:
                subscribers[:] = kept
            else:
                del self._subscriptions[topic_filter]

    async def _run_broadcast(self, running_tasks):
        broadcast = await self._broadcast_queue.get()
        topic = broadcast["topic"]
        targets = list(dict.get(self._subscriptions, topic, ()))
        for pattern in list(self._subscriptions.wildcards):
            if self._matches(topic, pattern):
                targets.extend(dict.get(self._subscriptions, pattern, ()))
        for session, subscribed_qos in targets:
            qos = broadcast.get("qos", subscribed_qos)
            if not self.credentials.allowed(session.username, topic, "receive"):
                continue
            if session.transitions.state != "connected":
                # kept for a client that comes back, as amqtt does (QoS 1/2, persistent session)
                if not session.clean_session and qos in (QOS_1, QOS_2) and not session.is_anonymous:
                    await self._retain_broadcast_message(broadcast, qos, session)
                continue
            handler = self._get_handler(session)
            if handler:
                running_tasks.append(asyncio.ensure_future(
                    handler.mqtt_publish(topic, broadcast["data"], qos, retain=False)))


class EmbeddedBroker:
    """amqtt inside this process, accepting only `credentials`."""

    def __init__(self, credentials):
        self.credentials = credentials
        self._broker = None
        self._id = secrets.token_hex(8)
        self.port = None

    async def start(self, host="127.0.0.1", port=0):
        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        _registries[self._id] = self.credentials
        config = {
            "listeners": {"default": {"type": "tcp", "bind": "%s:%d" % (host, port)}},
            "plugins": {"tools.hub.broker.UmcpAuthPlugin": {"registry": self._id}},
        }
        self._broker = _UmcpBroker(config, self.credentials)
        await self._broker.start()
        self.port = self._broker._servers["default"].instance.sockets[0].getsockname()[1]
        return self.port

    async def close(self):
        if self._broker is not None:
            try:
                await self._broker.shutdown()
            finally:
                self._broker = None
                _registries.pop(self._id, None)


def mosquitto_hash(password, salt=None, iterations=101):
    """A mosquitto password_file hash ($7$: PBKDF2-HMAC-SHA512, 12-byte salt)."""
    salt = salt or os.urandom(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    return "$7$%d$%s$%s" % (iterations, base64.b64encode(salt).decode(), base64.b64encode(digest).decode())


MOSQUITTO_ACL = """# umcp: the backend may do anything; each device only its own topics
user %s
topic readwrite %s/#

pattern write %s/%%u/up
pattern read %s/%%u/down
""" % (BACKEND_USER, PREFIX, PREFIX, PREFIX)


class MosquittoFiles:
    """Keeps a mosquitto password_file in step with `credentials` (the backend's own user
    and every device issued so far) and tells mosquitto to reload it (SIGHUP to the pid in
    `pidfile`; several issues within `delay` seconds make one reload)."""

    def __init__(self, credentials, passwd_path, pidfile=None, delay=0.05, log=print):
        self.credentials = credentials
        self.passwd_path = passwd_path
        self.pidfile = pidfile
        self.delay = delay
        self.log = log
        self._lines = {BACKEND_USER: mosquitto_hash(credentials.backend_password)}
        for name in credentials.devices:  # issued before a restart (a saved state)
            self._lines[name] = mosquitto_hash(credentials.password("%s-%s" % (PREFIX, name), name))
        self._reload = None
        self._dirty = False
        self.reloaded = asyncio.Event()
        credentials.listeners.append(self._issued)
        self.write()

    def write(self):
        temporary = self.passwd_path + ".tmp"
        with open(temporary, "w") as out:
            for user, line in self._lines.items():
                out.write("%s:%s\n" % (user, line))
        os.replace(temporary, self.passwd_path)

    def _issued(self, username, password):
        self._lines[username] = mosquitto_hash(password)
        self._dirty = True
        self.reloaded.clear()
        if self._reload is None or self._reload.done():
            self._reload = asyncio.get_running_loop().create_task(self._write_and_reload())

    async def _write_and_reload(self):
        while self._dirty:
            await asyncio.sleep(self.delay)
            self._dirty = False
            self.write()
            self.signal()
        self.reloaded.set()

    def signal(self):
        if not self.pidfile:
            return
        try:
            with open(self.pidfile) as source:
                os.kill(int(source.read().strip()), signal.SIGHUP)
        except (OSError, ValueError) as error:
            self.log("mqtt: could not tell mosquitto to reload %s: %s" % (self.passwd_path, error))
