"""lib/xiaozhi/mqttlink.py: the xiaozhi session over MQTT+UDP, with a real umcp.McpServer,
through a real broker (amqtt in-process; mosquitto with make test-mosquitto) against a
scripted backend speaking MQTT (tests/support/mqttharness.py); on CPython here and under the
MicroPython unix port (tests/support/mpyclients/mqttlinkclient.py)."""

import asyncio
import contextlib
import json
import time

import pytest

import xiaozhi.mqttlink
import xiaozhi.mqttsettings
from tests.support.firmwareharness import AUDIO_PARAMS, WAIT_S, run
from tests.support.mpyclients import run_script
from tests.support.brokers import Mosquitto
from tests.support.mqttharness import UDP_KEY, UDP_NONCE, MqttBackend
from umcp import STRING, McpServer, Property, PropertyList
from xiaozhi.udp import AudioCodec

pytestmark = pytest.mark.timeout(90)

FAST = {"hello_timeout": 2, "backoff_min": 0.05, "backoff_max": 0.3}


def make_server(tools=1, page_limit=8000):
    server = McpServer(name="umcp-test", version="9.9", page_limit=page_limit)
    for i in range(tools):
        server.add_tool("self.echo" if i == 0 else "self.tool_%03d" % i,
                        "Echo the text back. " + "A long description. " * (i and 8),
                        PropertyList([Property("text", STRING)]),
                        lambda args: "echo: " + args["text"])
    return server


def mqtt_settings(port):
    return {"endpoint": "127.0.0.1:%d" % port, "client_id": "GID_test@@@aa_bb@@@uuid",
            "username": "u", "password": "p", "publish_topic": "device-server",
            "subscribe_topic": "devices/p2p/aa_bb"}


@contextlib.asynccontextmanager
async def mqtt_session(broker, server=None, udp=True, **options):
    backend = await MqttBackend(broker.port, udp=udp).start()
    link = xiaozhi.mqttlink.MqttLink(server or make_server(), mqtt_settings(broker.port),
                                      "aa:bb", "uuid", **dict(FAST, **options))
    task = asyncio.create_task(link.run())
    try:
        yield backend, link
    finally:
        assert not task.done(), "run() returned or raised: %r" % (task,)
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        if link.session_id:  # the goodbye it published on the way out
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(_until(lambda: backend.goodbyes), 2)
        await backend.stop()


def test_hello_mcp_and_udp_channel(broker):
    async def main():
        async with mqtt_session(broker) as (backend, link):
            device = await backend.next_device()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            assert device.hello == {"type": "hello", "version": 3, "transport": "udp",
                                    "features": {"mcp": True}, "audio_params": AUDIO_PARAMS}
            assert link.session_id == device.session_id
            init = await device.initialize()
            assert init["serverInfo"]["name"] == "umcp-test"
            tools, _ = await device.list_tools()
            assert [t["name"] for t in tools] == ["self.echo"]
            result = await device.call("self.echo", {"text": "over mqtt"})
            assert result["content"][0]["text"] == "echo: over mqtt"
            envelope = json.loads(device.frames[-1])
            assert envelope["session_id"] == device.session_id
            # The UDP channel is open towards the hello's server, with its key and nonce.
            assert link.udp is not None
            assert link.udp._sock.getpeername()[1] == backend.udp_sock.getsockname()[1]
            # A good audio packet and bad ones reach it: dropped (counted), link unharmed.
            address = link.udp._sock.getsockname()
            peer = AudioCodec(UDP_KEY, UDP_NONCE)
            backend.udp_sock.sendto(peer.encode(b"tts", 60), address)
            backend.udp_sock.sendto(b"\x02" + bytes(20), address)
            backend.udp_sock.sendto(b"\x01\x00", address)
            await asyncio.sleep(0.3)
            assert link.udp.codec.remote_sequence == 1 and link.udp.codec.dropped == 2
            assert (await device.request("ping"))["result"] == {}
        # stop(): the device says goodbye for its session.
        assert backend.goodbyes == [{"session_id": device.session_id, "type": "goodbye"}]

    run(main())


def test_server_goodbye_then_hello_again(broker):
    async def main():
        async with mqtt_session(broker) as (backend, link):
            first = await backend.next_device()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            await backend.goodbye(first)
            # The MQTT connection stays; the device says hello again and a new session runs.
            second = await backend.next_device()
            assert second.session_id != first.session_id
            assert len(backend.hellos) == 2 and link.attempts == 1
            await asyncio.wait_for(_until(lambda: link.session_id == second.session_id), WAIT_S)
            assert (await second.request("ping"))["result"] == {}
            # A goodbye for another session is ignored.
            await backend.publish(json.dumps({"type": "goodbye", "session_id": "other"}))
            assert (await second.request("ping"))["result"] == {}
            assert len(backend.hellos) == 2

    run(main())


