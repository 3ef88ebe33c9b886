"""The firmware with config.json's mcp_endpoint (tools.sim --mcp-endpoint): a board with
only Wi-Fi and endpoint URLs, and one with the xiaozhi link beside them; against the
scripted assistant's side (tests/support/endpointharness.py) and the scripted xiaozhi
backend, on CPython and under the MicroPython unix port."""

import json

import pytest

from tests.firmware.test_firmware_tools import USER_ONLY, VISIBLE, dac_volume_writes
from tests.support.endpointharness import EndpointServer
from tests.support.firmwareharness import RUNTIMES, RUNTIMES_MPY, WAIT_S, Backend, Sim, run

pytestmark = pytest.mark.timeout(90)

TOKEN = "agent-T0KEN-secret"


def sim_log(sim):
    with open(sim.log_path, errors="replace") as f:
        return f.read()


@pytest.mark.parametrize("micropython", RUNTIMES_MPY)
def test_a_board_with_only_endpoint_urls_serves_both_agents(tmp_path, micropython):
    async def main():
        kitchen, office = await EndpointServer().start(), await EndpointServer().start()
        sim = Sim(None, tmp_path, micropython=micropython,
                  endpoints=[kitchen.url(TOKEN), office.url(TOKEN + "-2")]).start()
        try:
            one, two = await kitchen.next_provider(), await office.next_provider()
            init = await one.initialize()
            await two.initialize()
            tools, _ = await one.list_tools()
            set_volume = await one.call("self.audio_speaker.set_volume", {"volume": 35})
            status = await two.call("self.get_device_status")
            info = await two.call("self.get_system_info")  # user-only: not here
        finally:
            code = sim.stop()
        return sim, code, one, init, tools, set_volume, status, info

    sim, code, one, init, tools, set_volume, status, info = run(main())
    assert code == 0
    assert init["result"]["serverInfo"]["name"] == "host"
    assert {tool["name"] for tool in tools} == VISIBLE  # the owner's user-only tools stay home
    assert set_volume["result"]["content"] == [{"type": "text", "text": "true"}]
    assert json.loads(status["result"]["content"][0]["text"])["audio_speaker"]["volume"] == 35
    assert info["error"]["code"] == -32602
    assert one.headers["Device-Id"] and one.headers["User-Agent"].startswith("umcp/")
    # The call changed the simulated codec, and the token never reached the log.
    assert dac_volume_writes(sim.records()[-1])
    log = sim_log(sim)
    assert TOKEN not in log
    if not micropython:  # MicroPython's stand-in logger prints warnings and errors only
        assert "token=***: connected" in log


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_both_links_at_once_and_the_endpoints_in_get_system_info(tmp_path, micropython):
    async def main():
        backend, endpoint = await Backend().start(), await EndpointServer().start()
        extra = {"mcp_endpoint_tools": ["self.get_system_info", "self.audio_speaker."]}
        sim = Sim(backend.url, tmp_path, micropython=micropython, extra_config=extra,
                  endpoints=[endpoint.url(TOKEN)]).start()
        try:
            device, provider = await backend.next_device(), await endpoint.next_provider()
            await device.initialize()
            await provider.initialize()
            listed, _ = await provider.list_tools()
            on_xiaozhi, _ = await device.list_tools(with_user_tools=True)
            volume = await provider.call("self.audio_speaker.set_volume", {"volume": 20})
            info = json.loads((await provider.call("self.get_system_info"))["result"]["content"][0]["text"])
            status = await device.call_json("self.get_device_status")
            await endpoint.kill()  # the endpoint goes: the xiaozhi link carries on
            pong = await device.request("ping", next_frame=True)
            await endpoint.start()
            again = await endpoint.next_provider()
            second = await again.request("ping")
        finally:
            code = sim.stop()
        return sim, code, listed, on_xiaozhi, volume, info, status, pong, second, endpoint.port

    sim, code, listed, on_xiaozhi, volume, info, status, pong, second, port = run(main())
    assert code == 0
    assert [tool["name"] for tool in listed] == ["self.audio_speaker.set_volume", "self.get_system_info"]
    assert {tool["name"] for tool in on_xiaozhi} == VISIBLE | USER_ONLY  # the owner's, unchanged
    assert volume["result"]["content"][0]["text"] == "true"
    assert status["audio_speaker"]["volume"] == 20  # one board behind both links
    assert info["mcp_endpoints"] == [{"url": "ws://127.0.0.1:%d/mcp_endpoint/mcp/?token=***" % port,
                                      "connected": True, "attempts": 1}]
    assert pong["result"] == {} and second["result"] == {}
    assert TOKEN not in sim_log(sim)


@pytest.mark.parametrize("config, problem", [
    ({"mcp_endpoint": 42}, '"mcp_endpoint" must be a ws:// or wss:// URL, or a list of them'),
    ({"mcp_endpoint": ["ws://h/mcp/?token=" + TOKEN] * 2}, "mcp_endpoint lists ws://h/mcp/?token=*** twice"),
    ({"mcp_endpoint": "http://h/mcp/?token=" + TOKEN}, "not a WebSocket URL (want ws:// or wss://): "
                                                       "http://h/mcp/?token=***"),
    ({"mcp_endpoint": "ws://h/mcp/?token=x", "mcp_endpoint_tools": "self."},
     '"mcp_endpoint_tools" must be a list of tool names or prefixes'),
    ({"mcp_endpoint": ""}, "needs ota_url, or the server's url and token, or an mcp_endpoint"),
])
def test_a_bad_endpoint_config_stops_the_start_saying_why(tmp_path, config, problem):
    # --extra-config goes into config.json last: it replaces what --mcp-endpoint put there.
    sim = Sim(None, tmp_path, extra_config=config, endpoints=["ws://127.0.0.1:9/mcp/"]).start()
    assert sim.wait(WAIT_S) == 1
    log = sim_log(sim)
    assert "umcp cannot start: " in log and problem in log, log
    assert TOKEN not in log
