"""A small asyncio MQTT 3.1.1 client (MqttClient), for CPython 3.11+ and MicroPython 1.24+.

It connects (client id, credentials, clean session, keepalive), subscribes, publishes and
receives at QoS 0 and 1, and pings. Its contract, detailed on MqttClient: a silent peer
is detected within 1.125 x keepalive; memory stays bounded (oversized packets are
dropped or close the connection, at most max_queue messages wait for recv()); each
packet leaves in one write where it fits write_buf; reconnecting is the caller's job.

Errors: connect() raises OSError (network, TLS), MqttRefused (CONNACK code), MqttError
(timeout, protocol). Everything after connect raises MqttError once the link is down.
"""

import asyncio
import struct

from unet import close_quietly, read_exactly
from umcp.compat import const, get_logger, piece_size, piece_utf8, ticks_diff, ticks_ms

_PUBLISH = const(0x30)
_PUBACK = const(0x40)
_SUBACK = const(0x90)
_PINGREQ = const(0xC0)
_PINGRESP = const(0xD0)
_DISCONNECT = const(0xE0)

_MAX_REMAINING = const(268435455)  # four length bytes: the protocol's own limit
_MAX_TOPIC = const(256)  # bytes; the protocol allows 65535, a device never needs that
_TLS_PORT = const(8883)
_CLOSE_WAIT_MS = const(1000)  # how long DISCONNECT may take to leave before we hang up

_PINGREQ_BYTES = b"\xc0\x00"
_DISCONNECT_BYTES = b"\xe0\x00"

_log = get_logger("mqtt")


