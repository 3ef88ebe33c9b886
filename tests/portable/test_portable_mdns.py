# The board's mDNS service record (unet.mdns): which questions of a query it takes as its
# own, the answer it builds, read back record by record as RFC 1035 lays them out, and where
# that answer goes. The sockets are tested through the simulated board
# (tests/firmware/test_firmware_mdns.py).
import struct

from unet.mdns import A, PTR, SRV, TXT, Records, respond

HOST = "umcp-ddeeff"


def name(dotted):
    out = b""
    for label in dotted.split("."):
        out += bytes((len(label),)) + label.encode()
    return out + b"\x00"


def query(questions, qid=0x1234, flags=0):
    """A query packet: questions as (name bytes, qtype, qclass)."""
    out = struct.pack(">HHHHHH", qid, flags, len(questions), 0, 0, 0)
    for wire, qtype, qclass in questions:
        out += wire + struct.pack(">HH", qtype, qclass)
    return out


def read_name(data, pos):
    """(dotted name, end) of an uncompressed name: the answers use none."""
    labels = []
    while data[pos]:
        labels.append(bytes(data[pos + 1:pos + 1 + data[pos]]).decode())
        pos += data[pos] + 1
    return ".".join(labels), pos + 1


def read(packet, questions=0):
    """(header fields, [(section, name, type, class, ttl, rdata)]) of a response."""
    qid, flags, qd, an, ns, ar = struct.unpack(">HHHHHH", bytes(packet[:12]))
    pos = 12
    for _ in range(qd):
        _, pos = read_name(packet, pos)
        pos += 4
    found = []
    for section, count in (("answer", an), ("authority", ns), ("additional", ar)):
        for _ in range(count):
            owner, pos = read_name(packet, pos)
            rtype, rclass, ttl, size = struct.unpack(">HHIH", bytes(packet[pos:pos + 10]))
            pos += 10
            found.append((section, owner, rtype, rclass, ttl, bytes(packet[pos:pos + size])))
            pos += size
    assert pos == len(packet)
    return (qid, flags, qd), found


SRV_DATA = b"\x00\x00\x00\x00\x1f\x90" + name(HOST + ".local")
TXT_TOKEN = b"\x09path=/mcp\x0aauth=token"


def test_a_ptr_query_is_answered_with_srv_txt_and_a_beside_it():
    records = Records(HOST, 8080, "token")
    packet = query([(name("_mcp._tcp.local"), 12, 1)])
    wanted, unicast, end = records.asked(packet)
    assert (wanted, unicast, end) == (PTR, False, len(packet))
    (qid, flags, qd), found = read(records.answer(wanted, "192.168.4.2"))
    assert (qid, flags, qd) == (0, 0x8400, 0)  # a multicast answer: no id, no question
    assert found == [
        ("answer", "_mcp._tcp.local", 12, 1, 4500, name(HOST + "._mcp._tcp.local")),
        ("additional", HOST + "._mcp._tcp.local", 33, 0x8001, 120, SRV_DATA),
        ("additional", HOST + "._mcp._tcp.local", 16, 0x8001, 4500, TXT_TOKEN),
        ("additional", HOST + ".local", 1, 0x8001, 120, b"\xc0\xa8\x04\x02"),
    ]


def test_a_one_shot_query_gets_its_id_its_question_and_short_ttls():
    records = Records(HOST, 80, "none")
    packet = query([(name("_MCP._TCP.Local"), 255, 1)], qid=0xBEEF)  # any type, any case
    wanted, _, end = records.asked(packet)
    reply = records.answer(wanted, "10.0.0.7", packet, end)
    (qid, flags, qd), found = read(reply)
    assert (qid, flags, qd) == (0xBEEF, 0x8400, 1)
    assert reply[12:end] == packet[12:end]
    assert [(rtype, rclass, ttl) for _, _, rtype, rclass, ttl, _ in found] == [
        (12, 1, 10), (33, 1, 10), (16, 1, 10), (1, 1, 10)]
    assert found[1][5][4:6] == b"\x00\x50"  # port 80
    assert found[2][5] == b"\x09path=/mcp\x09auth=none"
    assert found[3][5] == b"\x0a\x00\x00\x07"


