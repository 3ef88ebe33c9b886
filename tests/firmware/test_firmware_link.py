"""The firmware on the simulator, end to end over a real WebSocket server: headers, hello,
initialize, paging, and a link that survives a vanished server, oversized and garbage frames,
and a slow tool. Key scenarios run on CPython and under the MicroPython unix port."""

import asyncio
import json
import re

import pytest

from tests.support.firmwareharness import (AUDIO_PARAMS, RUNTIMES, TOKEN, WAIT_S, Backend, Sim, VisionServer,
                              assert_alive, device_session, run, server_tls)

pytestmark = pytest.mark.timeout(90)

MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_headers_hello_and_initialize(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            headers = device.headers
            assert headers["Authorization"] == "Bearer " + TOKEN
            assert headers["Protocol-Version"] == "1"
            assert MAC.match(headers["Device-Id"]), headers["Device-Id"]
            assert UUID.match(headers["Client-Id"]), headers["Client-Id"]
            assert device.hello == {"type": "hello", "version": 1, "features": {"mcp": True},
                                    "transport": "websocket", "audio_params": AUDIO_PARAMS}
            result = await device.initialize({"url": "http://127.0.0.1:9/v", "token": "t"})
            assert result["protocolVersion"] == "2024-11-05"
            assert result["serverInfo"]["name"] == "host"
            assert result["serverInfo"]["version"]
            assert "tools" in result["capabilities"]
            return headers["Client-Id"]

    first_client_id = run(scenario())

    async def second_boot():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            return device.headers["Client-Id"]

    # The client id is created once and kept in the settings.
    assert run(second_boot()) == first_client_id


def test_device_id_option(tmp_path):
    async def scenario():
        async with device_session(tmp_path, device_id="12:34:56:78:9a:bc") as (b, s, device):
            assert device.headers["Device-Id"] == "12:34:56:78:9a:bc"

    run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_paging_within_max_payload(tmp_path, micropython):
    limit = 900

    async def scenario():
        async with device_session(tmp_path, micropython, max_payload=limit) as (b, s, device):
            await device.initialize()
            for with_user_tools in (False, True):
                tools, frames = await device.list_tools(with_user_tools)
                names = [t["name"] for t in tools]
                assert len(frames) > 1, "expected several pages at %d bytes" % limit
                assert len(names) == len(set(names)), names
                for frame in frames:
                    assert len(frame.encode()) <= limit
                user_only = [t["name"] for t in tools
                             if "user" in t.get("annotations", {}).get("audience", [])]
                if with_user_tools:
                    assert "self.reboot" in user_only
                    assert set(visible) <= set(names)
                else:
                    assert user_only == []
                    visible = names
            assert visible[0] == "self.get_device_status"
            assert "self.audio_speaker.set_volume" in visible

    run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_reconnects_after_server_killed_and_restarted(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            await device.initialize()
            await device.call("self.audio_speaker.set_volume", {"volume": 33})
            await backend.kill()
            await backend.start()  # same port, as a restarted server
            again = await backend.next_device()
            assert again.hello["type"] == "hello"
            assert again.session_id != device.session_id
            await again.initialize()
            status = await again.call_json("self.get_device_status")
            assert status["audio_speaker"]["volume"] == 33

    run(scenario())


def test_refused_upgrades_and_an_unanswered_hello_are_retried(tmp_path):
    async def scenario():
        async with device_session(tmp_path, refuse=2, silent=1,
                                  extra_config={"hello_timeout": 1}) as (backend, sim, device):
            # two 503s, then a hello nobody answered, then a session with a fresh hello
            assert len(backend.hellos) == 2 and device.session_id == "session-2"
            assert backend.hellos[0] == backend.hellos[1] == device.hello
            await device.initialize()
            await assert_alive(device)

    run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_oversized_frame_closes_1009_and_reconnects(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython,
                                  extra_config={"max_message": 4096}) as (backend, sim, device):
            init = await device.initialize()  # config.json's limit is the one announced
            assert init["capabilities"]["experimental"] == {"messageLimit": {"maxBytes": 4096}}
            await device.send_raw("x" * 5000)
            await asyncio.wait_for(device.ws.wait_closed(), WAIT_S)
            assert device.ws.close_code == 1009
            again = await backend.next_device()
            await again.initialize()
            await assert_alive(again)

    run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_garbage_frames_leave_the_device_answering(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            await device.initialize()
            garbage = [
                "not json at all",
                "[1, 2, 3]",
                "42",
                json.dumps({"type": 7}),
                json.dumps({"type": "mcp"}),
                json.dumps({"type": "mcp", "payload": "a string"}),
                json.dumps({"type": "mcp", "payload": {"jsonrpc": "2.0", "id": 5}}),
                json.dumps({"type": "no-such-type", "x": 1}),
                json.dumps({"type": "system", "command": 12}),
                # message types an MCP-only device logs and ignores
                json.dumps({"type": "alert", "status": "Warning", "message": "low battery",
                            "emotion": "sad"}),
                json.dumps({"type": "tts", "state": "start"}),
                json.dumps({"type": "stt", "text": "hello"}),
                b"\x00\x01binary",
            ]
            for frame in garbage:
                await device.send_raw(frame)
            # A call with wrong argument types is refused, not fatal.
            reply = await device.request("tools/call", {
                "name": "self.audio_speaker.set_volume", "arguments": {"volume": "loud"}})
            assert "error" in reply or reply["result"]["isError"]
            await assert_alive(device)
            status = await device.call_json("self.get_device_status")
            assert "audio_speaker" in status
            assert backend.devices.empty(), "the device reconnected instead of surviving"

    run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_ping_answered_while_a_slow_tool_runs(tmp_path, micropython):
    async def scenario():
        with VisionServer(hold=True) as vision:
            async with device_session(tmp_path, micropython) as (backend, sim, device):
                await device.initialize({"url": vision.url, "token": "vision-token"})
                photo = await device.send_request("tools/call", {
                    "name": "self.camera.take_photo", "arguments": {"question": "what?"}})
                # The upload is in progress and held by the server...
                assert await asyncio.to_thread(vision.received.wait, WAIT_S)
                # ...and the device still answers.
                ping = await device.send_request("ping")
                assert (await device.response(ping))["result"] == {}
                vision.release()
                result = (await device.response(photo))["result"]
                assert not result["isError"]
                assert VisionServer.ANSWER in result["content"][0]["text"]

    run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_wss_is_verified_by_default_and_unverified_only_when_config_says_so(
        tmp_path, micropython, certs):
    # The backend presents a certificate from a CA of the test's own making: no shipped root.
    async def connects(state, extra):
        backend = await Backend(tls=server_tls(certs)).start()
        sim = Sim(backend.url, tmp_path / state, micropython=micropython,
                  extra_config=extra).start()
        try:
            device = await backend.next_device()
            await assert_alive(device)
        finally:
            status = sim.stop()  # before its backend (docs/testing.md)
            await backend.stop()
        assert status == 0
        return sim

    async def refused(state, extra):
        backend = await Backend(tls=server_tls(certs)).start()
        sim = Sim(backend.url, tmp_path / state, micropython=micropython,
                  extra_config=extra).start()
        try:
            await asyncio.sleep(2)  # several attempts, with the harness's short backoff
            assert backend.hellos == []
        finally:
            status = sim.stop()  # before its backend (docs/testing.md)
            await backend.stop()
        assert status == 0
        return sim

    def log(sim):
        with open(sim.log_path) as f:
            return f.read()

    bundle = (certs / "bundle.pem").read_text()  # the user's "ca": two CAs in one PEM text
    trusted = run(connects("trusted", {"ca": bundle}))
    assert "WITHOUT certificate verification" not in log(trusted)
    untrusted = run(refused("untrusted", {}))
    cause = ("not correctly signed by the trusted CA" if micropython
             else "unable to get local issuer certificate")
    assert cause in log(untrusted), log(untrusted)[-2000:]
    unverified = run(connects("unverified", {"tls_verify": False}))
    assert "WITHOUT certificate verification" in log(unverified)
