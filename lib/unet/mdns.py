"""The mDNS service record (RFC 6762, DNS-SD RFC 6763) of the board's MCP endpoint over HTTP:
`_mcp._tcp.local` PTR, `<hostname>._mcp._tcp.local` SRV and TXT (`path=/mcp`,
`auth=token|none`) and `<hostname>.local` A. MicroPython has no API for service records,
hence a responder of our own on UDP 5353; where the ESP32 port's own (ESP-IDF's) holds the
port, open_socket() says so in one line (docs/device.md, "Finding the board").

Loaded for a moment: umcpfw.mcphttp holds the socket and its receive loop, and calls
open_socket() once and respond() for each packet that may concern the board
(call_then_forget). respond() reads a query where it lies (names compared byte by byte,
pointers followed, nothing allocated per byte) and tells a malformed packet apart. Answers
follow RFC 6762 section 6: a one-shot query (from a port other than 5353) gets a unicast
answer with its id, its questions and TTLs of 10 s; the unicast-response bit, a unicast
answer; any other, a multicast one (where the socket joined the group). No probing,
announcing or known-answer suppression."""

from umcp.compat import const, get_logger

MDNS_PORT = const(5353)
GROUP = "224.0.0.251"
_GROUP_BYTES = const(b"\xe0\x00\x00\xfb")
_MAX_QUESTIONS = const(16)  # more in one query: taken as malformed
_MAX_HOPS = const(8)  # compression pointers followed in one name

# The record types asked and answered, as bits of a set.
PTR = const(1)
SRV = const(2)
TXT = const(4)
A = const(8)

_SERVICE = const(b"\x04_mcp\x04_tcp\x05local\x00")
_LOCAL = const(b"\x05local\x00")
_TTL_HOST = const(120)  # SRV and A: names of the host (RFC 6762 section 10)
_TTL_OTHER = const(4500)  # PTR and TXT
_TTL_LEGACY = const(10)  # any record, to a one-shot query

_log = get_logger("mdns")


def _label(text):
    data = text.encode()
    return bytes((len(data),)) + data


def _name_is(buf, pos, want):
    """Whether the DNS name at buf[pos] is `want` (wire form, lower case), ASCII letters
    compared without case, compression pointers followed (at most _MAX_HOPS)."""
    i = 0
    hops = 0
    end = len(buf)
    while pos < end:
        length = buf[pos]
        if length >= 0xC0:
            if pos + 1 >= end or hops == _MAX_HOPS:
                return False
            pos = ((length & 0x3F) << 8) | buf[pos + 1]
            hops += 1
            continue
        if length != want[i]:
            return False
        if length == 0:
            return True
        if pos + length >= end:
            return False
        for k in range(1, length + 1):
            c = buf[pos + k]
            if 65 <= c <= 90:
                c += 32
            if c != want[i + k]:
                return False
        i += length + 1
        pos += length + 1
    return False


def _skip_name(buf, pos):
    """Where the name at buf[pos] ends in the packet (after a pointer, its 2 bytes), or -1
    when it runs past the end or holds a label type RFC 1035 does not define."""
    end = len(buf)
    while pos < end:
        length = buf[pos]
        if length >= 0xC0:
            return pos + 2 if pos + 2 <= end else -1
        if length > 63:
            return -1
        pos += length + 1
        if length == 0:
            return pos
    return -1


def _record(out, name, rtype, flush, ttl, rdata):
    out += name
    out += bytes((0, rtype, 0x80 if flush else 0, 1, ttl >> 24, (ttl >> 16) & 255, (ttl >> 8) & 255, ttl & 255,
                  len(rdata) >> 8, len(rdata) & 255))
    out += rdata


