"""Real MQTT brokers for the tests, on a free loopback port each.

amqtt (PyPI, in .venv) runs in-process, on its own event loop in a thread, so CPython
clients on the test's loop and MicroPython clients in a subprocess reach it alike.
Debian's mosquitto (`apt-get install mosquitto`) runs as a subprocess; the tests that use
it carry the `mosquitto` marker and run with `make test-mosquitto` (UMCP_MOSQUITTO=1).
Both can be stopped and started again on the same port (a broker restart)."""

import asyncio
import getpass
import logging
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
WITH_MOSQUITTO = os.environ.get("UMCP_MOSQUITTO") == "1"
# For parametrize: the mosquitto case, deselected unless UMCP_MOSQUITTO=1 (make test-mosquitto).
MOSQUITTO_PARAM = pytest.param("mosquitto", marks=[
    pytest.mark.mosquitto,
])
KINDS = ["amqtt", MOSQUITTO_PARAM]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("broker did not open port %d" % port)


class Amqtt:
    """amqtt's Broker in this process, on a loop of its own (a daemon thread)."""

    kind = "amqtt"

    def __init__(self, tmp=None, port=None):
        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self.port = port or free_port()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.broker = None

    def _call(self, coro, timeout=15):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self):
        from amqtt.broker import Broker

        config = {"listeners": {"default": {"type": "tcp", "bind": "127.0.0.1:%d" % self.port}},
                  "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin":
                              {"allow_anonymous": True}}}

        async def start():
            self.broker = Broker(config, loop=self.loop)
            await self.broker.start()

        self._call(start())
        wait_port(self.port)
        return self

    def stop(self):
        """Stop listening and drop every client at once (its own shutdown takes ~5 s)."""
        broker, self.broker = self.broker, None
        if broker is None:
            return

        async def stop():
            for server in broker._servers.values():
                server.instance.close()
            for session, handler in list(broker._sessions.values()):
                writer = getattr(handler, "writer", None)
                transport = getattr(getattr(writer, "_writer", None), "transport", None) if writer else None
                if transport is not None:
                    transport.abort()
            try:
                await asyncio.wait_for(broker.shutdown(), 0.5)
            except BaseException:
                pass

        self._call(stop())

    def close(self):
        self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class Mosquitto:
    """Debian's mosquitto as a subprocess; `users` {name: password} turns on authentication."""

    kind = "mosquitto"

    def __init__(self, tmp, port=None, users=None):
        if not os.path.exists(MOSQUITTO):
            pytest.fail("mosquitto is not installed (apt-get install mosquitto), and make test-mosquitto needs it")
        self.tmp = str(tmp)
        self.port = port or free_port()
        self.proc = None
        self.log = os.path.join(self.tmp, "mosquitto-%d.log" % self.port)
        lines = ["listener %d 127.0.0.1" % self.port, "persistence false",
                 "log_dest stderr", "log_type all",
                 # as root, mosquitto would switch to its own user (no access to tmp)
                 "user " + getpass.getuser()]
        if users:
            pw = os.path.join(self.tmp, "passwd-%d" % self.port)
            open(pw, "w").close()
            for name, password in users.items():
                subprocess.run([MOSQUITTO_PASSWD, "-b", pw, name, password], check=True)
            os.chmod(pw, 0o644)
            lines += ["allow_anonymous false", "password_file " + pw]
        else:
            lines.append("allow_anonymous true")
        conf = os.path.join(self.tmp, "mosquitto-%d.conf" % self.port)
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.argv = [MOSQUITTO, "-c", conf]

    def start(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT)
        wait_port(self.port)
        return self

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def close(self):
        self.stop()


def make_broker(kind, tmp, **kwargs):
    return (Mosquitto if kind == "mosquitto" else Amqtt)(tmp, **kwargs)


@pytest.fixture(params=KINDS)
def broker(request, tmp_path):
    """A running broker of each kind (amqtt always, mosquitto with UMCP_MOSQUITTO=1)."""
    b = make_broker(request.param, tmp_path).start()
    yield b
    b.close()