def test_idle_session_says_hello_again(broker):
    async def main():
        async with mqtt_session(broker, idle_timeout=0.5) as (backend, link):
            first = await backend.next_device()
            second = await backend.next_device(5)  # nothing from the server for 0.5 s
            assert second.session_id != first.session_id

    run(main())


def test_hello_without_udp_block_is_dropped(broker):
    async def main():
        async with mqtt_session(broker, udp=False) as (backend, link):
            await asyncio.wait_for(_until(lambda: len(backend.hellos) >= 1), WAIT_S)
            await asyncio.sleep(0.5)
            assert not link.connected.is_set()
            backend.udp = "bad"  # a udp block with a bad key: dropped too
            await asyncio.wait_for(_until(lambda: len(backend.hellos) >= 2), WAIT_S)
            await asyncio.sleep(0.5)
            assert not link.connected.is_set()
            backend.udp = True  # the next try (hello_timeout, then backoff) gets through
            device = await backend.next_device(10)
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            assert (await device.request("ping"))["result"] == {}

    run(main())


def test_bad_messages_dropped_board_stays_reachable(broker):
    async def main():
        async with mqtt_session(broker, max_message=4096) as (backend, link):
            device = await backend.next_device()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            for bad in (b"\xff\xfe not utf-8", b"not json", b"[1,2]", b'{"type":"tts"}',
                        b'{"type":"hello","session_id":"x"}', b"x" * 10000):
                await backend.publish(bad)
            # unreadable MCP gets a -32700 answer, as over WebSocket
            await backend.publish(b'{"session_id":"s","type":"mcp","payload":{"jsonrpc":')
            reply = await device.response(None)
            assert reply["error"]["code"] == -32700
            assert (await device.request("ping"))["result"] == {}
            assert link.attempts == 1 and link._client.dropped == 1

    run(main())


def test_large_tools_list_fits_the_gateway_packet_limit(broker):
    async def main():
        server = make_server(tools=120, page_limit=16000)  # about 40 KB of tools
        async with mqtt_session(broker, server) as (backend, link):
            assert link.mcp.page_limit == xiaozhi.mqttlink.GATEWAY_MAX_PACKET  # lowered to fit
            assert server.page_limit == 16000  # for the other clients, as it was
            device = await backend.next_device()
            await device.initialize()
            tools, frames = await device.list_tools()
            assert len(tools) == 120 and len(frames) >= 5
            topic = len("devices/p2p/aa_bb")  # the device publishes on "device-server"
            for frame in frames:
                size = len(frame.encode()) + 2 + len("device-server") + 3  # MQTT packet
                assert size <= xiaozhi.mqttlink.GATEWAY_MAX_PACKET, size
            print("tools/list over MQTT: %d pages, largest %d bytes" %
                  (len(frames), max(len(f.encode()) for f in frames)))
            assert topic

    run(main())


