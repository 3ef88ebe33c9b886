"""umcp discover: the boards on the local network that serve MCP over HTTP, found by their
mDNS service record (`_mcp._tcp.local`, which a board with config.json's mcp_http answers:
lib/unet/mdns.py), each with its URL and whether it wants a token. One DNS query from an
ephemeral port (RFC 6762's one-shot query: each responder answers it by unicast), sent to
the multicast group 224.0.0.251:5353, or to one address (`--address`: a board, or a test's
loopback responder); the standard library only."""

import argparse
import json
import os
import socket
import struct
import sys
import time

from ..paths import module_prog

GROUP = "224.0.0.251"
MDNS_PORT = 5353
SERVICE = "_mcp._tcp.local"
PTR, TXT, SRV, A = 12, 16, 33, 1


def query_packet(qid, name=SERVICE, qtype=PTR):
    """A DNS query for `name` (dotted) of `qtype` with the id `qid`, as bytes."""
    wire = b"".join(bytes((len(label),)) + label for label in (part.encode() for part in name.split("."))) + b"\0"
    return struct.pack(">HHHHHH", qid, 0, 1, 0, 0, 0) + wire + struct.pack(">HH", qtype, 1)


def _name(data, pos):
    """(the dotted name at data[pos], where it ends), compression pointers followed;
    ValueError for a name that runs off the packet or loops."""
    labels, end, hops = [], None, 0
    while True:
        if pos >= len(data):
            raise ValueError("a name runs past the end of the packet")
        length = data[pos]
        if length >= 0xC0:
            if pos + 1 >= len(data) or hops > 16:
                raise ValueError("a bad compression pointer")
            if end is None:
                end = pos + 2
            pos = ((length & 0x3F) << 8) | data[pos + 1]
            hops += 1
        elif length > 63:
            raise ValueError("a label of an unknown type")
        elif length == 0:
            return ".".join(labels), end if end is not None else pos + 1
        else:
            labels.append(data[pos + 1:pos + 1 + length].decode("utf-8", "replace"))
            pos += length + 1


def records(data):
    """The resource records of a DNS response `data`: [(name lowercased, type, value)]
    where value is the target name (PTR), (port, target) (SRV), {key: value} (TXT), the
    dotted address (A) or the raw bytes (other types). ValueError for a malformed packet;
    [] for a query."""
    if len(data) < 12:
        raise ValueError("shorter than a DNS header")
    _, flags, qd, an, ns, ar = struct.unpack_from(">HHHHHH", data)
    if not flags & 0x8000:
        return []
    pos = 12
    for _ in range(qd):
        _, pos = _name(data, pos)
        pos += 4
    found = []
    for _ in range(an + ns + ar):
        name, pos = _name(data, pos)
        if pos + 10 > len(data):
            raise ValueError("a record runs past the end of the packet")
        rtype, _, _, size = struct.unpack_from(">HHIH", data, pos)
        pos += 10
        rdata = data[pos:pos + size]
        if len(rdata) != size:
            raise ValueError("a record's data runs past the end of the packet")
        if rtype == PTR:
            value = _name(data, pos)[0].lower()
        elif rtype == SRV:
            value = (struct.unpack_from(">H", data, pos + 4)[0], _name(data, pos + 6)[0].lower())
        elif rtype == TXT:
            value, i = {}, 0
            while i < len(rdata):
                text = rdata[i + 1:i + 1 + rdata[i]].decode("utf-8", "replace")
                key, _, val = text.partition("=")
                value[key.lower()] = val
                i += 1 + rdata[i]
        elif rtype == A and size == 4:
            value = socket.inet_ntoa(rdata)
        else:
            value = rdata
        found.append((name.lower(), rtype, value))
        pos += size
    return found


