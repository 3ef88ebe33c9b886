"""Hostile input for the device: mutated xiaozhi/MCP messages, each with what the device
owes in return, and a driver that sends them over a real link and accounts for every answer.

Used by tests/firmware/test_fuzz.py (a few thousand messages in make test), by make soak (a
hundred thousand) and by make bench (10,000, on the measuring form's heap). Seeded: a
failure names the seed and the message that caused it. What a request owes: an answer
carrying its id exactly as sent (a lone surrogate escape included: json.loads reads the very
same string back), also when it is refused as nested too deep (the top-level "id" member,
before the nesting). Text that is not JSON (cut short, a NaN) is owed an error with a null
id, whatever id it shows (JSON-RPC 2.0). Messages stay within the limit the device
announced.
"""

import asyncio
import json
import random
import time

# Tools the fuzzer may call: none of them resets the device, writes flash or waits on
# the network.
SAFE_TOOLS = ("self.audio_speaker.set_volume", "self.screen.set_brightness",
              "self.screen.set_theme", "self.get_device_status", "self.screen.get_info",
              "self.led_strip.get_state", "self.host.get_temperature")

EMOJI = "\U0001F600"

# What the device owes for one message.
REPLY = "reply"          # a response carrying this id (result or error)
NULL_ERROR = "null"      # an error response with a null id (-32700 / -32600)
NOTHING = "nothing"      # no answer (notifications, non-MCP frames, binary frames)


def _odd_values(rng):
    """Values of every JSON type, edge cases included."""
    return rng.choice([
        None, True, False, 0, -1, 1, 50, 100, 101, -(2 ** 31), 2 ** 53, 1.5, -0.0, 1e308,
        "", "50", "light", "dark", "sepia", "x" * rng.choice((1, 100, 2000)),
        "\u4e2d\u6587", EMOJI, "\ud83d", "a\x00b", [], [1, 2], {}, {"a": {"b": [1]}},
    ])


def _id_for(n, rng):
    """(id as sent, id as the reply must carry it): the same, a lone surrogate included."""
    kind = rng.randrange(6)
    if kind == 0:
        return n, n
    if kind == 1:
        return -n, -n
    if kind == 2:
        return "s%d" % n, "s%d" % n
    if kind == 3:
        return "%s%d" % (EMOJI, n), "%s%d" % (EMOJI, n)
    if kind == 4:
        return "\ud83d%d" % n, "\ud83d%d" % n  # a lone surrogate: echoed escaped, as sent
    return "\u00e9\u4e2d-%d" % n, "\u00e9\u4e2d-%d" % n


def _request_body(rng):
    """(method, params or a marker to leave params out) of a request or notification."""
    pick = rng.randrange(12)
    if pick == 0:
        return "ping", None
    if pick == 1:
        return "tools/list", rng.choice([None, {}, {"cursor": _odd_values(rng)},
                                         {"withUserTools": _odd_values(rng)}, [], "x"])
    if pick in (2, 3, 4, 5):
        name = rng.choice(SAFE_TOOLS + ("self.no_such_tool", "", EMOJI, "x" * 300))
        if rng.randrange(8) == 0:
            name = _odd_values(rng)
        args = {}
        for key in ("volume", "brightness", "theme", "extra"):
            if rng.randrange(3) == 0:
                args[key] = _odd_values(rng)
        if rng.randrange(10) == 0:
            args = _odd_values(rng)
        return "tools/call", {"name": name, "arguments": args}
    if pick == 6:
        return "logging/setLevel", {"level": rng.choice(["debug", "info", "error", "loud", 3, None])}
    if pick == 7:
        return "initialize", {"protocolVersion": rng.choice(["2024-11-05", "2025-11-25", "1999", 7, None]),
                              "capabilities": rng.choice([{}, [], "x", {"roots": {}}]),
                              "clientInfo": {"name": _odd_values(rng)}}
    if pick == 8:
        return rng.choice(["no/such/method", "", "tools/call/", EMOJI, "x" * 200]), {}
    if pick == 9:
        return "tools/call", {"name": "self.screen.set_theme",
                              "arguments": {"theme": "[" * rng.randrange(1, 30)}}
    if pick == 10:  # nested, within the depth the device takes (envelope and payload add 3)
        return "tools/call", _nest(rng.randrange(2, 14))
    return "ping", rng.choice([None, {}, [], {"_meta": {"progressToken": _odd_values(rng)}}])


def _nest(depth):
    value = 1
    for _ in range(depth):
        value = {"a": [value]}
    return value


class Case:
    """One frame to send and what it owes: kind REPLY (with `reply_id`), NULL_ERROR or NOTHING."""

    __slots__ = ("frame", "kind", "reply_id")

    def __init__(self, frame, kind, reply_id=None):
        self.frame = frame
        self.kind = kind
        self.reply_id = reply_id


