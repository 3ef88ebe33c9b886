"""The board's mDNS service record (config.json's mcp_http: unet.mdns), under CPython and the
MicroPython unix port, asked over real UDP sockets on loopback only: each board listens on
127.0.0.1 (its mcp_http bind, which keeps it out of the multicast group) at a port of its
own, and every query here is a one-shot query (RFC 6762 section 6.7) sent to that address,
which the board answers by unicast to the sender. Nothing is sent to the multicast group or
off this machine. `umcp discover` (tools.bridge.discover) reads the answers."""

import socket
import struct
import time

import httpx2 as httpx
import pytest

from tests.firmware.test_firmware_mcp_http import free_port
from tests.support.firmwareharness import RUNTIMES, WAIT_S, Sim
from tools.bridge.discover import PTR, SRV, TXT, A, discover, main, query_packet, records

pytestmark = pytest.mark.timeout(300)
SLOW_LINK = {"backoff_min": 5, "backoff_max": 30}
SIM_ADDRESS = "127.0.0.1"  # the host board has no Wi-Fi: its address is where it listens
DROPPED = "malformed mDNS packet dropped"


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ask(port, packet, timeout=2.0):
    """Send `packet` to 127.0.0.1:`port` from an ephemeral port; the answer, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(timeout)
        sock.sendto(packet, ("127.0.0.1", port))
        try:
            return sock.recvfrom(9000)[0]
        except socket.timeout:
            return None


def wait_found(port, sim):
    """The boards discover() finds at 127.0.0.1:`port`, once the board answers."""
    for _ in range(WAIT_S * 2):
        assert sim.running, "the simulator ended"
        found = discover(0.5, "127.0.0.1", port)
        if found:
            return found
    raise AssertionError("the board never answered its mDNS query")


@pytest.fixture(params=RUNTIMES)
def boards(request, tmp_path):
    """A board with "auth": "none" and one with a token, each answering mDNS on its own port."""
    made = {}
    for kind, options in (("open", {"auth": "none"}), ("token", {"token": "a-long-random-secret"})):
        http, mdns = free_port(), free_udp_port()
        config = dict(options, port=http, bind="127.0.0.1", hostname="umcp-" + kind, mdns_port=mdns)
        made[kind] = {"http": http, "mdns": mdns,
                      "sim": Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path / kind, micropython=request.param,
                                 extra_config=dict(SLOW_LINK, mcp_http=config)).start()}
    try:
        for board in made.values():
            board["found"] = wait_found(board["mdns"], board["sim"])
        yield made
    finally:
        for board in made.values():
            board["sim"].stop()


def test_a_query_for_the_service_gets_ptr_srv_txt_and_a(boards):
    board = boards["open"]
    answer = ask(board["mdns"], query_packet(0x4D43))
    assert answer is not None and struct.unpack_from(">HH", answer) == (0x4D43, 0x8400)
    assert sorted(records(answer), key=lambda record: record[1]) == [
        ("umcp-open.local", A, SIM_ADDRESS),
        ("_mcp._tcp.local", PTR, "umcp-open._mcp._tcp.local"),
        ("umcp-open._mcp._tcp.local", TXT, {"path": "/mcp", "auth": "none"}),
        ("umcp-open._mcp._tcp.local", SRV, (board["http"], "umcp-open.local")),
    ]
    assert board["found"] == [{
        "name": "umcp-open", "host": "umcp-open.local", "address": SIM_ADDRESS, "port": board["http"],
        "path": "/mcp", "auth": "none", "url": "http://%s:%d/mcp" % (SIM_ADDRESS, board["http"]),
        "url_by_name": "http://umcp-open.local:%d/mcp" % board["http"]}]
    # The URL found is the board's endpoint: a POST of no message gets its 400.
    assert httpx.post(board["found"][0]["url"], content=b"{}", headers={"Content-Type": "application/json"},
                      timeout=WAIT_S).status_code == 400
    token = boards["token"]
    assert [(found["name"], found["auth"], found["port"]) for found in token["found"]] == [
        ("umcp-token", "token", token["http"])]
    # The instance's SRV alone, and the host's A alone.
    answer = ask(token["mdns"], query_packet(7, "umcp-token._mcp._tcp.local", SRV))
    assert records(answer) == [("umcp-token._mcp._tcp.local", SRV, (token["http"], "umcp-token.local")),
                               ("umcp-token.local", A, SIM_ADDRESS)]
    assert records(ask(token["mdns"], query_packet(8, "UMCP-TOKEN.local", A))) == [
        ("umcp-token.local", A, SIM_ADDRESS)]
    # Another board's name, or another service, gets no answer at all.
    assert ask(token["mdns"], query_packet(9, "umcp-open.local", A), timeout=1) is None
    assert ask(token["mdns"], query_packet(10, "_http._tcp.local", PTR), timeout=1) is None


def test_malformed_packets_are_dropped_with_one_line_a_streak(boards):
    board = boards["open"]
    good = query_packet(1)
    garbage = [b"", b"\x00" * 5, good[:-3], good[:4] + b"\x00\x09" + good[6:],  # 9 questions said
               b"\x00\x00\x00\x00\x00\x01" + b"\x00" * 6 + b"\xff\xff",  # a pointer, then the end
               good[:12] + b"\x7f" + good[13:], good[:12] + b"\xc0"]
    for streak in (1, 2):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            for packet in garbage:
                sock.sendto(packet, ("127.0.0.1", board["mdns"]))
        answer = ask(board["mdns"], query_packet(2))  # answered still, after the garbage
        assert answer is not None and ("_mcp._tcp.local", PTR, "umcp-open._mcp._tcp.local") in records(answer)
        for _ in range(WAIT_S * 10):  # the log file is written by the board's process
            with open(board["sim"].log_path, errors="replace") as f:
                said = f.read().count(DROPPED)
            if said == streak:
                break
            time.sleep(0.1)
        assert said == streak  # one line for each streak, however long


def test_umcp_discover_lists_the_board_with_its_url_and_auth(boards, capsys):
    board = boards["token"]
    assert main(["--address", "127.0.0.1", "--port", str(board["mdns"]), "--timeout", "1"], prog="umcp discover") == 0
    line, = capsys.readouterr().out.splitlines()
    assert line.split() == ["umcp-token", "http://%s:%d/mcp" % (SIM_ADDRESS, board["http"]), "token",
                            "(http://umcp-token.local:%d/mcp)" % board["http"]]


def test_umcp_discover_says_in_one_line_when_no_board_answers(capsys):
    assert main(["--address", "127.0.0.1", "--port", str(free_udp_port()), "--timeout", "0.3"],
                prog="umcp discover") == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("umcp discover: no board answered")
    assert main(["--address", "127.0.0.1", "--port", "0"], prog="umcp discover") == 1
    assert capsys.readouterr().err == "umcp discover: --port must be 1..65535, not 0\n"


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_port_held_elsewhere_or_mdns_off_leaves_the_endpoint_serving(tmp_path, micropython):
    """As on the stock ESP32 image, whose own responder holds UDP 5353 (bound without
    SO_REUSEADDR): the board says so in one line and serves MCP over HTTP as before. With
    "mdns": false it does not try."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("127.0.0.1", 0))
    held = holder.getsockname()[1]
    sims = {}
    try:
        # "off" starts first: once "held" has tried its port, "off" would have answered.
        for kind, options in (("off", {"mdns": False, "mdns_port": free_udp_port()}), ("held", {"mdns_port": held})):
            http = free_port()
            config = dict(options, port=http, auth="none", bind="127.0.0.1", hostname="umcp-" + kind)
            sims[kind] = (http, config, Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path / kind, micropython=micropython,
                                            extra_config=dict(SLOW_LINK, mcp_http=config)).start())
        http, _, sim = sims["held"]
        for _ in range(WAIT_S * 10):
            assert sim.running, "the simulator ended"
            with open(sim.log_path, errors="replace") as f:
                log = f.read()
            if "no service record" in log:
                break
            time.sleep(0.1)
        assert log.count("no service record (UDP %d not free" % held) == 1
        assert "umcp-held.local" in log
        for http, config, sim in sims.values():
            assert httpx.post("http://127.0.0.1:%d/mcp" % http, content=b"{}",
                              headers={"Content-Type": "application/json"}, timeout=WAIT_S).status_code == 400
        http, config, sim = sims["off"]
        assert discover(0.5, "127.0.0.1", config["mdns_port"]) == []
        with open(sim.log_path, errors="replace") as f:
            log = f.read()
        assert "mDNS" not in log and "no service record" not in log
    finally:
        holder.close()
        for _, _, sim in sims.values():
            sim.stop()


