"""The board's MCP endpoint with "auth": "none" (config.json's mcp_http), as Home Assistant
reaches it: its MCP integration (homeassistant/components/mcp) connects with the official
SDK's Streamable HTTP client and a legacy session (initialize, then tools/list or one
tools/call, then DELETE), and sends no Authorization header unless OAuth gave it a token.
Under CPython and the MicroPython unix port: that client lists and calls the board's tools
without a token; the same client gets 401 from a board that has one; a foreign Host (DNS
rebinding) or Origin is refused either way; the boot log says plainly that anyone on the
network can call the tools."""

import json
import warnings

import httpx2 as httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import PaginatedRequestParams

from tests.firmware.test_firmware_mcp_http import BEARER, free_port, http_config, modern, modern_headers, post
from tests.support.firmwareharness import RUNTIMES, WAIT_S, Sim, run
from tests.support.toolnames import check_tool_names

pytestmark = pytest.mark.timeout(300)
SLOW_LINK = {"backoff_min": 5, "backoff_max": 30}
SMALL_FRAMES = 2000


def open_config(port):
    return {"mcp_http": {"port": port, "auth": "none", "bind": "127.0.0.1"}}


def wait_answering(url, sim, status):
    """Until a plain POST gets `status` (the endpoint is up)."""
    import time

    for _ in range(WAIT_S * 10):
        assert sim.running, "the simulator ended"
        try:
            if httpx.post(url, content=b"{}", headers={"Content-Type": "application/json"},
                          timeout=1).status_code == status:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the board's MCP endpoint never answered %d" % status)


@pytest.fixture(params=RUNTIMES)
def boards(request, tmp_path):
    """One board with "auth": "none" and one with a token, under the same runtime."""
    open_port, token_port = free_port(), free_port()
    # Its message links' frames (max_payload) hold about a third of its tools each.
    open_board = Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path / "open", micropython=request.param,
                     extra_config=dict(SLOW_LINK, max_payload=SMALL_FRAMES, **open_config(open_port))).start()
    token_board = Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path / "token", micropython=request.param,
                      extra_config=dict(SLOW_LINK, **http_config(token_port))).start()
    try:
        urls = ("http://127.0.0.1:%d/mcp" % open_port, "http://127.0.0.1:%d/mcp" % token_port)
        wait_answering(urls[0], open_board, 400)  # served (an empty object is no message)
        wait_answering(urls[1], token_board, 401)
        yield {"open": urls[0], "token": urls[1], "open_board": open_board}
    finally:
        open_board.stop()
        token_board.stop()


async def home_assistant_session(url, call=None, statuses=None):
    """What Home Assistant's coordinator does, with no token: a legacy session over the
    SDK's streamable_http_client on a plain httpx client; tools/list, or one tools/call.
    `statuses` (a list) gets each HTTP answer's status."""
    async def record(response):
        if statuses is not None:
            statuses.append(response.status_code)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with httpx.AsyncClient(timeout=WAIT_S, event_hooks={"response": [record]}) as http, \
                streamable_http_client(url, http_client=http) as (read, write, *_), \
                ClientSession(read, write) as session:
            initialized = await session.initialize()
            assert initialized.capabilities.tools is not None
            if call is None:
                return initialized, await session.list_tools()
            return initialized, await session.call_tool(*call)


def test_home_assistant_s_client_lists_and_calls_the_tools_of_a_board_without_a_token(boards):
    initialized, listing = run(home_assistant_session(boards["open"]))
    assert initialized.server_info.name  # the title Home Assistant gives the entry
    tools = {tool.name: tool for tool in listing.tools}
    check_tool_names(tools)  # as Claude Desktop and OpenAI-style clients check them
    assert {"self_get_device_status", "self_audio_speaker_set_volume", "self_screen_set_theme"} <= set(tools)
    assert "self_reboot" not in tools  # user-only tools stay the owner's
    _, called = run(home_assistant_session(boards["open"], ("self_audio_speaker_set_volume", {"volume": 41})))
    assert not called.is_error, called
    _, status = run(home_assistant_session(boards["open"], ("self_get_device_status", {})))
    assert status.structured_content["audio_speaker"]["volume"] == 41
    with open(boards["open_board"].log_path, errors="replace") as source:
        log = source.read()
    assert "anyone on the network can call the board's tools" in log, log


async def every_page(url):
    """The tools/list of a client that follows nextCursor to the end: (names, pages)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with streamable_http_client(url) as (read, write, *_), ClientSession(read, write) as session:
            await session.initialize()
            names, pages, cursor = [], 0, None
            while True:
                listing = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                names += [tool.name for tool in listing.tools]
                pages += 1
                cursor = listing.next_cursor
                if cursor is None:
                    return names, pages


def test_home_assistant_s_one_listing_holds_every_tool(boards):
    # Home Assistant calls list_tools() once and never follows nextCursor. An HTTP answer is
    # no frame: it holds every tool, however small the board's frames (max_payload).
    _, listing = run(home_assistant_session(boards["open"]))
    assert listing.next_cursor is None
    listed = [tool.name for tool in listing.tools]
    names, pages = run(every_page(boards["open"]))
    assert pages == 1 and names == listed
    sizes = sum(len(json.dumps(tool.model_dump(by_alias=True, exclude_none=True))) for tool in listing.tools)
    assert sizes > 2 * SMALL_FRAMES, sizes  # more than two frames' worth
    assert len(listed) == len(set(listed)) >= 10


def test_the_same_client_gets_401_from_a_board_with_a_token(boards):
    statuses = []
    with pytest.raises(Exception) as refused:
        run(home_assistant_session(boards["token"], statuses=statuses))
    assert statuses == [401] and "Unauthorized" in repr(refused.value), (statuses, refused.value)
    message = modern("server/discover")
    assert post(boards["token"], message, modern_headers(message), token=None).status_code == 401
    assert post(boards["token"], message, modern_headers(message)).status_code == 200  # with BEARER


@pytest.mark.parametrize("which", ["open", "token"])
def test_a_foreign_host_or_origin_is_refused_either_way(boards, which):
    url = boards[which]
    message = modern("server/discover")
    headers = modern_headers(message)
    token = None if which == "open" else BEARER
    own = url.split("/")[2]
    for extra in ({"Host": "evil.example", "Origin": "http://evil.example"},  # DNS rebinding, as a browser sends it
                  {"Origin": "http://evil.example"},
                  {"Host": own, "Origin": "http://127.0.0.1:1"}):
        refused = post(url, message, dict(headers, **extra), token=token)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == -32600, (extra, refused.text)
    foreign = post(url, message, dict(headers, Host="evil.example"), token=token)
    if which == "open":  # no token: the Host alone must be the board's
        assert foreign.status_code == 403 and "Host evil.example" in foreign.json()["error"]["message"]
    else:  # the token is what counts; the board may be reached by any name
        assert foreign.status_code == 200
    for host in (own, "localhost:%s" % own.split(":")[1]):
        assert post(url, message, dict(headers, Host=host), token=token).status_code == 200, host
    same_origin = post(url, message, dict(headers, Origin="http://" + own), token=token)
    assert same_origin.status_code == 200 and json.loads(same_origin.text)["result"]["supportedVersions"]
