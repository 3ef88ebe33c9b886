"""Decodes hex-encoded JSON texts (one a line, from the file named in argv[1]) with
umcp.jsonin under MicroPython; prints {"ok": value} or {"error": message} for each.
"""
import binascii
import json
import sys

from umcp.jsonin import loads

with open(sys.argv[1]) as f:
    for line in f:
        try:
            print(json.dumps({"ok": loads(binascii.unhexlify(line.strip()))}))
        except ValueError as e:
            print(json.dumps({"error": str(e)}))