def test_broker_refusal_is_clear_and_not_retried_at_once():
    async def refuse(reader, writer):
        await reader.read(200)
        writer.write(bytes((0x20, 2, 0, 5)))  # CONNACK 5: not authorized
        await writer.drain()
        writer.close()
        attempts.append(time.monotonic())

    async def main():
        server = await asyncio.start_server(refuse, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        link = xiaozhi.mqttlink.MqttLink(make_server(), mqtt_settings(port), "aa:bb", "uuid",
                                          hello_timeout=2, backoff_min=0.05, backoff_max=1)
        task = asyncio.create_task(link.run())
        await asyncio.sleep(1.5)
        assert link.refused is not None and link.refused.code == 5
        assert "not authorized" in str(link.refused)
        # No tight loop: after a refusal the wait is the longest backoff (0.5-1 s here).
        assert len(attempts) <= 3, attempts
        assert link.last_delay >= 0.5
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        server.close()

    attempts = []
    run(main())


def test_settings_are_checked():
    good = mqtt_settings(1883)
    for key, value in (("endpoint", ""), ("endpoint", "host:x"), ("endpoint", ":1883"),
                       ("client_id", None), ("publish_topic", ""), ("keepalive", "240"),
                       ("username", 5)):
        bad = dict(good)
        bad[key] = value
        with pytest.raises(ValueError):
            xiaozhi.mqttsettings.check_settings(bad)
    assert xiaozhi.mqttsettings.check_settings(good) == ("127.0.0.1", 1883)
    assert xiaozhi.mqttsettings.parse_endpoint("mqtt.example.com") == ("mqtt.example.com", 8883)
    assert xiaozhi.mqttsettings.parse_endpoint("10.0.0.2:1883") == ("10.0.0.2", 1883)


async def _until(predicate):
    while not predicate():
        await asyncio.sleep(0.02)


# -- MicroPython


def test_micropython_session(broker):
    async def main():
        backend = await MqttBackend(broker.port).start()
        script = asyncio.create_task(run_script("mqttlinkclient.py", broker.port,
                                                heapsize="2M", timeout=60))
        try:
            device = await backend.next_device(30)
            assert device.hello["version"] == 3 and device.hello["transport"] == "udp"
            await device.initialize()
            tools, _ = await device.list_tools()
            assert [t["name"] for t in tools] == ["self.echo"]
            result = await device.call("self.echo", {"text": "mpy over mqtt"})
            assert result["content"][0]["text"] == "echo: mpy over mqtt"
            await backend.goodbye(device)
            second = await backend.next_device(30)
            assert (await second.request("ping"))["result"] == {}
            await second.send_raw(json.dumps({"session_id": second.session_id,
                                              "type": "system", "command": "stop"}))
            [seen] = await script
            # The goodbye the device published as it stopped may still be on its way
            # through the broker when the MicroPython process has already exited.
            await asyncio.wait_for(_until(lambda: backend.goodbyes), 10)
        finally:
            await backend.stop()
        assert seen["system"] == ["stop"] and seen["attempts"] == 1
        assert seen["hellos"] == 2 and seen["udp_open"]
        assert backend.goodbyes[-1]["session_id"] == second.session_id

    run(main(), timeout=80)


# -- the broker goes away, refuses, or goes silent


def test_broker_restart_and_the_session_comes_back(broker):
    async def main():
        backend = await MqttBackend(broker.port).start()
        link = xiaozhi.mqttlink.MqttLink(make_server(), mqtt_settings(broker.port), "aa:bb",
                                          "uuid", **FAST)
        task = asyncio.create_task(link.run())
        try:
            first = await backend.next_device()
            await asyncio.wait_for(link.connected.wait(), WAIT_S)
            await backend.stop()
            await asyncio.to_thread(broker.stop)
            await asyncio.wait_for(_until(lambda: not link.connected.is_set()), WAIT_S)
            await asyncio.sleep(0.5)  # a few refused attempts while it is down
            await asyncio.to_thread(broker.start)
            backend = await MqttBackend(broker.port).start()
            second = await backend.next_device(15)
            assert second.session_id and link.attempts >= 2
            assert (await second.request("ping"))["result"] == {}
            assert first.session_id == "mqtt-session-1"
        finally:
            await link.stop()
            await asyncio.wait_for(task, WAIT_S)
            await backend.stop()

    run(main())


@pytest.mark.mosquitto
@pytest.mark.mosquitto
def test_wrong_credentials_are_a_clear_error_without_a_tight_loop(tmp_path, caplog):
    broker = Mosquitto(tmp_path, users={"dev": "right", "backend": "b"}).start()

    async def main():
        settings = dict(mqtt_settings(broker.port), username="dev", password="wrong")
        link = xiaozhi.mqttlink.MqttLink(make_server(), settings, "aa:bb", "uuid",
                                          hello_timeout=2, backoff_min=0.05, backoff_max=1)
        task = asyncio.create_task(link.run())
        await asyncio.sleep(2.5)
        assert link.refused is not None and link.refused.code in (4, 5), link.refused
        # Each wait after a refusal is drawn from the longest backoff (0.5-1 s here), not
        # the shortest (0.05 s): a handful of attempts in 2.5 s, not fifty.
        assert link.attempts <= 6 and link.last_delay >= 0.5, (link.attempts, link.last_delay)
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        # The right password: the whole session works through the same broker.
        backend = await MqttBackend(broker.port, credentials="backend:b").start()
        settings["password"] = "right"
        link = xiaozhi.mqttlink.MqttLink(make_server(), settings, "aa:bb", "uuid", **FAST)
        task = asyncio.create_task(link.run())
        device = await backend.next_device()
        assert (await device.request("ping"))["result"] == {}
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        await backend.stop()

    try:
        run(main())
    finally:
        broker.close()
    refusals = [r.getMessage() for r in caplog.records if "refused the device" in r.getMessage()]
    assert refusals and "check the mqtt credentials" in refusals[0]


def test_half_open_connection_noticed_within_one_and_a_half_keepalives():
    """A broker that answers CONNECT, SUBSCRIBE and the hello, then goes silent (the TCP
    connection stays open): the link gives up within 1.5 x keepalive and reconnects."""
    hello = json.dumps({"type": "hello", "session_id": "s-1", "transport": "udp",
                        "udp": {"server": "127.0.0.1", "port": 9, "key": UDP_KEY,
                                "nonce": UDP_NONCE}}).encode()
    connections = []

    async def silent_broker(reader, writer):
        connections.append(time.monotonic())
        await reader.read(500)  # CONNECT
        writer.write(b"\x20\x02\x00\x00")
        sub = await reader.read(500)  # SUBSCRIBE: its packet id comes back in the SUBACK
        writer.write(b"\x90\x03" + sub[2:4] + b"\x00")
        await reader.read(1000)  # the device's hello
        topic = b"devices/p2p/aa_bb"
        body = len(topic).to_bytes(2, "big") + topic + hello
        writer.write(bytes((0x30, len(body) & 0x7F | 0x80, len(body) >> 7)) + body)
        await writer.drain()
        while await reader.read(100):  # PINGREQs, never answered
            pass

    async def main():
        server = await asyncio.start_server(silent_broker, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        link = xiaozhi.mqttlink.MqttLink(make_server(), mqtt_settings(port), "aa:bb", "uuid",
                                          keepalive=2, **FAST)
        task = asyncio.create_task(link.run())
        await asyncio.wait_for(link.connected.wait(), WAIT_S)
        up = time.monotonic()
        await asyncio.wait_for(_until(lambda: not link.connected.is_set()), 10)
        lost_after = time.monotonic() - up
        await asyncio.wait_for(_until(lambda: len(connections) >= 2), 10)
        print("half-open MQTT session noticed after %.2f s (keepalive 2 s)" % lost_after)
        assert lost_after <= 3.0  # 1.5 x keepalive
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        server.close()

    run(main())


@pytest.mark.mosquitto
@pytest.mark.mosquitto
def test_frozen_mosquitto_is_a_half_open_connection_noticed_in_time(tmp_path):
    """SIGSTOP freezes the broker: the TCP connection stays open, nothing answers."""
    import signal

    broker = Mosquitto(tmp_path).start()

    async def main():
        backend = await MqttBackend(broker.port).start()
        link = xiaozhi.mqttlink.MqttLink(make_server(), mqtt_settings(broker.port), "aa:bb",
                                          "uuid", keepalive=2, **FAST)
        task = asyncio.create_task(link.run())
        device = await backend.next_device()
        assert (await device.request("ping"))["result"] == {}
        broker.proc.send_signal(signal.SIGSTOP)
        frozen = time.monotonic()
        try:
            await asyncio.wait_for(_until(lambda: not link.connected.is_set()), 10)
            lost_after = time.monotonic() - frozen
        finally:
            broker.proc.send_signal(signal.SIGCONT)
        print("frozen mosquitto noticed after %.2f s (keepalive 2 s)" % lost_after)
        assert lost_after <= 3.0  # 1.5 x keepalive
        await link.stop()
        await asyncio.wait_for(task, WAIT_S)
        await backend.stop()

    try:
        run(main())
    finally:
        broker.close()


def test_mcp_before_the_server_hello_as_the_gateway_asks_it(broker):
    """xiaozhi-mqtt-gateway sends initialize and tools/list right after CONNECT, without a
    session, and caches the answers: the device answers them before any server hello."""
    async def main():
        backend = await MqttBackend(broker.port).start()
        backend.gateway = True
        link = xiaozhi.mqttlink.MqttLink(make_server(tools=30), mqtt_settings(broker.port),
                                          "aa:bb", "uuid", **FAST)
        task = asyncio.create_task(link.run())
        try:
            device = await backend.next_device()
            assert len(backend.cached_tools) == 30
            assert backend.prefetch_envelope["session_id"] == ""
            assert backend.prefetch_envelope["payload"]["result"]["serverInfo"]["name"] == "umcp-test"
            assert (await device.request("ping"))["result"] == {}
            assert len(backend.hellos) == 1 and link.attempts == 1
        finally:
            await link.stop()
            await asyncio.wait_for(task, WAIT_S)
            await backend.stop()

    run(main())