def test_a_query_the_heap_has_no_room_for_leaves_the_responder_answering(monkeypatch, caplog):
    """On a heap in fragments the responder may find no block for a packet (1500 bytes) or
    for unet.mdns, as at 104K after the httpcall bench's calls: the loop ended there, and the
    board answered no query again. Now a query whose answer has no room goes unanswered (a
    client asks again), a packet with no room waits in the socket and is answered after a
    pause, one line says so for a run of them, and the next query is answered. In process,
    under CPython: the answer's module load fails for the first query, the receive for the
    second."""
    import asyncio
    import select

    from umcpfw import mcphttp

    udp, http = free_udp_port(), free_port()
    found = mcphttp.Discovery("umcp-short", "none", lambda: "127.0.0.1", "127.0.0.1", udp)
    monkeypatch.setattr(mcphttp, "SETTLE_S", 0)
    respond = mcphttp.call_then_forget
    short = {"respond": 1, "recv": 1}

    def no_room_once(module, function, *args):
        if function == "respond" and short["respond"]:
            short["respond"] -= 1
            raise MemoryError("memory allocation failed, allocating 1176 bytes")
        return respond(module, function, *args)

    monkeypatch.setattr(mcphttp, "call_then_forget", no_room_once)

    async def main():
        loop = asyncio.get_running_loop()
        receive = loop.sock_recvfrom

        async def no_block_once(sock, size):
            if short["recv"] and not short["respond"]:  # the second query: left in the socket
                while not select.select([sock], [], [], 0)[0]:
                    await asyncio.sleep(0.01)
                short["recv"] -= 1
                raise MemoryError("memory allocation failed, allocating 1500 bytes")
            return await receive(sock, size)

        loop.sock_recvfrom = no_block_once
        service = mcphttp.McpHttpService(lambda: None, "127.0.0.1", http, discovery=found)
        running = asyncio.create_task(service.run())
        try:
            for _ in range(200):
                if service.mdns_socket is not None:
                    break
                await asyncio.sleep(0.01)
            answers = []
            for qid in (1, 2, 3):
                answers.append(await loop.run_in_executor(None, ask, udp, query_packet(qid), 1.0))
            return answers, dict(short), running.done()
        finally:
            await service.stop()
            running.cancel()

    with caplog.at_level("WARNING", logger="mcp-http"):
        answers, left, ended = asyncio.run(main())
    assert left == {"respond": 0, "recv": 0} and not ended
    assert answers[0] is None  # its answer had no room
    for qid, answer in ((2, answers[1]), (3, answers[2])):  # the second after the pause
        assert answer is not None and struct.unpack_from(">H", answer)[0] == qid
        assert [r for r in records(answer) if r[1] == SRV] == [
            ("umcp-short._mcp._tcp.local", SRV, (http, "umcp-short.local"))]
    lines = [r.getMessage() for r in caplog.records if "mDNS" in r.getMessage()]
    assert lines == ["no heap for an mDNS query: not logged again until one is answered"]