class MqttError(Exception):
    """The connection failed or ended; `reason` says why."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class MqttRefused(MqttError):
    """The broker answered CONNACK with a non-zero return code; `meaning` says what it means
    (unet.mqttopen.REFUSALS)."""

    def __init__(self, code, meaning):
        self.code = code
        self.meaning = meaning
        super().__init__("connection refused: %d %s" % (code, meaning))


def _utf8(text):
    """UTF-8 bytes of `text`: on MicroPython a view of the str itself (no copy)."""
    try:
        return memoryview(text)
    except TypeError:  # CPython: str has no buffer interface
        return text.encode()


def _varint(n, buf, at):
    """Write MQTT remaining length `n` into `buf` at `at`; return the index after it."""
    while True:
        byte = n & 0x7F
        n >>= 7
        buf[at] = byte | 0x80 if n else byte
        at += 1
        if not n:
            return at


def _varint_size(n):
    return 1 if n < 0x80 else 2 if n < 0x4000 else 3 if n < 0x200000 else 4


def _topic_bytes(topic, wildcards):
    t = _utf8(topic) if isinstance(topic, str) else topic
    if not 0 < len(t) <= _MAX_TOPIC:
        raise ValueError("topic length must be 1..%d bytes" % _MAX_TOPIC)
    for ch in bytes(t):  # topics are short: the copy is cheap
        if ch == 0 or (not wildcards and ch in (0x23, 0x2B)):  # NUL, '#', '+'
            raise ValueError("invalid character in topic")
    return t


class MqttClient:
    """One MQTT 3.1.1 connection to a broker, made again by connect() after a failure.

    - CONNECT/CONNACK (client id, username, password, clean session, keepalive); a
      refusal raises MqttRefused carrying the return code (1..5) and its meaning.
    - SUBSCRIBE/SUBACK (a 0x80 failure raises MqttError), PUBLISH at QoS 0 and 1 (QoS 1
      waits for the PUBACK of its packet id), incoming PUBLISH at QoS 0 and 1 (QoS 1 is
      acknowledged), PINGREQ/PINGRESP, DISCONNECT.
    - A silent peer (half-open TCP, a broker that stopped answering) is detected within
      1.125 x keepalive: the client pings after keepalive/2 without incoming traffic and
      gives up after a whole keepalive without any; the connection is then closed and
      every waiter gets MqttError("... no traffic ...").
    - Memory stays bounded: an incoming PUBLISH whose remaining length exceeds
      max_packet, or whose topic is longer than 256 bytes, is read through in small
      pieces and dropped (logged, counted in `dropped`; the connection stays up); any
      other oversized packet, or a malformed length field, closes the connection before
      anything of it is buffered; at most max_queue received messages wait for recv()
      (more are dropped with a warning: the reader never blocks, or a slow consumer
      would stall PINGRESP and PUBACK handling and kill the link).
    - Each packet of up to `write_buf` bytes leaves in one writer.write() call, built in
      one reused buffer; bigger ones go out in write_buf-sized writes. TCP_NODELAY is
      set where the socket allows it (unet.conn.open_connection does, once per connect).
    - Reconnecting is the caller's job: after any failure `connected` is False, the
      reason is in `error`, and a new connect() may be made on the same object.
    """

    def __init__(self, client_id, username=None, password=None, keepalive=240,
                 clean_session=True, max_packet=16384, max_send=None, max_queue=8,
                 write_buf=1024, on_message=None):
        """`max_packet`: largest incoming packet (remaining length) accepted.
        `max_send`: largest outgoing packet (the xiaozhi gateway closes on > 8192).
        `on_message(topic, payload)`: a plain function called for each message
        instead of queueing it for recv(); it must not block."""
        self.client_id = client_id
        self.username = username
        self.password = password
        self.keepalive = keepalive
        self.clean_session = clean_session
        self.max_packet = max_packet
        self.max_send = max_send or _MAX_REMAINING
        self.max_queue = max_queue
        self.on_message = on_message
        self.error = None  # MqttError: why the last connection ended
        self.dropped = 0  # messages dropped because the queue was full
        self.last_rx_ms = self.last_tx_ms = ticks_ms()
        self._buf = bytearray(write_buf)  # every packet up to this size is built here
        self._copy = False  # CPython transports may keep our buffer: hand them a copy
        self._reader = self._writer = None
        self._tasks = []
        self._lock = asyncio.Lock()  # packets from concurrent tasks never interleave
        self._queue = []
        self._arrived = asyncio.Event()
        self._waiting = {}  # packet id -> [Event, result] for PUBACK and SUBACK
        self._next_pid = 0
        self._connected = False
        self._pinged = False  # a PINGREQ went out and nothing came back since

    @property
    def connected(self):
        return self._connected

    # -- connection

    async def connect(self, host, port=None, tls=None, ca=None, timeout=10):
        """Open the connection and wait for CONNACK. `port` defaults to 8883 with TLS
        and 1883 without; `tls` defaults to port == 8883."""
        if self._writer is not None:
            await self.close()
        if tls is None:
            tls = port == _TLS_PORT
        if port is None:
            port = _TLS_PORT if tls else 1883
        self.error = None
        self._queue = []
        self._waiting = {}
        # The connection's code and the opening's, imported here, not at the top: a link
        # forgets them once connected (a library leaves forgetting to its caller:
        # docs/DESIGN.md, "The heap").
        from . import conn, mqttopen

        packet = mqttopen.connect_packet(self.client_id, self.username, self.password,
                                         self.keepalive, self.clean_session)
        reader, writer = await conn.open_connection(host, port, tls, ca, timeout)
        conn = None
        self._reader, self._writer = reader, writer
        self._copy = hasattr(writer, "transport")
        try:
            await self._write(packet)
            packet = None
            code = await asyncio.wait_for(mqttopen.read_connack(reader), timeout)
        except asyncio.TimeoutError:
            await self._hang_up(MqttError("no CONNACK within %d s" % timeout))
            raise self.error
        except ValueError as e:  # not a CONNACK
            await self._hang_up(MqttError(str(e)))
            raise self.error
        except (OSError, EOFError) as e:  # EOFError: CPython's IncompleteReadError too
            await self._hang_up(MqttError("connection closed before CONNACK: %r" % (e,)))
            raise self.error
        except BaseException:  # cancelled: release the socket
            await self._hang_up(MqttError("connect cancelled"))
            raise
        if code:
            await self._hang_up(MqttRefused(code, mqttopen.meaning(code)))
            raise self.error
        mqttopen = None
        self._connected = True
        self._pinged = False
        self.last_rx_ms = ticks_ms()
        self._tasks = [asyncio.create_task(self._read_loop())]
        if self.keepalive:
            self._tasks.append(asyncio.create_task(self._keepalive_loop()))

    async def close(self):
        """Send DISCONNECT (briefly) and hang up. Safe to call at any time."""
        if self._connected:
            self._connected = False
            try:
                await asyncio.wait_for(self._write(_DISCONNECT_BYTES), _CLOSE_WAIT_MS / 1000)
            except Exception:  # the peer is gone already, or stuck: just hang up
                pass
        await self._hang_up(MqttError("closed"))

    async def _hang_up(self, err):
        """End the connection: record why, wake every waiter, drop the socket."""
        if self.error is None:
            self.error = err
        was = self._connected
        self._connected = False
        if was and err.reason != "closed":
            _log.warning("MQTT connection lost: %s", err.reason)
        current = asyncio.current_task() if hasattr(asyncio, "current_task") else None
        for task in self._tasks:
            if task is not current:
                task.cancel()
        self._tasks = []
        for entry in self._waiting.values():
            entry[0].set()
        self._arrived.set()
        writer, self._writer = self._writer, None
        if writer is not None:
            await close_quietly(writer, True)

    def _check(self):
        if not self._connected:
            raise self.error or MqttError("not connected")

    # -- sending

    async def _write(self, data):
        async with self._lock:
            writer = self._writer
            if writer is None:
                raise self.error or MqttError("not connected")
            writer.write(data)
            await writer.drain()
            self.last_tx_ms = ticks_ms()

    async def _send(self, data):
        """Send one packet once connected; a socket error ends the connection."""
        self._check()
        try:
            await self._write(data)
        except OSError as e:
            await self._hang_up(MqttError("send failed: %r" % (e,)))
            raise self.error

    def _packet_id(self):
        for _ in range(0x10000):
            self._next_pid = self._next_pid % 0xFFFF + 1
            if self._next_pid not in self._waiting:
                return self._next_pid
        raise MqttError("no free packet id")

    async def _await_ack(self, pid, timeout, what):
        entry = self._waiting[pid]
        try:
            await asyncio.wait_for(entry[0].wait(), timeout)
        except asyncio.TimeoutError:
            raise MqttError("no %s within %d s" % (what, timeout))
        finally:
            self._waiting.pop(pid, None)
        if entry[1] is None:  # woken by a hang-up, not by the ack
            raise self.error or MqttError("connection lost")
        return entry[1]

    async def subscribe(self, topic, qos=0, timeout=10):
        """Subscribe to one topic filter; returns the granted QoS. (Its packet is
        unet.mqttopen's: a device subscribes as it connects.)"""
        if qos not in (0, 1):
            raise ValueError("QoS must be 0 or 1")
        self._check()
        from . import mqttopen

        pid = self._packet_id()
        packet = mqttopen.subscribe_packet(pid, bytes(_topic_bytes(topic, True)), qos)
        mqttopen = None
        self._waiting[pid] = [asyncio.Event(), None]
        try:
            await self._send(packet)
        except BaseException:
            self._waiting.pop(pid, None)
            raise
        granted = await self._await_ack(pid, timeout, "SUBACK")
        if granted == 0x80:
            raise MqttError("subscription to %s refused" % topic)
        return granted

    async def publish(self, topic, payload, qos=0, retain=False, timeout=10):
        """Publish str, bytes-like, or a list/tuple of such pieces (sent as one payload,
        never joined). QoS 1 returns once the broker's PUBACK arrived."""
        if qos not in (0, 1):
            raise ValueError("QoS must be 0 or 1")
        self._check()
        t = _topic_bytes(topic, False)
        pieces = payload if isinstance(payload, (list, tuple)) else (payload,)
        size = 2 + len(t) + (2 if qos else 0)
        for piece in pieces:
            size += piece_size(piece)
        total = 1 + _varint_size(size) + size
        if size > _MAX_REMAINING or total > self.max_send:
            raise ValueError("packet of %d bytes exceeds the limit of %d" % (total, self.max_send))
        pid = 0
        if qos:
            pid = self._packet_id()
            self._waiting[pid] = [asyncio.Event(), None]
        try:
            await self._send_publish(t, pieces, size, qos, retain, pid)
        except BaseException:
            self._waiting.pop(pid, None)
            raise
        if qos:
            await self._await_ack(pid, timeout, "PUBACK")

    async def _send_publish(self, t, pieces, size, qos, retain, pid):
        self._check()
        async with self._lock:
            writer = self._writer
            if writer is None:
                raise self.error or MqttError("not connected")
            # Header and payload are copied into one reused buffer and written a buffer
            # at a time: a message that fits leaves in a single write (one TCP segment,
            # no garbage on MicroPython); a bigger one in a few full-buffer writes.
            buf = self._buf
            cap = len(buf)
            buf[0] = _PUBLISH | (qos << 1) | (1 if retain else 0)
            n = _varint(size, buf, 1)
            buf[n] = len(t) >> 8
            buf[n + 1] = len(t) & 0xFF
            n += 2
            head_pieces = [t]
            if qos:
                head_pieces.append(struct.pack("!H", pid))
            try:
                for group in (head_pieces, pieces):
                    for piece in group:
                        view = memoryview(piece_utf8(piece))
                        taken = 0
                        while taken < len(view):
                            k = min(cap - n, len(view) - taken)
                            buf[n : n + k] = view[taken : taken + k]
                            n += k
                            taken += k
                            if n == cap:
                                writer.write(bytes(buf) if self._copy else buf)
                                await writer.drain()
                                n = 0
                if n:
                    view = memoryview(buf)[:n]
                    writer.write(bytes(view) if self._copy else view)
                    await writer.drain()
            except OSError as e:
                err = MqttError("send failed: %r" % (e,))
            else:
                self.last_tx_ms = ticks_ms()
                return
        await self._hang_up(err)
        raise self.error

    # -- receiving

    async def recv(self):
        """Next message as (topic str, payload bytes-like). Raises MqttError once the
        connection is down and nothing is left in the queue. With on_message set nothing
        is queued: recv() then only waits for the connection to end."""
        while True:
            if self._queue:
                return self._queue.pop(0)
            if not self._connected:
                raise self.error or MqttError("not connected")
            self._arrived.clear()
            await self._arrived.wait()

    async def _read_fixed_header(self):
        """(first byte, remaining length); MqttError for a malformed or oversized length,
        checked before any of the packet is read."""
        reader = self._reader
        first = (await reader.readexactly(1))[0]
        length = 0
        shift = 0
        while True:
            byte = (await reader.readexactly(1))[0]
            length |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
            if shift > 21:
                raise MqttError("malformed remaining length")
        if length > self.max_packet and first & 0xF0 != _PUBLISH:
            raise MqttError("incoming packet of %d bytes exceeds max_packet %d"
                            % (length, self.max_packet))
        return first, length

    async def _skip(self, n):
        """Read n bytes and forget them, a small piece at a time."""
        while n > 0:
            k = min(n, 512)
            await self._reader.readexactly(k)
            n -= k

    async def _read_loop(self):
        try:
            while True:
                first, length = await self._read_fixed_header()
                self.last_rx_ms = ticks_ms()
                self._pinged = False
                kind = first & 0xF0
                if kind == _PUBLISH:
                    await self._on_publish(first, length)
                elif kind in (_PUBACK, _SUBACK):
                    if length != (2 if kind == _PUBACK else 3):
                        raise MqttError("bad %s length" % ("PUBACK" if kind == _PUBACK else "SUBACK"))
                    data = await self._reader.readexactly(length)
                    entry = self._waiting.get((data[0] << 8) | data[1])
                    if entry is not None:
                        entry[1] = data[2] if kind == _SUBACK else 0
                        entry[0].set()
                elif kind == _PINGRESP and length == 0:
                    pass  # last_rx_ms is all it is for
                else:
                    raise MqttError("unexpected packet type 0x%02x" % first)
                self.last_rx_ms = ticks_ms()
        except MqttError as e:
            _log.warning("MQTT: dropping connection: %s", e.reason)
            await self._hang_up(e)
        except (OSError, EOFError) as e:
            await self._hang_up(MqttError("connection lost: %r" % (e,)))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # e.g. IncompleteReadError on CPython: EOF mid-packet
            await self._hang_up(MqttError("connection lost: %r" % (e,)))

    async def _on_publish(self, first, length):
        qos = (first >> 1) & 3
        if qos > 1:
            raise MqttError("QoS 2 PUBLISH (never subscribed at QoS 2)")
        reader = self._reader
        head = 2 + (2 if qos else 0)
        if length < head:
            raise MqttError("PUBLISH too short")
        tlen = struct.unpack("!H", await reader.readexactly(2))[0]
        if head + tlen > length:
            raise MqttError("bad PUBLISH topic length %d" % tlen)
        if length > self.max_packet or tlen > _MAX_TOPIC:
            # Too big for this device: read it through and drop it; the link stays up.
            # (A QoS 1 message is not acknowledged: the broker may send it again.)
            await self._skip(length - 2)
            self.dropped += 1
            _log.warning("MQTT: dropped a PUBLISH of %d bytes (topic %d bytes): over max_packet %d"
                         " or the 256-byte topic limit", length, tlen, self.max_packet)
            return
        topic = await reader.readexactly(tlen)
        try:
            topic = str(topic, "utf-8")
        except UnicodeError:
            raise MqttError("PUBLISH topic is not UTF-8")
        pid = 0
        if qos:
            pid = struct.unpack("!H", await reader.readexactly(2))[0]
        payload = await read_exactly(reader, length - head - tlen)
        if qos:
            await self._send(struct.pack("!BBH", _PUBACK, 2, pid))
        if self.on_message is not None:
            try:
                self.on_message(topic, payload)
            except Exception as e:  # a faulty handler must not kill the connection
                _log.error("on_message failed: %r", e)
        elif len(self._queue) >= self.max_queue:
            self.dropped += 1
            _log.warning("MQTT: receive queue full, message on %s dropped", topic)
        else:
            self._queue.append((topic, payload))
            self._arrived.set()

    # -- keepalive

    async def _keepalive_loop(self):
        k_ms = self.keepalive * 1000
        step = max(k_ms // 8, 50)
        try:
            while self._connected:
                await asyncio.sleep_ms(step) if hasattr(asyncio, "sleep_ms") else await asyncio.sleep(step / 1000)
                now = ticks_ms()
                quiet = ticks_diff(now, self.last_rx_ms)
                if quiet >= k_ms:
                    # We pinged at least keepalive/2 ago and heard nothing at all.
                    await self._hang_up(MqttError("no traffic from the broker for %d ms (keepalive %d s): connection dead"
                                                  % (quiet, self.keepalive)))
                    return
                if (quiet >= k_ms // 2 and not self._pinged) or ticks_diff(now, self.last_tx_ms) >= k_ms // 2:
                    # Never wait for the lock here: a send stuck on a dead link holds
                    # it, and this loop must stay free to notice that. Any packet
                    # being sent resets the broker's timer anyway.
                    writer = self._writer
                    if writer is not None and not self._lock.locked():
                        writer.write(_PINGREQ_BYTES)  # 2 bytes, sent at once or buffered
                        self.last_tx_ms = now
                        self._pinged = True
        except asyncio.CancelledError:
            raise
        except Exception as e:
            await self._hang_up(MqttError("keepalive failed: %r" % (e,)))
