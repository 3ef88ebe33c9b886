"""python3 -m tools.sim: run the unchanged firmware on a simulated board (the host board
unless --board names another) against a backend of your choice, until Ctrl-C. Installed, it
is `python -m umcp_host.sim`; a maker's way to try a board is `umcp sim` (tools.sim.demo:
the local backend with it, one whole session).

The board is a tools.sim.board.SimBoard: the firmware in a child process (CPython, or a
MicroPython unix-port binary with --micropython; with --mpy the .mpy files `make deploy`
copies to a board), whose folder is the state directory: config.json, the device's
settings and the simulated flash live there and survive restarts. The simulated
machine.reset() ends the child and the board boots again, as a board would. Standard
library only.
"""

import argparse
import json
import os
import signal
import sys

from ..paths import PACKAGE, hint
from .board import SimBoard, check_runtime_options, config_for, has_frozen_hardware


def parse_args(argv=None):
    try_it = hint("make sim, or python3 -m tools.sim.demo --board NAME --config FILE",
                  "umcp sim --board NAME --config FILE")
    p = argparse.ArgumentParser(prog="python3 -m %s.sim" % PACKAGE, description="Run the unchanged firmware on a simulated board (the host board unless "
                                            "--board names another) against a backend of your choice, until Ctrl-C.",
                                epilog="One simulated board against a backend you run. To try a board with "
                                       "your config.json, the local backend and a whole session: %s." % try_it)
    p.add_argument("--url", help="xiaozhi WebSocket URL (ws:// or wss://)")
    p.add_argument("--token", help="access token sent as Authorization: Bearer")
    p.add_argument("--ota-url", help="the OTA server to ask where to connect (then --url and "
                   "--token are not needed: config.json holds only Wi-Fi and this URL)")
    p.add_argument("--mcp-endpoint", action="append", metavar="URL",
                   help="an MCP endpoint of a xiaozhi agent to serve the tools at, ws:// or wss:// with its "
                   "?token=...; repeat it for several agents; with or without --url")
    p.add_argument("--device-id", help="Device-Id to send instead of the simulated MAC")
    p.add_argument("--state-dir", help="where config.json and settings live (default: a temporary "
                   "dir, removed on exit)")
    p.add_argument("--max-payload", type=int, help="tools/list frame limit in bytes")
    p.add_argument("--micropython", metavar="BIN", help="run under this MicroPython unix port")
    p.add_argument("--heapsize", help="MicroPython heap size, e.g. 512k (with --micropython)")
    p.add_argument("--mpy", action="store_true",
                   help="run the .mpy files deploy copies to a board (with --micropython)")
    p.add_argument("--frozen-hardware", action="store_true",
                   help="with --mpy: take the simulated hardware frozen in the --micropython binary "
                   "(a unix port built with tools/bench/unixhwsimmanifest.py) instead of compiling "
                   "it beside the firmware: the heap then holds what a board's does")
    p.add_argument("--board", default="host", help="board module (default: host)")
    p.add_argument("--ca", help="CA certificate file for wss:// (PEM)")
    p.add_argument("--mcp-http", type=int, metavar="PORT",
                   help="also serve MCP over HTTP at http://127.0.0.1:PORT/mcp (config.json's "
                   "mcp_http, bound to loopback here)")
    p.add_argument("--mcp-http-token", metavar="TOKEN",
                   help="the Bearer token the HTTP endpoint wants (default: a random one, printed)")
    p.add_argument("--extra-config", default="{}", metavar="JSON",
                   help="JSON object merged into config.json (e.g. reconnect timings; \"parts\" "
                   "with --board generic)")
    p.add_argument("--app", metavar="PATH", help="a maker's module (a .py file, or a package's "
                   "folder): copied into the state dir as app.py (app/), as deploy --app does")
    args = p.parse_args(argv)
    if args.heapsize and not args.micropython:
        p.error("--heapsize needs --micropython")
    if args.frozen_hardware and not args.mpy:
        p.error("--frozen-hardware needs --mpy")
    check_runtime_options(p, args)
    if args.micropython:
        if args.frozen_hardware and not has_frozen_hardware(args.micropython):
            p.error("--frozen-hardware: %s has no simulated hardware frozen in (it needs a unix port with "
                    "what tools/bench/unixhwsimmanifest.py lists frozen in: docs/benchmarks.md)" % args.micropython)
    if args.app and not (os.path.isfile(args.app) and args.app.endswith(".py")
                         or os.path.isfile(os.path.join(args.app, "__init__.py"))):
        p.error("--app: %s is neither a .py file nor a package's folder" % args.app)
    try:
        args.extra_config = json.loads(args.extra_config)
    except ValueError as e:
        p.error("--extra-config: %s" % e)
    if not isinstance(args.extra_config, dict):
        p.error("--extra-config must be a JSON object")
    if not (args.ota_url or (args.url and args.token) or args.mcp_endpoint or args.mcp_http
            or "mcp_http" in args.extra_config):
        p.error("give --url and --token, or --ota-url, or --mcp-endpoint, or --mcp-http")
    if args.mcp_http_token and not args.mcp_http:
        p.error("--mcp-http-token needs --mcp-http")
    if args.mcp_http and not args.mcp_http_token:
        import secrets

        args.mcp_http_token = secrets.token_hex(8)
    return args


