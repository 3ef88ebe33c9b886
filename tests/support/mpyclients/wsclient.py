"""Drives lib/unet/ws.py under MicroPython against the scenario server of
tests/net/test_unet_ws.py: micropython wsclient.py ws://127.0.0.1:PORT [TLS-CHECKS.json]
Prints one JSON object per check; the test asserts on them and on what the server saw.
"""
import asyncio
import json
import sys

import unet.conn
import unet.ws

HEADERS = {"Authorization": "Bearer tok en", "Device-Id": "aa:bb:cc:dd:ee:ff", "X-Extra": "1"}
BINARY = bytes(range(256)) * 400  # 102400 bytes


async def echo(base):
    ws = await unet.ws.connect(base + "/echo?x=1", HEADERS, max_message=200000)
    await ws.send("h\u00e9llo")
    text = await ws.recv()
    await ws.send(BINARY)
    binary = await ws.recv()
    await ws.send(["ab", "c", "d\u00e9fg", "h" * 700])
    pieces = await ws.recv()
    await ws.close(1000, "bye")
    return {"text": text, "binary_ok": binary == BINARY, "pieces": pieces}


async def until_closed(base, path, max_message=32768):
    ws = await unet.ws.connect(base + path, max_message=max_message)
    messages = []
    try:
        while True:
            message = await ws.recv()
            messages.append(message if isinstance(message, str) else list(message))
    except unet.ws.ConnectionClosed as e:
        return {"messages": messages, "code": e.code, "reason": e.reason}


async def refused(base):
    try:
        await unet.ws.connect(base + "/refuse")
    except Exception as e:
        return {"error": type(e).__name__, "status": getattr(e, "status", None)}
    return {"error": None}


async def tls(url, ca, verify=True):
    try:
        ws = await unet.ws.connect(url + "/echo", ca=unet.conn.Trust(ca, verify))
        await ws.send("over tls")
        answer = await ws.recv()
        await ws.close()
        return {"answer": answer}
    except Exception as e:
        return {"error": type(e).__name__, "message": str(e)}


async def report(name, coro):
    try:
        result = await coro
    except Exception as e:
        result = {"unexpected": repr(e)}
    result["check"] = name
    print(json.dumps(result))


async def main(argv):
    base = argv[1]
    await report("echo", echo(base))
    for path in ("/fragments", "/ping", "/server-close", "/huge", "/masked", "/bad-opcode",
                 "/reserved-control", "/bad-utf8", "/bad-close-code", "/short-close",
                 "/bad-close-reason", "/vanish"):
        await report(path[1:], until_closed(base, path))
    await report("oversize", until_closed(base, "/oversize", max_message=1000))
    await report("refuse", refused(base))
    if len(argv) > 2:
        # TLS checks: a file holding a JSON list of {"check", "url", "ca": a path or null,
        # "verify"}.
        with open(argv[2]) as f:
            checks = json.load(f)
        for spec in checks:
            ca = spec["ca"]
            if ca and spec.get("bytes"):
                with open(ca, "rb") as f:
                    ca = f.read()  # PEM bytes
            await report(spec["check"], tls(spec["url"], ca, spec.get("verify", True)))


asyncio.run(main(sys.argv))
