"""Another host on the network, on this machine: a network namespace of the test's own,
joined to this one by a veth pair (iproute2's `ip`, as root: .ci/run runs as root). The
tests that ask whether something listens beyond loopback connect from there, as another
machine on the LAN would, and never send a packet off this machine.

    with OtherHost() as lan:
        lan.address                      # this machine, as the other host reaches it
        lan.refused(port)                # nothing accepts a connection at address:port
        lan.handshake(path, port, token) # a WebSocket opening's HTTP status from there
"""

import os
import subprocess
import sys

_SCRIPT = r'''
import asyncio, socket, sys
import websockets
from websockets.exceptions import InvalidStatus
kind, host, port, rest = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
if kind == "refused":
    try:
        socket.create_connection((host, port), timeout=5).close()
        print("accepted")
    except ConnectionRefusedError:
        print("refused")
else:
    path, token = rest[0], rest[1] if len(rest) > 1 else None
    async def main():
        headers = {"Authorization": "Bearer " + token} if token else None
        try:
            async with websockets.connect("ws://%s:%d%s" % (host, port, path), additional_headers=headers,
                                          open_timeout=10):
                return 101
        except InvalidStatus as e:
            return e.response.status_code
    print(asyncio.run(main()))
'''


class OtherHost:
    """A namespace named after this process, with the address `peer` on its side of the
    veth pair and `address` on this machine's."""

    def __init__(self):
        subnet = 16 + os.getpid() % 200
        self.name = "umcp%d" % os.getpid()
        self.link = "umv%d" % (os.getpid() % 100000)
        self.address = "10.211.%d.1" % subnet
        self.peer = "10.211.%d.2" % subnet

    def _ip(self, *args, inside=False):
        command = (["ip", "netns", "exec", self.name] if inside else []) + ["ip", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise AssertionError("ip %s: %s (the test needs iproute2 and root)" % (" ".join(args), done.stderr.strip()))

    def __enter__(self):
        self._ip("netns", "add", self.name)
        try:
            self._ip("link", "add", self.link, "type", "veth", "peer", "name", self.link + "p")
            self._ip("link", "set", self.link + "p", "netns", self.name)
            self._ip("addr", "add", self.address + "/30", "dev", self.link)
            self._ip("link", "set", self.link, "up")
            self._ip("addr", "add", self.peer + "/30", "dev", self.link + "p", inside=True)
            self._ip("link", "set", self.link + "p", "up", inside=True)
            self._ip("link", "set", "lo", "up", inside=True)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        subprocess.run(["ip", "link", "del", self.link], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=30)

    def _run(self, *args):
        done = subprocess.run(["ip", "netns", "exec", self.name, sys.executable, "-c", _SCRIPT, *map(str, args)],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise AssertionError(done.stderr[-2000:])
        return done.stdout.strip()

    def refused(self, port):
        """True when nothing accepts a TCP connection from the other host at address:port."""
        return self._run("refused", self.address, port) == "refused"

    def handshake(self, path, port, token=None):
        """The HTTP status of a WebSocket opening from the other host to address:port/path
        (101: accepted), with `token` as its bearer token."""
        return int(self._run("handshake", self.address, port, path, *([token] if token else [])))
