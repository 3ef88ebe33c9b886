"""The tool budget (umcpfw.toolbudget, McpServer.set_hidden, mcplink.endpoint): config.json's
tools.hide and links.endpoint.tools, and self.tools.set_enabled at run time, end to end on
the simulator (CPython and the MicroPython unix port, with and without the tool catalogue)
against the scripted xiaozhi backend, the scripted MCP endpoint and the official SDK's
client over the board's own HTTP endpoint, all on loopback."""

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.firmware.test_firmware_mcp_http import SLOW_LINK, free_port, http_config, tap, wait_serving
from tests.firmware.test_firmware_tools import USER_ONLY, VISIBLE
from tests.support.endpointharness import EndpointServer
from tests.support.firmwareharness import RUNTIMES, Backend, Sim, device_session, run

pytestmark = pytest.mark.timeout(120)

SCREEN = {"self.screen.set_brightness", "self.screen.set_theme", "self.screen.get_info"}
LED = {"self.led_strip.set_color", "self.led_strip.get_state"}
CATALOGUE = [pytest.param(True, id="catalogue"), pytest.param(False, id="no-catalogue")]


async def names(device):
    tools, _ = await device.list_tools(with_user_tools=True)
    return {tool["name"] for tool in tools}


async def refused(link, name, arguments):
    """The -32602 message a call of `name` gets (the sessions are 2024-11-05's)."""
    reply = await link.request("tools/call", {"name": name, "arguments": arguments})
    assert reply["error"]["code"] == -32602, reply
    return reply["error"]["message"]


@pytest.mark.parametrize("catalogue", CATALOGUE)
@pytest.mark.parametrize("micropython", RUNTIMES)
def test_hidden_tools_are_absent_refused_and_set_enabled_lasts_across_a_restart(tmp_path, micropython,
                                                                                 catalogue):
    async def scenario():
        extra = {"tools": {"hide": ["self.screen.*"]}}
        async with device_session(tmp_path, micropython, extra_config=extra,
                                  catalogue=catalogue) as (backend, sim, device):
            await device.initialize()
            first = await names(device)
            refusal = await refused(device, "self.screen.set_theme", {"theme": "dark"})

            shown = await device.call_json("self.tools.set_enabled",
                                           {"name": "self.screen.set_theme", "enabled": True})
            changed = await device.notification("notifications/tools/list_changed")
            await device.call_json("self.tools.set_enabled", {"name": "self.led_strip.*", "enabled": False})
            second = await names(device)
            led = await refused(device, "self.led_strip.get_state", {})
            settings = sim.read_settings()

            # A restart (machine.reset()): the choices come back from flash.
            assert (await device.call("self.reboot"))["isError"] is False
            device = await backend.next_device()
            await device.initialize()
            third = await names(device)
            themed = await device.call_json("self.screen.set_theme", {"theme": "dark"})
            # Hiding every tool leaves self.tools.set_enabled, which shows them again.
            await device.call_json("self.tools.set_enabled", {"name": "*", "enabled": False})
            bare = await names(device)
            await device.call_json("self.tools.set_enabled", {"name": "self.*", "enabled": True})
            every = await names(device)
        return first, refusal, shown, changed, second, led, settings, third, themed, bare, every

    first, refusal, shown, changed, second, led, settings, third, themed, bare, every = run(scenario())
    assert first == (VISIBLE | USER_ONLY) - SCREEN
    assert refusal == "unknown tool self.screen.set_theme"  # as a tool the board lacks
    assert shown == {"name": "self.screen.set_theme", "enabled": True}
    assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert second == ((VISIBLE | USER_ONLY) - SCREEN - LED) | {"self.screen.set_theme"}
    assert led == "unknown tool self.led_strip.get_state"
    assert settings["tool_choices"] == [["self.screen.set_theme", True], ["self.led_strip.*", False]]
    assert third == second
    assert themed is True
    assert bare == {"self.tools.set_enabled"}
    assert every == VISIBLE | USER_ONLY  # the latest choice that matches decides, over the hide list too


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_endpoint_offers_only_its_links_tools_and_hears_of_a_change(tmp_path, micropython):
    async def main():
        backend, endpoint = await Backend().start(), await EndpointServer().start()
        extra = {"links": {"endpoint": {"tools": ["self.led_strip.*", "self.alarms.*"]}}}
        sim = Sim(backend.url, tmp_path, micropython=micropython, extra_config=extra,
                  endpoints=[endpoint.url("agent-token")]).start()
        try:
            device, provider = await backend.next_device(), await endpoint.next_provider()
            await device.initialize()
            await provider.initialize()
            offered, _ = await provider.list_tools()
            on_xiaozhi = await names(device)
            status = await refused(provider, "self.get_device_status", {})
            await device.call_json("self.tools.set_enabled", {"name": "self.alarms.*", "enabled": False})
            changed = None
            while changed is None:
                message = await provider.next_message()
                if message.get("method") == "notifications/tools/list_changed":
                    changed = message
            after, _ = await provider.list_tools()
            alarms = await refused(provider, "self.alarms.list", {})
        finally:
            code = sim.stop()
            await endpoint.stop()
            await backend.stop()
        return code, offered, on_xiaozhi, status, after, alarms

    code, offered, on_xiaozhi, status, after, alarms = run(main())
    assert code == 0
    assert [tool["name"] for tool in offered] == [
        "self.alarms.add", "self.alarms.list", "self.alarms.remove",
        "self.led_strip.set_color", "self.led_strip.get_state"]
    assert on_xiaozhi == VISIBLE | USER_ONLY  # the other link shows them all
    assert status == "unknown tool self.get_device_status"
    assert [tool["name"] for tool in after] == ["self.led_strip.set_color", "self.led_strip.get_state"]
    assert alarms == "unknown tool self.alarms.list"


def test_a_bad_pattern_is_refused_with_the_reason(tmp_path):
    async def scenario():
        async with device_session(tmp_path) as (backend, sim, device):
            await device.initialize()
            return await refused(device, "self.tools.set_enabled", {"name": "self.*.x", "enabled": False})

    assert run(scenario()) == ('name must be a tool name or a prefix ending in "*" (at most 64 '
                               "characters), not 'self.*.x'")


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_hidden_tools_are_absent_over_http_for_the_sdk_client(tmp_path, micropython):
    port = free_port()
    extra = dict(SLOW_LINK, tools={"hide": ["self.screen.*"]}, **http_config(port))
    sim = Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path, micropython=micropython, extra_config=extra).start()
    url = "http://127.0.0.1:%d/mcp" % port

    async def scenario():
        async with Client(tap().transport(url), read_timeout_seconds=60) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            with pytest.raises(MCPError) as refusal:
                await client.call_tool("self_screen_set_theme", {"theme": "dark"})
            return listed, refusal.value

    try:
        wait_serving(url, sim)
        listed, refusal = run(scenario())
    finally:
        assert sim.stop() == 0
    portable = {name.replace(".", "_") for name in VISIBLE - SCREEN}  # the clients' form of names
    assert listed == portable
    assert refusal.error.code == -32602 and "unknown tool self_screen_set_theme" in refusal.error.message
