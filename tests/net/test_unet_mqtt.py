"""unet.mqtt against real brokers (amqtt in-process; mosquitto with make test-mosquitto)
and against fake servers that misbehave on purpose (silent, oversized or malformed
lengths, refusals), on CPython; tests/net/test_unet_mqtt_mpy.py runs it under MicroPython."""

import asyncio
import os
import time

import pytest

from tests.support.brokers import Mosquitto
from unet.mqtt import MqttClient, MqttError, MqttRefused

pytestmark = pytest.mark.timeout(60)


def run(coro):
    return asyncio.run(coro)


async def recv(client, timeout=5):
    return await asyncio.wait_for(client.recv(), timeout)


# -- real brokers


def test_roundtrip_qos0_qos1(broker):
    async def main():
        sub = MqttClient("sub-1", keepalive=30)
        pub = MqttClient("pub-1", keepalive=30)
        await sub.connect("127.0.0.1", broker.port)
        await pub.connect("127.0.0.1", broker.port)
        assert sub.connected and pub.connected
        assert await sub.subscribe("devices/p2p/aa_bb", qos=1) == 1
        assert await sub.subscribe("device-server", qos=0) == 0
        await pub.publish("devices/p2p/aa_bb", "hello qos0")
        await pub.publish("devices/p2p/aa_bb", b"hello qos1", qos=1)
        await pub.publish("device-server", ['{"a":', b'"\xc3\xa9t\xc3\xa9"', "}"], qos=1)
        got = [await recv(sub) for _ in range(3)]
        assert got[0] == ("devices/p2p/aa_bb", b"hello qos0")
        assert got[1] == ("devices/p2p/aa_bb", b"hello qos1")
        assert got[2][0] == "device-server"
        assert bytes(got[2][1]).decode() == '{"a":"été"}'
        # QoS 1 towards the subscriber that asked for QoS 1: it must answer PUBACK
        # (mosquitto would resend otherwise); many in a row keep packet ids apart.
        await asyncio.gather(*[pub.publish("devices/p2p/aa_bb", "m%d" % i, qos=1) for i in range(5)])
        got = sorted([bytes((await recv(sub))[1]) for _ in range(5)])
        assert got == [b"m%d" % i for i in range(5)]
        await pub.close()
        await sub.close()
        assert not sub.connected
        with pytest.raises(MqttError):
            await sub.publish("x", "y")

    run(main())


def test_large_payload(broker):
    async def main():
        data = os.urandom(30000)
        sub = MqttClient("big-sub", max_packet=40000)
        pub = MqttClient("big-pub")
        await sub.connect("127.0.0.1", broker.port)
        await pub.connect("127.0.0.1", broker.port)
        await sub.subscribe("big/#", qos=1)
        await pub.publish("big/one", data, qos=1)
        await pub.publish("big/pieces", [data[:1000], data[1000:20000], data[20000:]], qos=0)
        assert await recv(sub) == ("big/one", data)
        topic, payload = await recv(sub)
        assert topic == "big/pieces" and bytes(payload) == data
        await pub.close()
        await sub.close()

    run(main())


def test_incoming_over_max_packet_dropped(broker):
    async def main():
        sub = MqttClient("small-sub", max_packet=1000)
        pub = MqttClient("small-pub")
        await sub.connect("127.0.0.1", broker.port)
        await pub.connect("127.0.0.1", broker.port)
        await sub.subscribe("t", qos=1)
        await pub.publish("t", b"x" * 5000, qos=1)
        await pub.publish("t", b"small", qos=1)
        # The big one is read through and dropped; the connection stays up.
        assert await recv(sub) == ("t", b"small")
        assert sub.connected and sub.dropped == 1
        await pub.close()
        await sub.close()

    run(main())


@pytest.mark.mosquitto
@pytest.mark.mosquitto
def test_wrong_credentials(tmp_path):
    mosquitto_auth = Mosquitto(tmp_path, users={"device": "s3cret"}).start()

    async def main():
        c = MqttClient("dev", username="device", password="wrong")
        with pytest.raises(MqttRefused) as e:
            await c.connect("127.0.0.1", mosquitto_auth.port)
        assert e.value.code in (4, 5)
        assert e.value.meaning in str(e.value)
        assert not c.connected
        c = MqttClient("dev")  # anonymous, not allowed
        with pytest.raises(MqttRefused) as e:
            await c.connect("127.0.0.1", mosquitto_auth.port)
        assert e.value.code in (4, 5)
        c = MqttClient("dev", username="device", password="s3cret")
        await c.connect("127.0.0.1", mosquitto_auth.port)
        assert c.connected
        await c.close()

    try:
        run(main())
    finally:
        mosquitto_auth.close()


