"""Devices over MQTT through the backend: a scripted device on amqtt's client gets its
credentials from the OTA endpoint, connects to the broker, says hello, is onboarded and
answers tools/call through the backend; UDP packets are decrypted and counted; goodbye,
the idle rule, a broker restart, and credentials that are wrong or used for another
device's topics. Each test runs against the embedded amqtt broker, and against Debian's
mosquitto under `make test-mosquitto` (marker `mosquitto`)."""

import asyncio
import contextlib
import json
import os
import socket

import pytest
from amqtt.errors import ConnectError

from tools.hub.mosquitto import Mosquitto
from tests.support.mqttdevice import ScriptedMqttDevice, ota_check, standard_answer
from tests.backend.test_backend import TOKEN, Transcript
from tools.backend import Backend
from tools.backend.console import Console

pytestmark = [pytest.mark.timeout(90), pytest.mark.anyio]
# the mosquitto case runs with make test-mosquitto (UMCP_MOSQUITTO=1)
MOSQUITTO_PARAM = pytest.param("mosquitto", marks=[
    pytest.mark.mosquitto,
])
BROKERS = ["embedded", MOSQUITTO_PARAM]
MAC = "aa:bb:cc:dd:ee:01"


@contextlib.asynccontextmanager
async def mqtt_backend(kind, tmp_path, **options):
    """A backend taking devices over MQTT through `kind` of broker. Yields (backend, out,
    broker) where broker is the Mosquitto object (or None for the embedded one)."""
    out = Transcript()
    broker = None
    if kind == "mosquitto":
        broker = Mosquitto(tmp_path).start()
        options.update(mqtt=broker.url, mqtt_passwd=broker.passwd, mqtt_pidfile=broker.pidfile)
    else:
        options.update(mqtt="embedded")
    backend = Backend(TOKEN, host="127.0.0.1", out=out, **options)
    try:
        await backend.start()
        yield backend, out, broker
    finally:
        await backend.close()
        if broker is not None:
            broker.stop()


async def checked_in_device(backend, mac=MAC, answer=standard_answer, will=True):
    """The OTA check, then a connection with the credentials it handed out (retried
    briefly: mosquitto learns them on a reload)."""
    mqtt = (await asyncio.to_thread(ota_check, backend.ota_url, mac))["mqtt"]
    device = ScriptedMqttDevice(mqtt, answer, will)
    for attempt in range(40):
        try:
            await device.connect()
            return device
        except ConnectError:
            if attempt == 39:
                raise
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("kind", BROKERS)
async def test_a_device_over_mqtt_answers_tools_call_through_the_backend(kind, tmp_path):
    async with mqtt_backend(kind, tmp_path) as (backend, out, broker):
        device = await checked_in_device(backend)
        hello = await device.say_hello()
        assert hello["transport"] == "udp" and hello["session_id"]
        udp = hello["udp"]
        assert udp["server"] == "127.0.0.1" and udp["port"] == backend.mqtt.udp_port
        assert len(bytes.fromhex(udp["key"])) == 16 and len(bytes.fromhex(udp["nonce"])) == 16

        ready = await backend.wait_ready(10)
        assert ready.id == MAC and ready.transport == "mqtt"
        assert [t["name"] for t in ready.tools] == ["self.echo"]
        initialize = next(m["payload"] for m in device.received if m.get("type") == "mcp")
        assert initialize["method"] == "initialize"
        assert initialize["params"]["capabilities"]["vision"]["url"] == backend.vision_url

        result = await backend.call(ready, "self.echo", {"text": "over mqtt"})
        assert result["content"][0]["text"] == "echo: over mqtt"
        assert out[-1] == "%s: <- echo: over mqtt" % MAC
        console = Console(backend, out)
        await console.execute("devices")
        assert out[-1].startswith("1. %s  session %s" % (MAC, hello["session_id"])) and out[-1].endswith("(mqtt)")

        # audio packets: decrypted and counted; a replayed sequence is dropped
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            for frame in (b"opus frame one", b"opus frame two"):
                sender.sendto(device.udp_packet(frame), ("127.0.0.1", udp["port"]))
            sender.sendto(device.udp_packet(b"replayed", sequence=1), ("127.0.0.1", udp["port"]))
            for _ in range(100):
                if ready.udp["packets"] == 2 and ready.udp["dropped"] == 1:
                    break
                await asyncio.sleep(0.02)
        assert (ready.udp["packets"], ready.udp["dropped"], ready.udp["last"]) == (2, 1, b"opus frame two")

        # goodbye ends the session; a new hello starts another on the same connection
        await device.publish({"session_id": device.session_id, "type": "goodbye"})
        await asyncio.wait_for(ready.closed.wait(), 10)
        assert MAC not in backend.devices
        await device.say_hello()
        again = await backend.wait_ready(10)
        assert again is not ready and again.session_id == device.session_id
        assert (await backend.call(again, "self.echo", {"text": "back"}))["content"][0]["text"] == "echo: back"
        # an mcp message outside any session is answered with goodbye (say hello first)
        await device.publish({"session_id": "stale", "type": "goodbye"})
        await asyncio.wait_for(again.closed.wait(), 10)
        await device.publish({"session_id": "stale", "type": "mcp", "payload": {"jsonrpc": "2.0", "id": 9, "result": {}}})
        await device.wait_for(lambda m: m.get("type") == "goodbye" and m.get("session_id") == "stale")
        await device.close()


