"""Run a client script from this folder under the MicroPython unix port (from pytest).

The scripts print one JSON object per line; this returns them parsed."""

import asyncio
import json
import os
from pathlib import Path

from tools.mpy import micropython_env

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MICROPYTHON = ROOT / ".venv" / "bin" / "micropython"


async def run_script(name, *args, heapsize="512K", timeout=60):
    """Run tests/support/mpyclients/<name> with lib/ on its path -> list of printed JSON objects."""
    env = micropython_env([str(ROOT / "lib")])
    proc = await asyncio.create_subprocess_exec(
        str(MICROPYTHON), "-X", "heapsize=" + heapsize, str(HERE / name), *map(str, args),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0, (out + err).decode()
    return [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