def _envelope(session_id, payload_text):
    return '{"session_id":%s,"type":"mcp","payload":%s}' % (json.dumps(session_id), payload_text)


def make_case(n, session_id, rng):
    """The n-th hostile message (n unique: it makes the request ids unique)."""
    pick = rng.randrange(20)
    if pick < 11:  # a request: answered with its id, whatever else is wrong with it
        sent_id, reply_id = _id_for(n, rng)
        method, params = _request_body(rng)
        payload = {"jsonrpc": "2.0", "id": sent_id, "method": method}
        if params is not None:
            payload["params"] = params
        return Case(_envelope(session_id, json.dumps(payload)), REPLY, reply_id)
    if pick == 11:  # an id JSON-RPC does not allow: answered with a null id
        payload = {"jsonrpc": "2.0", "id": rng.choice([None, True, [n], {"n": n}, 1.5]), "method": "ping"}
        return Case(_envelope(session_id, json.dumps(payload)), NULL_ERROR)
    if pick == 12:  # not JSON-RPC 2.0: answered with its id when it has a usable one
        payload = {"jsonrpc": rng.choice(["1.0", 2, None]), "id": n, "method": "ping"}
        return Case(_envelope(session_id, json.dumps(payload)), REPLY, n)
    if pick == 13:  # a notification: never answered
        method, params = _request_body(rng)
        payload = {"jsonrpc": "2.0", "method": "notifications/" + rng.choice(["initialized", "x", "cancelled"])}
        if payload["method"] == "notifications/cancelled":
            payload["params"] = {"requestId": "never-used-%d" % n}  # cancel nothing we wait for
        return Case(_envelope(session_id, json.dumps(payload)), NOTHING)
    if pick == 14:  # nested far too deep: the payload itself (no id), or its params
        depth = rng.choice((33, 100, 1000))
        if rng.randrange(2):
            return Case(_envelope(session_id, "[" * depth + "]" * depth), NULL_ERROR)
        sent_id, reply_id = _id_for(n, rng)
        text = '{"jsonrpc":"2.0","id":%s,"method":"ping","params":{"x":%s}}' % (
            json.dumps(sent_id), "[" * depth + "]" * depth)
        return Case(_envelope(session_id, text), REPLY, reply_id)
    if pick == 15:  # truncated: not JSON, a null id even if the cut comes after the id
        text = _envelope(session_id, json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}))
        text = text[:rng.randrange(len(text) - 40, len(text) - 1)]
        return Case(text, NULL_ERROR)
    if pick == 16:  # a NaN literal and duplicated keys: not JSON, a null id
        text = '{"jsonrpc":"2.0","id":%d,"id":%d,"method":"tools/call","params":{"name":"x","arguments":{"v":NaN}}}' % (n, n)
        return Case(_envelope(session_id, text), NULL_ERROR)
    if pick == 17:  # duplicated keys, valid otherwise: the last wins
        text = '{"jsonrpc":"2.0","id":"dup","id":%d,"method":"ping","method":"ping"}' % n
        return Case(_envelope(session_id, text), REPLY, n)
    if pick == 18:  # a binary frame: ignored
        return Case(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))), NOTHING)
    # Not MCP at all: other xiaozhi types, garbage text, JSON that is not an object.
    return Case(rng.choice(['{"type":"tts","state":"start"}', '{"type":"nonsense"}', "garbage",
                            "[1,2,3]", "42", '{"type":7}', '{"type":"listen"}']), NOTHING)


class Report:
    """What one run saw. `problems` says, with the seed, everything the device owed and
    did not give (empty: a clean run)."""

    def __init__(self, seed):
        self.seed = seed
        self.sent = 0
        self.requests = 0  # requests owed an answer with their id
        self.answered = 0  # of them, answered so
        self.unanswered = []  # the frames of those that were not (the first few)
        self.unanswered_count = 0
        self.expected_null = 0  # unreadable messages owed a null-id error
        self.null_errors = 0  # null-id errors seen
        self.out_of_memory = 0  # answers that said the device had no heap for the request
        self.skipped = 0  # cases drawn over the announced message limit, not sent
        self.drops = 0  # connections that ended during the run
        self.late_pings = 0  # window pings answered later than ping_s (or not at all)
        self.ping_ms = []  # round trip of the ping after each window

    @property
    def problems(self):
        found = []
        if self.unanswered_count:
            found.append("%d request(s) with a readable id unanswered, e.g. %r"
                         % (self.unanswered_count, self.unanswered[:1]))
        if self.null_errors != self.expected_null:
            found.append("%d null-id errors, %d expected" % (self.null_errors, self.expected_null))
        if self.drops:
            found.append("the link dropped %d time(s)" % self.drops)
        if self.late_pings:
            found.append("%d window ping(s) late or unanswered" % self.late_pings)
        return ["seed %d: %s" % (self.seed, problem) for problem in found]

    def summary(self):
        worst = max(self.ping_ms) if self.ping_ms else 0
        return ("%d messages (%d of %d requests answered with their id, %d out of memory; %d "
                "null-id errors of %d owed), %d link drop(s), ping after each window: worst %.1f ms"
                % (self.sent, self.answered, self.requests, self.out_of_memory, self.null_errors,
                   self.expected_null, self.drops, worst))


