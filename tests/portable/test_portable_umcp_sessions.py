# Several clients of one McpServer at once (the xiaozhi link, an MCP endpoint, HTTP
# clients): each session has its own ids, revision, log level, subscriptions and page
# limit, and hears only what is its own. Runs under pytest and inside MicroPython.

import asyncio
import json

from umcp import INTEGER, McpServer, Property
from umcp.compat import join_pieces
from portable_support import Gate, Wire, call, settle

VOLUME = [Property("volume", INTEGER, minimum=0, maximum=100)]


def Client(server, **options):
    """One session of `server`, collecting what it was sent."""
    return Wire(server=server, **options)


def server_with_tools():
    server = McpServer(name="dev", version="9")
    server.add_tool("self.set_volume", "Set the volume", VOLUME, lambda args: args["volume"])
    return server


async def test_two_clients_with_the_same_ids_each_get_their_own_answers():
    server = server_with_tools()
    gate = Gate("slow")
    server.add_tool("slow", "waits", None, gate)
    a, b = Client(server), Client(server)
    await a.feed(call("slow", id=1))
    await b.feed(call("self.set_volume", {"volume": 7}, id=1))
    await settle(gate.entered.is_set)
    # B's id 1 is queued behind A's running id 1: cancelling "1" from A stops A's call only.
    await a.feed({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    await settle(lambda: b.find(1) is not None)
    assert gate.cancelled and a.find(1) is None
    assert b.find(1)["result"]["content"][0]["text"] == "7"
    assert a.messages() == []


async def test_each_client_negotiates_its_own_revision():
    server = server_with_tools()
    old, new = Client(server), Client(server)
    assert (await old.initialize("2024-11-05"))["result"]["protocolVersion"] == "2024-11-05"
    assert (await new.initialize("2025-11-25"))["result"]["protocolVersion"] == "2025-11-25"
    refused = await old.request("tools/call", {"name": "self.set_volume", "arguments": {"volume": 500}}, id=2)
    assert refused["error"]["code"] == -32602  # a protocol error up to 2025-06-18
    await new.feed(call("self.set_volume", {"volume": 500}, id=2))
    assert new.find(2)["result"]["isError"] is True  # a tool result from 2025-11-25


async def test_list_changes_reach_every_initialized_client_and_no_other():
    server = server_with_tools()
    a, b, fresh = Client(server), Client(server), Client(server)
    await a.initialize()
    await b.initialize("2024-11-05")
    server.add_tool("extra", "one more", None, lambda args: True)
    server.add_tool("extra2", "and another", None, lambda args: True)
    await settle(lambda: a.methods() and b.methods())
    await asyncio.sleep(0)
    assert a.methods() == b.methods() == ["notifications/tools/list_changed"]  # one per burst
    assert fresh.messages() == []


async def test_logs_go_to_the_caller_during_a_call_and_to_everyone_outside_one():
    server = McpServer()
    a, b = Client(server), Client(server)

    async def chatty(args):
        await server.log("warning", "from the call")
        return "ok"

    server.add_tool("chatty", "logs", None, chatty)
    await a.initialize()
    await b.initialize()
    assert (await b.request("logging/setLevel", {"level": "error"}, id=3))["result"] == {}
    await a.feed(call("chatty", id=5))
    await settle(lambda: a.find(5) is not None)
    assert [f["params"]["data"] for f in a.messages() if f.get("method") == "notifications/message"] == ["from the call"]
    await b.feed(call("chatty", id=5))
    await settle(lambda: b.find(5) is not None)
    assert "notifications/message" not in b.methods()  # b wants errors only
    await server.log("warning", "outside")
    await server.log("error", "bad")
    assert [f["params"]["data"] for f in a.messages() if f.get("method") == "notifications/message"] == [
        "from the call", "outside", "bad"]
    assert [f["params"]["data"] for f in b.messages() if f.get("method") == "notifications/message"] == ["bad"]


async def test_a_log_from_a_task_of_its_own_reaches_everyone_even_while_a_call_runs():
    # A background job (an upgrade answered at once, a sensor's upkeep) logs its outcome
    # while another client's call happens to run: that client is not the job's.
    server = McpServer()
    a, b = Client(server), Client(server)
    gate = Gate()
    server.add_tool("slow", "waits", None, gate)
    await a.initialize()
    await b.initialize()
    await b.feed(call("slow", id=7))
    await settle(gate.entered.is_set)

    async def background():
        await server.log("error", "upgrade failed")
        # Nor may it take the running call's progress as its own.
        return server.progress_requested()

    assert await asyncio.create_task(background()) is False
    gate.release.set()
    await settle(lambda: b.find(7) is not None)
    for client in (a, b):
        logged = [f["params"]["data"] for f in client.messages() if f.get("method") == "notifications/message"]
        assert logged == ["upgrade failed"], logged


async def test_progress_reaches_only_the_client_that_asked():
    server = McpServer()
    a, b = Client(server), Client(server)

    async def counting(args):
        await server.progress(1, 2)
        await server.progress(2, 2)
        return "done"

    server.add_tool("count", "counts", None, counting)
    await a.feed(call("count", id=1, meta={"progressToken": "t"}))
    await settle(lambda: a.find(1) is not None)
    assert [f["params"]["progress"] for f in a.messages() if f.get("method") == "notifications/progress"] == [1, 2]
    assert b.messages() == []


async def test_subscriptions_are_each_clients_own():
    server = McpServer()
    server.add_resource("device://status", "status", lambda: {"volume": 1})
    a, b = Client(server), Client(server)
    await a.initialize()
    await b.initialize()
    assert (await a.request("resources/subscribe", {"uri": "device://status"}, id=4))["result"] == {}
    assert server.resource_updated("device://status") is True
    await settle(lambda: "notifications/resources/updated" in a.methods())
    assert "notifications/resources/updated" not in b.methods()
    # A new initialize starts that client's session afresh: its subscriptions are gone.
    await a.initialize()
    assert server.resource_updated("device://status") is False


async def test_a_closed_session_loses_its_calls_and_hears_nothing_more():
    server = server_with_tools()
    gate = Gate()
    server.add_tool("slow", "waits", None, gate)
    a, b = Client(server), Client(server)
    await a.initialize()
    await b.initialize()
    await a.feed(call("slow", id=1))
    await a.feed(call("self.set_volume", {"volume": 3}, id=2))
    await b.feed(call("self.set_volume", {"volume": 4}, id=1))
    await settle(gate.entered.is_set)
    assert a.session.close() == 2  # the running call and the queued one
    await settle(lambda: b.find(1) is not None)
    assert gate.cancelled and a.find(1) is None and a.find(2) is None
    server.add_tool("later", "after a left", None, lambda args: True)
    await settle(lambda: "notifications/tools/list_changed" in b.methods())
    assert "notifications/tools/list_changed" not in a.methods()


async def test_each_client_pages_at_its_own_limit_and_announces_its_own_message_limit():
    server = McpServer(page_limit=8000)
    for index in range(12):
        server.add_tool("tool_%02d" % index, "x" * 150, None, lambda args: True)
    server.max_message = 4096
    small, large = Client(server, page_limit=600, max_message=2048), Client(server)
    limits = []
    for client in (small, large):
        result = (await client.initialize())["result"]
        limits.append(result["capabilities"]["experimental"]["messageLimit"]["maxBytes"])
    assert limits == [2048, 4096]
    first_small = (await small.request("tools/list", id=7))["result"]
    first_large = (await large.request("tools/list", id=7))["result"]
    assert "nextCursor" in first_small and "nextCursor" not in first_large
    assert len(first_large["tools"]) == 12 and 0 < len(first_small["tools"]) < 12


async def test_the_default_session_serves_a_server_with_one_transport():
    server = server_with_tools()
    frames = []
    server.set_sender(lambda pieces: frames.append(json.loads(join_pieces(pieces))))
    await server.handle('{"jsonrpc":"2.0","id":9,"method":"ping"}')
    assert frames == [{"jsonrpc": "2.0", "id": 9, "result": {}}]
    other = Client(server)
    await other.request("ping", id=10)
    assert len(frames) == 1  # the other client's answer went to it alone


async def test_a_client_offered_some_tools_sees_and_calls_only_those():
    server = server_with_tools()
    server.add_user_only_tool("self.reboot", "Reboot", None, lambda args: "rebooting")
    server.add_tool("self.lamp.turn_on", "Lamp on", None, lambda args: "on")
    owner = Client(server)  # the xiaozhi link: user-only tools on withUserTools
    endpoint = Client(server, offered=lambda tool: not tool.user_only)
    lamp_only = Client(server, offered=lambda tool: tool.name.startswith("self.lamp."))
    everything = Client(server, offered=lambda tool: True)

    async def names(client, params=None):
        result = (await client.request("tools/list", params, id=2))["result"]
        return [tool["name"] for tool in result["tools"]]

    assert await names(owner) == ["self.set_volume", "self.lamp.turn_on"]
    assert await names(owner, {"withUserTools": True}) == ["self.set_volume", "self.reboot", "self.lamp.turn_on"]
    # withUserTools changes nothing for a client whose tools were chosen for it.
    assert await names(endpoint, {"withUserTools": True}) == ["self.set_volume", "self.lamp.turn_on"]
    assert await names(lamp_only) == ["self.lamp.turn_on"]
    assert await names(everything) == ["self.set_volume", "self.reboot", "self.lamp.turn_on"]
    refused = await endpoint.request("tools/call", {"name": "self.reboot", "arguments": {}}, id=3)
    assert refused["error"]["code"] == -32602 and "unknown tool self.reboot" in refused["error"]["message"]
    await lamp_only.feed(call("self.set_volume", {"volume": 1}, id=4))
    assert lamp_only.find(4)["error"]["code"] == -32602
    await owner.feed(call("self.reboot", id=5))
    await everything.feed(call("self.reboot", id=5))
    await lamp_only.feed(call("self.lamp.turn_on", id=6))
    await settle(lambda: owner.find(5) and everything.find(5) and lamp_only.find(6))
    assert owner.find(5)["result"]["content"][0]["text"] == "rebooting"
    assert everything.find(5)["result"]["content"][0]["text"] == "rebooting"
    assert lamp_only.find(6)["result"]["content"][0]["text"] == "on"


async def test_a_flood_of_calls_is_refused_past_the_queue_limit_and_others_still_get_through():
    server = server_with_tools()
    gate = Gate()
    server.add_tool("slow", "waits", None, gate)
    flood, other = Client(server), Client(server)
    await flood.feed(call("slow", id=0))
    await settle(gate.entered.is_set)
    for n in range(1, 13):  # 8 may wait behind the running call; 4 are refused at once
        await flood.feed(call("self.set_volume", {"volume": n}, id=n))
    refused = [n for n in range(1, 13) if flood.find(n) is not None]
    assert refused == [9, 10, 11, 12]
    assert {flood.find(n)["error"]["code"] for n in refused} == {-32000}
    await other.feed(call("self.set_volume", {"volume": 50}, id=1))  # its own queue is empty
    assert other.find(1) is None  # queued, not refused
    gate.release.set()
    await settle(lambda: other.find(1) is not None and flood.find(8) is not None)
    assert [flood.find(n)["result"]["content"][0]["text"] for n in range(1, 9)] == [
        str(n) for n in range(1, 9)]
    assert other.find(1)["result"]["content"][0]["text"] == "50"
    await flood.feed(call("self.set_volume", {"volume": 13}, id=13))  # drained: served again
    await settle(lambda: flood.find(13) is not None)
    assert flood.find(13)["result"]["content"][0]["text"] == "13"


async def test_null_params_count_as_none():
    # xiaozhi-esp32-server's manager console sends "params": null with tools/list.
    client = Client(server_with_tools())
    reply = await client.feed({"jsonrpc": "2.0", "method": "tools/list", "params": None, "id": 2})
    assert [tool["name"] for tool in reply[0]["result"]["tools"]] == ["self.set_volume"]
    assert (await client.feed({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": None}))[0]["result"] == {}
    assert await client.feed({"jsonrpc": "2.0", "method": "notifications/initialized", "params": None}) == []
