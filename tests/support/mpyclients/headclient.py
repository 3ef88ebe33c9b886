"""Drives lib/unet/ws.py under MicroPython against the raw server of tests/net/test_unet_ws.py
(hostile and odd response heads): micropython headclient.py ws://127.0.0.1:PORT
Prints one JSON object per check; run with a small heap that an unbounded head would exhaust.
"""
import asyncio
import json
import sys

import unet.ws


async def upgrade(url):
    """Connect, then read until the server closes -> what happened, as a dict."""
    try:
        ws = await unet.ws.connect(url)
    except Exception as e:  # MemoryError included: the check reports it rather than dying
        return {"error": type(e).__name__, "message": str(e)}
    messages = []
    try:
        while True:
            messages.append(await ws.recv())
    except unet.ws.ConnectionClosed as e:
        return {"messages": messages, "code": e.code}


async def main(base):
    for path in ("/endless-line", "/endless-headers", "/frame-after-101"):
        result = await upgrade(base + path)
        result["check"] = path[1:]
        print(json.dumps(result))


asyncio.run(main(sys.argv[1]))