class Records:
    """The records of one board: `hostname` (a DNS label: letters, digits, '-'), the HTTP
    `port`, `auth` ("token" or "none"); the instance name is the host name."""

    def __init__(self, hostname, port, auth):
        host = _label(hostname.lower())
        self.service = _SERVICE
        self.instance = host + _SERVICE
        self.host = host + _LOCAL
        self.srv = bytes((0, 0, 0, 0, port >> 8, port & 255)) + self.host
        self.txt = _label("path=/mcp") + _label("auth=" + auth)

    def asked(self, packet):
        """What a packet asks of these records: (bits of PTR, SRV, TXT, A; whether one of
        those questions wants a unicast answer; where the questions end) for a query,
        None for a malformed packet, (0, False, 0) for anything else (a response, another
        opcode, other names)."""
        if len(packet) < 12:
            return None
        if packet[2] & 0xF8:  # a response, or an opcode other than QUERY
            return 0, False, 0
        count = (packet[4] << 8) | packet[5]
        if count > _MAX_QUESTIONS:
            return None
        wanted = 0
        unicast = False
        pos = 12
        for _ in range(count):
            start = pos
            pos = _skip_name(packet, pos)
            if pos < 0 or pos + 4 > len(packet):
                return None
            qtype = (packet[pos] << 8) | packet[pos + 1]
            qclass = ((packet[pos + 2] << 8) | packet[pos + 3])
            pos += 4
            if qclass & 0x7FFF not in (1, 255):
                continue
            bits = 0
            if qtype in (12, 255) and _name_is(packet, start, self.service):
                bits = PTR
            elif qtype in (33, 16, 255) and _name_is(packet, start, self.instance):
                bits = SRV if qtype == 33 else TXT if qtype == 16 else SRV | TXT
            elif qtype in (1, 255) and _name_is(packet, start, self.host):
                bits = A
            if bits:
                wanted |= bits
                if qclass & 0x8000:
                    unicast = True
        return wanted, unicast, pos

    def answer(self, wanted, address, query=None, end=0):
        """The response packet for the bits `wanted` (PTR brings SRV, TXT and A along as
        additional records, SRV or TXT brings A), `address` the board's IPv4 address as
        text (no A record without one), or None when no record is left to give. `query`
        given (a one-shot query, with `end` where its questions end): its id and questions
        repeated, TTLs of 10 s and no cache-flush bit, as RFC 6762 section 6.7 asks."""
        extra = (SRV | TXT | A) if wanted & PTR else A if wanted & (SRV | TXT) else 0
        extra &= ~wanted
        a = None
        if address and address != "0.0.0.0":
            a = bytes(int(part) for part in address.split("."))
        else:
            wanted &= ~A
            extra &= ~A
        if not wanted:
            return None
        legacy = query is not None
        out = bytearray(query[:2] if legacy else 2)
        out += b"\x84\x00"
        out += query[4:6] if legacy else b"\x00\x00"
        out += bytes((0, _bits(wanted), 0, 0, 0, _bits(extra)))
        if legacy:
            out += query[12:end]
        flush = not legacy
        for bits in (wanted, extra):
            if bits & PTR:
                _record(out, self.service, 12, False, _TTL_LEGACY if legacy else _TTL_OTHER, self.instance)
            if bits & SRV:
                _record(out, self.instance, 33, flush, _TTL_LEGACY if legacy else _TTL_HOST, self.srv)
            if bits & TXT:
                _record(out, self.instance, 16, flush, _TTL_LEGACY if legacy else _TTL_OTHER, self.txt)
            if bits & A:
                _record(out, self.host, 1, flush, _TTL_LEGACY if legacy else _TTL_HOST, a)
        return out


def _bits(bits):
    return (bits & 1) + (bits >> 1 & 1) + (bits >> 2 & 1) + (bits >> 3 & 1)


def _source_port(sender):
    """The port of a recvfrom() address: a tuple (CPython, the ESP32), or the raw sockaddr
    bytes the MicroPython unix port gives (family, then the port big-endian)."""
    if isinstance(sender, tuple):
        return sender[1]
    return (sender[2] << 8) | sender[3]


def open_socket(bind, port, hostname):
    """The responder's UDP socket on `port` (5353) of `bind`, non-blocking, as (socket,
    group): group the multicast group's address to send to, when bound to "0.0.0.0" and in
    the group, else None. None, said in one line, when the port cannot be had (where the
    ESP32 port's own responder holds it)."""
    import socket  # here: respond() runs where there are no sockets too (WebAssembly)

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(socket.getaddrinfo(bind, port, 0, socket.SOCK_DGRAM)[0][-1])
    except OSError as e:
        sock.close()
        _log.warning("no service record (UDP %d not free: %r; on the ESP32 port its own responder "
                     "holds it): reach the board by its address or %s.local", port, e, hostname)
        return None
    group = None
    if bind == "0.0.0.0":
        try:
            sock.setsockopt(getattr(socket, "IPPROTO_IP", 0), socket.IP_ADD_MEMBERSHIP,
                            _GROUP_BYTES + b"\x00\x00\x00\x00")
            group = socket.getaddrinfo(GROUP, MDNS_PORT, 0, socket.SOCK_DGRAM)[0][-1]
        except OSError as e:
            _log.warning("multicast group not joined (%r): unicast queries only", e)
    sock.setblocking(False)
    return sock, group


def respond(packet, sender, hostname, port, auth, address, joined):
    """What to send for one packet from `sender` (as recvfrom() gave it) to the board
    `hostname` serving HTTP on `port` with `auth`, `address` its IPv4 address as text,
    `joined` whether the socket is in the group: (reply, where to: `sender`, or None for
    the group), None when nothing is (not a question of ours, or no record to give), False
    for a malformed packet."""
    records = Records(hostname, port, auth)
    asked = records.asked(packet)
    if asked is None:
        return False
    wanted, unicast, end = asked
    if not wanted:
        return None
    if _source_port(sender) != MDNS_PORT:  # a one-shot query: its sender, its id
        reply = records.answer(wanted, address, packet, end)
        to = sender
    else:
        reply = records.answer(wanted, address)
        to = sender if unicast or not joined else None  # None: the group
    return None if reply is None else (reply, to)