def test_the_instance_and_host_names_are_answered_by_type():
    records = Records(HOST, 8080, "token")
    instance, host = name(HOST + "._mcp._tcp.local"), name(HOST.upper() + ".local")
    assert records.asked(query([(instance, 33, 1)]))[0] == SRV
    assert records.asked(query([(instance, 16, 0x8001)]))[:2] == (TXT, True)  # QU: unicast
    assert records.asked(query([(instance, 255, 1)]))[0] == SRV | TXT
    assert records.asked(query([(host, 1, 1)]))[0] == A
    _, found = read(records.answer(SRV, "192.168.4.2"))
    assert [(section, rtype) for section, _, rtype, _, _, _ in found] == [("answer", 33), ("additional", 1)]
    _, found = read(records.answer(A, "192.168.4.2"))
    assert [(section, rtype) for section, _, rtype, _, _, _ in found] == [("answer", 1)]


def test_other_names_types_and_responses_are_not_its_own():
    records = Records(HOST, 8080, "token")
    for packet in (query([(name("_http._tcp.local"), 12, 1)]),
                   query([(name("other._mcp._tcp.local"), 33, 1)]),
                   query([(name(HOST + ".local"), 28, 1)]),  # AAAA: no IPv6 here
                   query([(name("_mcp._tcp.local"), 16, 1)]),  # TXT of the service type
                   query([(name("_mcp._tcp.local"), 12, 3)]),  # class CH
                   query([(name("_mcp._tcp.local"), 12, 1)], flags=0x8400),  # a response
                   query([])):
        assert records.asked(packet)[0] == 0, packet


def test_a_name_behind_a_compression_pointer_is_read():
    records = Records(HOST, 8080, "token")
    # The second question's name is HOST followed by a pointer to the first's "_mcp._tcp.local".
    first = name("_mcp._tcp.local")
    second = bytes((len(HOST),)) + HOST.encode() + b"\xc0\x0c"
    packet = query([(first, 12, 1), (second, 16, 1)])
    wanted, _, end = records.asked(packet)
    assert wanted == PTR | TXT and end == len(packet)


def test_malformed_packets_are_refused():
    records = Records(HOST, 8080, "token")
    good = query([(name("_mcp._tcp.local"), 12, 1)])
    loop = query([(b"\xc0\x0c", 12, 1)])  # a pointer to itself
    assert records.asked(loop)[0] == 0  # followed a few times, then not a match; its end is sound
    for packet in (b"", good[:11], good[:-1], good[:20],
                   good[:4] + b"\x00\x02" + good[6:],  # two questions said, one there
                   good[:4] + b"\x01\x00" + good[6:],  # 256 questions
                   query([(b"\x45" + b"a" * 69 + b"\x00", 12, 1)]),  # label type 01
                   query([(b"\x04_mcp\xc0", 12, 1)])[:-4]):  # a pointer cut short
        assert records.asked(packet) is None, packet


def test_no_address_no_a_record():
    records = Records(HOST, 8080, "token")
    assert records.answer(A, None) is None
    assert records.answer(A, "0.0.0.0") is None
    _, found = read(records.answer(PTR, None))
    assert [rtype for _, _, rtype, _, _, _ in found] == [12, 33, 16]


def test_the_answer_goes_where_rfc_6762_says():
    packet = query([(name("_mcp._tcp.local"), 12, 1)], qid=77)
    args = (HOST, 8080, "token", "192.168.4.2")
    # A one-shot query (not from 5353): to its sender, with its id, joined or not.
    reply, to = respond(packet, ("192.168.4.9", 40000), *args, joined=True)
    assert to == ("192.168.4.9", 40000) and reply[:2] == b"\x00\x4d"
    # From 5353: to the group where the socket joined it, else back to the sender.
    reply, to = respond(packet, ("192.168.4.9", 5353), *args, joined=True)
    assert to is None and reply[:2] == b"\x00\x00"  # None: the group (open_socket() gives its address)
    assert respond(packet, ("192.168.4.9", 5353), *args, joined=False)[1] == ("192.168.4.9", 5353)
    # The unicast-response bit: to the sender.
    asking = query([(name("_mcp._tcp.local"), 12, 0x8001)])
    assert respond(asking, ("192.168.4.9", 5353), *args, joined=True)[1] == ("192.168.4.9", 5353)


def test_a_packet_not_asking_is_none_and_a_malformed_one_false():
    args = (("192.168.4.9", 40000), HOST, 8080, "none", "192.168.4.2", False)
    assert respond(query([(name("_http._tcp.local"), 12, 1)]), *args) is None
    assert respond(query([(name(HOST + ".local"), 1, 1)]), ("192.168.4.9", 40000), HOST, 8080, "none",
                   None, False) is None  # an A asked before the board has an address
    assert respond(query([(name("_mcp._tcp.local"), 12, 1)])[:-2], *args) is False