def test_broker_restart(broker):
    async def main():
        c = MqttClient("restart", keepalive=30)
        await c.connect("127.0.0.1", broker.port)
        await c.subscribe("r")
        waiter = asyncio.ensure_future(c.recv())
        await asyncio.sleep(0.1)
        broker.stop()
        t0 = time.monotonic()
        with pytest.raises(MqttError):
            await asyncio.wait_for(waiter, 5)
        assert time.monotonic() - t0 < 2
        assert not c.connected and c.error is not None
        with pytest.raises(MqttError):
            await c.publish("r", "x")
        with pytest.raises(OSError):
            await c.connect("127.0.0.1", broker.port, timeout=2)
        broker.start()
        await c.connect("127.0.0.1", broker.port)  # the same object reconnects
        await c.subscribe("r")
        await c.publish("r", "back", qos=1)
        assert await recv(c) == ("r", b"back")
        await c.close()

    run(main())


def test_keepalive_pings_keep_link_alive(broker):
    async def main():
        c = MqttClient("pinger", keepalive=1)
        await c.connect("127.0.0.1", broker.port)
        await asyncio.sleep(3.5)  # several keepalive periods of silence from our side
        assert c.connected, c.error
        await c.subscribe("k")
        await c.publish("k", "still here", qos=1)
        assert await recv(c) == ("k", b"still here")
        await c.close()

    run(main())


@pytest.mark.mosquitto
@pytest.mark.mosquitto
def test_tls_mosquitto(tmp_path):
    tls = make_certs(tmp_path)
    b = Mosquitto(tmp_path)
    with open(b.argv[2], "a") as f:
        f.write("cafile %s\ncertfile %s\nkeyfile %s\n" % (tls["ca"], tls["cert"], tls["key"]))
    b.start()
    try:
        async def main():
            c = MqttClient("tls")
            await c.connect("127.0.0.1", b.port, tls=True, ca=tls["ca"])
            await c.subscribe("s")
            await c.publish("s", "secure", qos=1)
            assert await recv(c) == ("s", b"secure")
            await c.close()
            bad = MqttClient("tls-bad")  # a CA that did not sign the broker's certificate
            with pytest.raises(Exception):
                await bad.connect("127.0.0.1", b.port, tls=True, ca=make_certs(tmp_path / "other")["ca"])

        run(main())
    finally:
        b.close()


