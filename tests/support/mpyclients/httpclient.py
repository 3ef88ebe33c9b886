"""Drives lib/unet/http.py under MicroPython against the test server of
tests/net/test_unet_http.py: micropython httpclient.py http://127.0.0.1:PORT
Prints one JSON object per check; run with a small heap so a copy of the upload fails.
"""
import asyncio
import binascii
import hashlib
import json
import sys

import unet.http

JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4 + b"\xff\xd9"
BIG = bytearray(600 * 1024)  # more than half the heap: a copy of it cannot fit


async def download(url):
    digest = hashlib.sha256()
    size = 0
    stream = unet.http.get_stream(url)
    async for chunk in stream:
        digest.update(chunk)
        size += len(chunk)
    return {"size": size, "length": stream.length, "sha256": binascii.hexlify(digest.digest()).decode()}


async def report(name, coro):
    try:
        result = await coro
    except Exception as e:
        result = {"error": type(e).__name__, "status": getattr(e, "status", None)}
    result["check"] = name
    print(json.dumps(result))


async def post(url, fields, file, headers=None):
    status, body = await unet.http.post_multipart(url, fields, file, headers)
    return {"status": status, "body": body}


async def main(base):
    for i in range(len(BIG)):
        BIG[i] = i * 7 & 0xFF
    headers = {"Authorization": "Bearer vision-token", "Device-Id": "aa:bb:cc:dd:ee:ff"}
    await report("vision", post(base + "/vision", [("question", "What is this?")],
                                ("file", "photo.jpg", "image/jpeg", JPEG), headers))
    await report("sink", post(base + "/sink", [], ("file", "big.bin", "application/octet-stream", BIG)))
    for path in ("/file", "/chunked", "/eof", "/redirect2", "/one-segment", "/endless-chunk-size",
                 "/missing", "/loop"):
        await report(path[1:], download(base + path))


asyncio.run(main(sys.argv[1]))