def boards(found):
    """The boards in `found` (records()' tuples, from any number of responses), each a dict:
    name (the instance), host (<hostname>.local), address (None without an A record), port,
    path, auth ("token", "none", or "" when the record has none), url (by address, else by
    name) and url_by_name."""
    ptr = [value for name, rtype, value in found if rtype == PTR and name == SERVICE.lower()]
    srv = dict((name, value) for name, rtype, value in found if rtype == SRV)
    txt = dict((name, value) for name, rtype, value in found if rtype == TXT)
    a = dict((name, value) for name, rtype, value in found if rtype == A)
    result = []
    for instance in sorted(set(ptr) | set(name for name in srv if name.endswith("." + SERVICE.lower()))):
        if instance not in srv:
            continue
        port, host = srv[instance]
        text = txt.get(instance, {})
        path = text.get("path") or "/mcp"
        where = "" if port == 80 else ":%d" % port
        address = a.get(host)
        by_name = "http://%s%s%s" % (host, where, path)
        result.append({"name": instance[:-len(SERVICE) - 1], "host": host, "address": address, "port": port,
                       "path": path, "auth": text.get("auth", ""),
                       "url": "http://%s%s%s" % (address, where, path) if address else by_name,
                       "url_by_name": by_name})
    return result


def discover(timeout=2.0, address=None, port=MDNS_PORT):
    """Ask for `_mcp._tcp.local` and gather the answers for `timeout` seconds: boards()'s
    list. `address` None asks the multicast group (hop limit 1: the local link only);
    given, that address alone (unicast), at UDP `port`. OSError when the query cannot be
    sent."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind(("127.0.0.1" if address in ("127.0.0.1", "localhost") else "0.0.0.0", 0))
        if address is None:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        qid = int.from_bytes(os.urandom(2), "big")
        sock.sendto(query_packet(qid), (address or GROUP, port))
        found = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            try:
                data, _ = sock.recvfrom(9000)
            except socket.timeout:
                break
            try:
                if struct.unpack_from(">H", data)[0] in (qid, 0):
                    found += records(data)
            except (ValueError, struct.error):
                continue  # another responder's malformed answer: not ours to judge
        return boards(found)
    finally:
        sock.close()


def parse_args(argv=None, prog=module_prog("bridge.discover")):
    parser = argparse.ArgumentParser(prog=prog, description=(
        "List the boards on the local network that serve MCP over HTTP (config.json's mcp_http), "
        "found by their mDNS service record _mcp._tcp.local, with their URL and auth."))
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to gather answers (default 2)")
    parser.add_argument("--address", metavar="HOST",
                        help="ask this address only (default: the mDNS group 224.0.0.251)")
    parser.add_argument("--port", type=int, default=MDNS_PORT, help="UDP port to ask (default 5353)")
    parser.add_argument("--json", action="store_true", help="print the boards as a JSON list")
    return parser.parse_args(argv), parser


def main(argv=None, prog=module_prog("bridge.discover")):
    args, _ = parse_args(argv, prog)
    if not 0 < args.timeout <= 60:
        sys.stderr.write("%s: --timeout must be more than 0 and at most 60 seconds\n" % prog)
        return 1
    if not 0 < args.port < 65536:
        sys.stderr.write("%s: --port must be 1..65535, not %d\n" % (prog, args.port))
        return 1
    address = args.address
    if address is not None:
        try:
            address = socket.gethostbyname(address)
        except (OSError, UnicodeError):
            sys.stderr.write("%s: no such address: %s\n" % (prog, args.address))
            return 1
    try:
        found = discover(args.timeout, address, args.port)
    except OSError as e:
        sys.stderr.write("%s: the query could not be sent (%s)\n" % (prog, e.strerror or e))
        return 1
    if args.json:
        print(json.dumps(found, indent=1))
    for board in [] if args.json else found:
        auth = {"none": "no token", "token": "token"}.get(board["auth"], "auth not said")
        print("%-24s %-36s %s" % (board["name"], board["url"], auth)
              + ("  (%s)" % board["url_by_name"] if board["url"] != board["url_by_name"] else ""))
    if not found:
        sys.stderr.write("%s: no board answered for %s within %g s (boards with mcp_http on this network "
                         "answer it; the ESP32 port's own mDNS responder can keep a board from it: "
                         "docs/device.md)\n" % (prog, SERVICE, args.timeout))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
