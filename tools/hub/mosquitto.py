"""A local mosquitto (Debian's) as the backend takes an external broker (docs/mqtt.md): a
config written here (loopback listener on a free port, no anonymous login, the password
file the backend keeps, umcp's ACL, a pid file the backend SIGHUPs), started and stopped as
a child. The fleet bench and make test-mosquitto run it."""

import os
import socket
import subprocess
import time

from ..childprocess import stop_process
from .broker import MOSQUITTO_ACL

MOSQUITTO = "/usr/sbin/mosquitto"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Mosquitto:
    def __init__(self, directory, port=None):
        if not os.access(MOSQUITTO, os.X_OK):
            raise FileNotFoundError("%s is not installed (Debian: apt-get install mosquitto)" % MOSQUITTO)
        self.dir = str(directory)
        self.port = port or free_port()
        self.passwd = os.path.join(self.dir, "passwd")
        self.pidfile = os.path.join(self.dir, "mosquitto.pid")
        self.log = os.path.join(self.dir, "mosquitto.log")
        self.config = os.path.join(self.dir, "mosquitto.conf")
        self.process = None
        with open(os.path.join(self.dir, "acl"), "w") as acl:
            acl.write(MOSQUITTO_ACL)
        if not os.path.exists(self.passwd):
            open(self.passwd, "w").close()
        with open(self.config, "w") as config:
            config.write("\n".join([
                "listener %d 127.0.0.1" % self.port,
                "allow_anonymous false",
                "password_file " + self.passwd,
                "acl_file " + os.path.join(self.dir, "acl"),
                "pid_file " + self.pidfile,
                "persistence false",
                "max_packet_size 65536",
                "user root" if os.geteuid() == 0 else "",
                "log_dest file " + self.log,
                "log_type error", "log_type warning", "log_type notice", "",
            ]))

    @property
    def url(self):
        return "mqtt://127.0.0.1:%d" % self.port

    def start(self, timeout=10):
        self.process = subprocess.Popen([MOSQUITTO, "-c", self.config], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("mosquitto exited with %s: %s" % (self.process.returncode, self.read_log()))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen on %d: %s" % (self.port, self.read_log()))

    def stop(self):
        if self.process is not None:
            stop_process(self.process)
        self.process = None

    def read_log(self):
        try:
            with open(self.log) as source:
                return source.read()[-2000:]
        except OSError:
            return ""