@pytest.mark.parametrize("kind", BROKERS)
async def test_the_last_will_tells_the_backend_a_device_vanished(kind, tmp_path):
    async with mqtt_backend(kind, tmp_path) as (backend, out, broker):
        device = await checked_in_device(backend)
        await device.say_hello()
        ready = await backend.wait_ready(10)
        device._task.cancel()
        # the connection dies without DISCONNECT (amqtt's client has no abort: cut its socket)
        device.client._handler.writer._writer.transport.abort()
        await asyncio.wait_for(ready.closed.wait(), 10)
        assert any(line.startswith("%s disconnected (the device said goodbye)" % MAC) for line in out)


@pytest.mark.parametrize("kind", BROKERS)
async def test_wrong_credentials_and_other_devices_topics_are_refused(kind, tmp_path):
    async with mqtt_backend(kind, tmp_path) as (backend, out, broker):
        mqtt = (await asyncio.to_thread(ota_check, backend.ota_url, MAC))["mqtt"]
        # (refused logins first: amqtt drops the session of a client id as soon as another
        # CONNECT names it, before checking the password; mosquitto checks first)
        with pytest.raises(ConnectError):  # the right user, a wrong password
            await ScriptedMqttDevice(mqtt).connect(password="not-the-password")
        stranger = dict(mqtt, username="aa_bb_cc_dd_ee_99", client_id="umcp-aa_bb_cc_dd_ee_99")
        with pytest.raises(ConnectError):  # credentials never issued
            await ScriptedMqttDevice(stranger).connect(password=mqtt["password"])
        with pytest.raises(ConnectError):  # the backend's own user name, guessed
            await ScriptedMqttDevice(dict(mqtt, username="umcp-backend", client_id="x")).connect()
        device = await checked_in_device(backend)

        # a second device may not read the first one's down topic nor speak on its up topic
        other = await checked_in_device(backend, mac="aa:bb:cc:dd:ee:02")
        await other.say_hello()  # its own hello works
        granted = await other.client.subscribe([(device.mqtt["subscribe_topic"], 0)])
        # amqtt refuses the subscription; mosquitto (3.1.1) grants it and delivers nothing
        assert granted == ([0] if kind == "mosquitto" else [0x80])
        await other.client.publish(device.mqtt["publish_topic"],
                                   json.dumps({"type": "hello", "version": 3, "features": {"mcp": True}}).encode())
        await backend.wait_ready(10)
        await asyncio.sleep(0.3)
        assert list(backend.devices) == ["aa:bb:cc:dd:ee:02"]  # the forged hello made no session
        await device.say_hello()  # the first device's own hello: its answer reaches only it
        await asyncio.sleep(0.3)
        assert [m["session_id"] for m in other.received if m.get("type") == "hello"] == [other.session_id]
        await device.close()
        await other.close()


@pytest.mark.parametrize("kind", BROKERS)
async def test_the_idle_rule_pings_then_ends_a_silent_session(kind, tmp_path):
    silent = {"on": False}

    def answer(request):
        if silent["on"]:
            return None
        return standard_answer(request)

    async with mqtt_backend(kind, tmp_path, idle_timeout=1.0) as (backend, out, broker):
        device = await checked_in_device(backend, answer=answer)
        await device.say_hello()
        ready = await backend.wait_ready(10)
        await asyncio.sleep(2.5)  # more than the idle timeout: the pings it answers keep it
        assert not ready.closed.is_set()
        assert any(m.get("payload", {}).get("method") == "ping" for m in device.received)
        silent["on"] = True
        await asyncio.wait_for(ready.closed.wait(), 5)
        await device.wait_for(lambda m: m.get("type") == "goodbye" and m.get("session_id") == ready.session_id)
        assert any("nothing from it for" in line for line in out)
        await device.close()