class Replies:
    """Reads every frame of the device into replies by id; counts null-id errors. A frame
    a strict parser refuses (invalid UTF-8 closes the link first) or a second answer to
    one id is noted in `bad`."""

    def __init__(self, ws):
        self.ws = ws
        self.by_id = {}
        self.null_errors = 0
        self.bad = []
        self.closed = False
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self):
        try:
            while True:
                frame = await self.ws.recv()
                envelope = json.loads(frame)
                payload = envelope.get("payload")
                if envelope.get("type") != "mcp" or "method" in payload:
                    continue  # notifications (log messages, list changes)
                if payload.get("id") is None:
                    if "error" not in payload:
                        self.bad.append(payload)
                    self.null_errors += 1
                else:
                    key = json.dumps(payload["id"])
                    if key in self.by_id:
                        self.bad.append(("two replies", payload))
                    self.by_id[key] = payload
                self.changed.set()
        except Exception:  # the connection ended (or sent what JSON cannot read)
            self.closed = True
            self.changed.set()
            raise

    async def wait_for(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.closed:
                return False
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass
        return True


async def drive(ws, session_id, count, seed, window=50, settle_s=10.0, ping_s=1.0, limit=None,
                reconnect=None):
    """Send `count` hostile messages over the device's connection `ws` (a websockets
    server connection after the hello), in windows; after each window, what the device
    owes is collected (within `settle_s`) and a ping must come back within `ping_s`.
    `limit`: the message limit the device announced (cases over it are drawn again).
    `reconnect()`: a coroutine giving (ws, session_id) of the device's next connection,
    to go on after a drop (without it a drop ends the run). Returns a Report: its
    `problems` are what the device owed and did not give."""
    rng = random.Random(seed)
    replies = Replies(ws)
    report = Report(seed)
    try:
        n = 0
        while n < count:
            owed = []
            expected_null = 0
            for _ in range(min(window, count - n)):
                n += 1
                case = make_case(n, session_id, rng)
                while limit and len(case.frame if isinstance(case.frame, bytes) else case.frame.encode()) > limit:
                    report.skipped += 1
                    case = make_case(n, session_id, rng)
                try:
                    await ws.send(case.frame)
                except Exception:  # the connection is gone: the reader notes it
                    break
                report.sent += 1
                if case.kind == REPLY:
                    owed.append((json.dumps(case.reply_id), case))
                elif case.kind == NULL_ERROR:
                    expected_null += 1
            report.requests += len(owed)
            report.expected_null += expected_null
            nulls_before = replies.null_errors
            await replies.wait_for(
                lambda: all(key in replies.by_id for key, _ in owed)
                and replies.null_errors - nulls_before >= expected_null, settle_s)
            for key, case in owed:
                answer = replies.by_id.pop(key, None)
                if answer is None:
                    report.unanswered_count += 1
                    if len(report.unanswered) < 5:
                        report.unanswered.append(case.frame)
                else:
                    report.answered += 1
                    if (answer.get("error") or {}).get("message") == "out of memory":
                        report.out_of_memory += 1
            report.null_errors += replies.null_errors - nulls_before
            replies.null_errors = nulls_before = 0
            if not replies.closed:
                ping_id = "window-ping-%d" % n
                started = time.monotonic()
                key = json.dumps(ping_id)
                try:
                    await ws.send(_envelope(session_id, json.dumps(
                        {"jsonrpc": "2.0", "id": ping_id, "method": "ping"})))
                    on_time = await replies.wait_for(lambda: key in replies.by_id, ping_s)
                    if not on_time:
                        report.late_pings += 1
                        await replies.wait_for(lambda: key in replies.by_id, settle_s)
                    if key in replies.by_id:
                        report.ping_ms.append((time.monotonic() - started) * 1000)
                        replies.by_id.pop(key)
                except Exception:
                    pass
            if replies.closed:
                report.drops += 1
                replies.task.cancel()
                if reconnect is None:
                    break
                ws, session_id = await reconnect()
                replies = Replies(ws)
        report.bad = replies.bad
        return report
    finally:
        replies.task.cancel()