def device_config(args):
    """What a user would put in config.json before deploying, for the board."""
    config = config_for(args.board, args.url, args.token, ota_url=args.ota_url, device_id=args.device_id,
                        max_payload=args.max_payload)
    if args.mcp_endpoint:
        endpoints = args.mcp_endpoint
        config["mcp_endpoint"] = endpoints[0] if len(endpoints) == 1 else endpoints
    if args.ca:
        with open(args.ca) as f:
            config["ca"] = f.read()
    if args.mcp_http:
        config["mcp_http"] = {"port": args.mcp_http, "token": args.mcp_http_token, "bind": "127.0.0.1"}
    config.update(args.extra_config)
    return config


def runtime(args):
    """The SimBoard runtime the options name."""
    if not args.micropython:
        return "cpython"
    if not args.mpy:
        return "micropython"
    return "mpy-frozen-hardware" if args.frozen_hardware else "mpy"


def log(msg):
    sys.stderr.write("[sim] %s\n" % msg)
    sys.stderr.flush()


def main(argv=None):
    args = parse_args(argv)
    config = device_config(args)
    board = SimBoard(config, runtime(args), args.micropython, args.heapsize, root=args.state_dir,
                     app=args.app, say=log)

    asked = []

    def stop(signum, frame):
        # Only noted: the handler may run while the board holds its lock (start, a reboot).
        asked.append(signum)

    # SIGHUP too: a closed terminal must stop the board as Ctrl-C does (it runs in a
    # session of its own, which the hang-up does not reach: it would run on, orphaned).
    # SIGBREAK: Windows' Ctrl-Break, how a parent stops this process there.
    for signum in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None),
                   getattr(signal, "SIGBREAK", None)):
        if signum is not None:
            signal.signal(signum, stop)
    if args.mcp_http:
        log("MCP endpoint http://127.0.0.1:%d/mcp, header Authorization: Bearer %s"
            % (args.mcp_http, args.mcp_http_token))
    try:
        board.start()  # says "state dir ..." once config.json is written
    except Exception as e:  # deploy.DeployError: the .mpy files could not be staged
        board.close()
        sys.exit("sim: cannot stage the .mpy files: %s" % e)
    try:
        while board.wait(0.2) is None and not asked:
            pass
    finally:
        board.close()  # Ctrl-C to the firmware, killed after a grace; one interrupt only
    return board.returncode


if __name__ == "__main__":
    sys.exit(main())