@pytest.mark.parametrize("kind", BROKERS)
async def test_a_broker_restart_ends_sessions_and_devices_come_back(kind, tmp_path):
    async with mqtt_backend(kind, tmp_path) as (backend, out, broker):
        device = await checked_in_device(backend)
        await device.say_hello()
        first = await backend.wait_ready(10)
        if broker is None:
            port = backend.broker.port
            await backend.broker.close()
            await asyncio.sleep(0.5)
            await backend.broker.start("127.0.0.1", port)
        else:
            broker.stop()
            await asyncio.sleep(0.5)
            broker.start()
        await asyncio.wait_for(first.closed.wait(), 10)
        assert MAC not in backend.devices
        await asyncio.wait_for(backend.mqtt.connected.wait(), 15)
        assert any(line == "mqtt: logged in to the broker again" for line in out)
        await device.close()
        device = ScriptedMqttDevice(device.mqtt)
        await device.connect()  # the same credentials still work: they follow from the secret
        await device.say_hello()
        for _ in range(100):
            again = backend.devices.get(MAC)
            if again is not None and again.tools:
                break
            await asyncio.sleep(0.05)
        assert (await backend.call(again, "self.echo", {"text": "after"}))["content"][0]["text"] == "echo: after"
        await device.close()


async def test_websocket_and_mqtt_devices_side_by_side(tmp_path):
    from tests.backend.test_backend import initialize_result, scripted_device

    def answer(request):
        if request["method"] == "initialize":
            return initialize_result()
        if request["method"] == "tools/list":
            return {"tools": []}
        return None

    async with mqtt_backend("embedded", tmp_path) as (backend, out, broker):
        async with scripted_device(backend, answer, device_id="11:22:33:44:55:66"):
            device = await checked_in_device(backend)
            await device.say_hello()
            for _ in range(100):
                if len(backend.devices) == 2 and all(d.server_info for d in backend.devices.values()):
                    break
                await asyncio.sleep(0.05)
            assert set(backend.devices) == {"11:22:33:44:55:66", MAC}
            await device.close()


@pytest.mark.parametrize("kind", BROKERS)
async def test_a_saved_state_keeps_credentials_and_activations_across_a_restart(kind, tmp_path):
    from tests.backend.test_backend_otacheck import activate, check, ota_headers, system_info

    state = str(tmp_path / "state.json")
    async with mqtt_backend(kind, tmp_path, state_path=state, activation=True) as (backend, out, broker):
        status, answer = await check(backend, system_info(mac=MAC), ota_headers(mac=MAC))
        backend.activate(answer["activation"]["code"])
        assert (await activate(backend, {}, ota_headers(mac=MAC)))[0] == 200
        mqtt = (await check(backend, system_info(mac=MAC), ota_headers(mac=MAC)))[1]["mqtt"]
    assert oct(os.stat(state).st_mode & 0o777) == "0o600"  # it holds the MQTT secret
    async with mqtt_backend(kind, tmp_path, state_path=state, activation=True) as (backend, out, broker):
        status, answer = await check(backend, system_info(mac=MAC), ota_headers(mac=MAC))
        assert "activation" not in answer  # still activated
        assert {k: v for k, v in answer["mqtt"].items() if k != "endpoint"} == \
            {k: v for k, v in mqtt.items() if k != "endpoint"}
        # the credentials it got before the restart still open the (new) broker
        device = ScriptedMqttDevice(dict(mqtt, endpoint=answer["mqtt"]["endpoint"]))
        await device.connect()
        await device.say_hello()
        ready = await backend.wait_ready(10)
        assert (await backend.call(ready, "self.echo", {"text": "again"}))["content"][0]["text"] == "echo: again"
        await device.close()


async def test_the_hub_notices_a_broker_gone_silent_and_logs_in_again():
    """A broker that accepts the hub's login and subscription, then answers nothing (a
    half-open connection): the hub's client gives up after its keepalive without traffic,
    the hub says so and logs in again."""
    from tools.hub.mqtt import MqttServer

    logins = []

    async def silent_broker(reader, writer):
        logins.append(writer)
        await reader.read(500)  # CONNECT
        writer.write(b"\x20\x02\x00\x00")
        subscribe = await reader.read(500)  # SUBSCRIBE: its packet id comes back in the SUBACK
        writer.write(b"\x90\x03" + subscribe[2:4] + b"\x00")
        while await reader.read(100):  # PINGREQs, never answered
            pass

    broker = await asyncio.start_server(silent_broker, "127.0.0.1", 0)
    said = []
    server = MqttServer(log=said.append, keepalive=1)
    try:
        await server.start("127.0.0.1", broker.sockets[0].getsockname()[1])
        for _ in range(400):
            if len(logins) >= 2:
                break
            await asyncio.sleep(0.05)
        lost = [line for line in said if line.startswith("mqtt: lost the broker")]
        assert lost and "no traffic from the broker" in lost[0], said
        assert len(logins) >= 2, said
    finally:
        await server.close()
        for writer in logins:
            writer.close()
        broker.close()