def make_certs(tmp):
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    os.makedirs(tmp, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {"ca": os.path.join(tmp, "ca.pem"), "cert": os.path.join(tmp, "cert.pem"), "key": os.path.join(tmp, "key.pem")}
    with open(paths["ca"], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["cert"], "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths["key"], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption()))
    os.chmod(paths["key"], 0o644)
    return paths


# -- fake servers


class Fake:
    """A TCP server running `script(reader, writer)` for each connection."""

    def __init__(self, script):
        self.script = script
        self.received = bytearray()

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _handle(self, reader, writer):
        try:
            await self.script(self, reader, writer)
        except Exception:
            pass
        finally:
            writer.close()

    async def read_packet(self, reader):
        first = (await reader.readexactly(1))[0]
        n = shift = 0
        while True:
            b = (await reader.readexactly(1))[0]
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        return first, await reader.readexactly(n)


async def connack(fake, reader, writer, code=0):
    first, _ = await fake.read_packet(reader)
    assert first == 0x10
    writer.write(bytes((0x20, 2, 0, code)))
    await writer.drain()


def test_half_open_detected():
    async def silent(fake, reader, writer):
        await connack(fake, reader, writer)
        while await reader.read(100):  # swallows PINGREQ, never answers
            pass

    async def main():
        async with Fake(silent) as f:
            c = MqttClient("half-open", keepalive=2)
            await c.connect("127.0.0.1", f.port)
            t0 = time.monotonic()
            with pytest.raises(MqttError) as e:
                await asyncio.wait_for(c.recv(), 10)
            took = time.monotonic() - t0
            assert "no traffic" in e.value.reason
            assert 1.9 < took <= 3.0, took  # within 1.5 x keepalive
            assert not c.connected

    run(main())


@pytest.mark.parametrize("header,reason", [
    (b"\x90\xff\xff\xff\x7f", "exceeds max_packet"),  # 268435455: the largest legal length
    (b"\x30\x80\x80\x80\x80\x01", "malformed remaining length"),  # a fifth length byte
])
def test_bad_remaining_length(header, reason):
    async def evil(fake, reader, writer):
        await connack(fake, reader, writer)
        writer.write(header)
        await writer.drain()
        await reader.read(100)

    async def main():
        async with Fake(evil) as f:
            c = MqttClient("evil", max_packet=4096)
            await c.connect("127.0.0.1", f.port)
            with pytest.raises(MqttError) as e:
                await recv(c)
            assert reason in e.value.reason
            assert not c.connected

    run(main())


@pytest.mark.parametrize("code", [1, 2, 3, 4, 5])
def test_refusal_codes(code):
    async def refuse(fake, reader, writer):
        await connack(fake, reader, writer, code)

    async def main():
        async with Fake(refuse) as f:
            c = MqttClient("r")
            with pytest.raises(MqttRefused) as e:
                await c.connect("127.0.0.1", f.port)
            assert e.value.code == code
            assert ("%d" % code) in str(e.value)

    run(main())


def test_no_connack_and_eof():
    async def mute(fake, reader, writer):
        await reader.read(100)
        await asyncio.sleep(5)

    async def hangup(fake, reader, writer):
        await reader.read(100)

    async def main():
        async with Fake(mute) as f:
            with pytest.raises(MqttError) as e:
                await MqttClient("m").connect("127.0.0.1", f.port, timeout=1)
            assert "CONNACK" in e.value.reason
        async with Fake(hangup) as f:
            with pytest.raises(MqttError) as e:
                await MqttClient("m").connect("127.0.0.1", f.port)
            assert "before CONNACK" in e.value.reason

    run(main())


def test_suback_failure_and_connect_packet():
    async def script(fake, reader, writer):
        first, body = await fake.read_packet(reader)
        fake.connect_body = body
        writer.write(bytes((0x20, 2, 0, 0)))
        first, body = await fake.read_packet(reader)
        assert first == 0x82
        writer.write(bytes((0x90, 3)) + body[:2] + b"\x80")
        await writer.drain()
        await reader.read(100)

    async def main():
        async with Fake(script) as f:
            c = MqttClient("GID_x@@@aa", username="u", password="p", keepalive=240)
            await c.connect("127.0.0.1", f.port)
            with pytest.raises(MqttError) as e:
                await c.subscribe("forbidden/#")
            assert "refused" in e.value.reason
            body = f.connect_body
            assert body[:7] == b"\x00\x04MQTT\x04"
            assert body[7] == 0xC2  # user name, password, clean session
            assert body[8:10] == b"\x00\xf0"
            assert body[10:] == b"\x00\x0aGID_x@@@aa\x00\x01u\x00\x01p"
            await c.close()

    run(main())


def test_puback_sent_for_incoming_qos1_and_single_write():
    async def script(fake, reader, writer):
        await connack(fake, reader, writer)
        # QoS 1 PUBLISH, topic "a", packet id 0x1234, payload "hi"
        writer.write(b"\x32\x07\x00\x01a\x12\x34hi")
        await writer.drain()
        fake.puback = await fake.read_packet(reader)
        fake.publish = await fake.read_packet(reader)
        await reader.read(100)

    async def main():
        async with Fake(script) as f:
            c = MqttClient("w", write_buf=256)
            await c.connect("127.0.0.1", f.port)
            assert await recv(c) == ("a", b"hi")
            writes = []
            real = c._writer.write
            c._writer.write = lambda data: (writes.append(bytes(data)), real(data))
            await c.publish("device-server", ['{"jsonrpc":"2.0",', '"id":1}'])
            await asyncio.sleep(0.2)
            assert len(writes) == 1  # header and both pieces in one write (one segment)
            assert f.puback == (0x40, b"\x12\x34")
            assert f.publish == (0x30, b"\x00\x0ddevice-server" + b'{"jsonrpc":"2.0","id":1}')
            # Bigger than the write buffer: full-buffer writes, nothing lost.
            writes.clear()
            await c.publish("t", b"z" * 1000)
            assert len(writes) == 4 and b"".join(writes)[-1000:] == b"z" * 1000
            await c.close()

    run(main())


def test_argument_checks():
    async def main():
        async with Fake(connack) as f:
            c = MqttClient("v", max_send=100)
            await c.connect("127.0.0.1", f.port)
            for topic in ("a/+/b", "a/#", "", "x" * 300, "a\0b"):
                with pytest.raises(ValueError):
                    await c.publish(topic, "p")
            with pytest.raises(ValueError):
                await c.publish("t", b"x" * 200)
            with pytest.raises(ValueError):
                await c.publish("t", "x", qos=2)
            await c.close()

    run(main())


def test_long_topic_dropped_link_stays():
    async def script(fake, reader, writer):
        await connack(fake, reader, writer)
        topic = b"t" * 300  # over the device's 256-byte topic limit
        body = len(topic).to_bytes(2, "big") + topic + b"payload"
        writer.write(bytes((0x30, len(body) & 0x7F | 0x80, len(body) >> 7)) + body)
        writer.write(b"\x30\x08\x00\x01aafter")  # then a normal one
        await writer.drain()
        await reader.read(100)

    async def main():
        async with Fake(script) as f:
            c = MqttClient("topic", max_packet=4096)
            await c.connect("127.0.0.1", f.port)
            assert await recv(c) == ("a", b"after")
            assert c.connected and c.dropped == 1
            await c.close()

    run(main())
