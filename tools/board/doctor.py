"""umcp doctor [--port P]: the serial ports, and what a board has and lacks.

One line per finding: what stands between this computer and a working board.

Without a port: the serial ports of this computer. With one: that the port is there
(tools.board.ports), then, asked through mpremote in one raw-REPL run, the board's
MicroPython version against the one deploy needs (deploy.MIN_VERSION), its free heap after
mpremote's soft reset, what is deployed (umcp's version on the board against this copy's,
the packages in /lib or the ROMFS /rom/lib, config.json) and whether its config.json
passes the firmware's own check (read from the board, checked here as `umcp deploy`
checks it: deploy.config_problem). Exit status 0 when all is well, 1 otherwise.
UMCP_MPREMOTE (or --mpremote) names the program.
"""

import argparse
import binascii
import json
import os
import shlex
import sys

from ..paths import LIB, beside_python, hint, module_prog
from . import deploy
from .ports import describe_ports, port_problem, serial_ports

TAG = "umcp-doctor:"
# Runs on the board: each fact on a line of its own, the heap measured first.
SCRIPT = """import gc,sys,os,binascii
gc.collect()
print('%(tag)sheap',gc.mem_free(),gc.mem_alloc())
print('%(tag)smicropython','%%d.%%d.%%d'%%sys.implementation.version[:3])
for d in ('lib','/rom/lib'):
 try:
  print('%(tag)s'+d,' '.join(os.listdir(d)))
 except OSError:
  pass
try:
 import umcp
 print('%(tag)sumcp',umcp.__version__)
except Exception as e:
 print('%(tag)sumcp-missing',repr(e))
try:
 f=open('config.json','rb')
 print('%(tag)sconfig',binascii.hexlify(f.read()).decode())
 f.close()
except OSError:
 pass
""" % {"tag": TAG}


def parse_args(argv=None, prog="python3 -m tools.board.doctor"):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--port", help="the board's serial port, e.g. /dev/ttyUSB0, COM3, auto, "
                        "or an mpremote shortcut (u0, a0, c0); without it, the serial ports are listed")
    parser.add_argument("--mpremote", default=os.environ.get("UMCP_MPREMOTE") or beside_python("mpremote"))
    return parser.parse_args(argv)


def firmware_packages():
    """The packages of lib/ that deploy puts into the board's /lib (boards among them)."""
    return sorted(name for name in os.listdir(LIB)
                  if os.path.isfile(os.path.join(LIB, name, "__init__.py")))


def this_version():
    """umcp's release of this copy (its lib/umcp, on sys.path through deploy)."""
    from umcp import __version__

    return __version__


def facts(output):
    """{fact: the rest of its line} from the board's answer to SCRIPT."""
    found = {}
    for line in output.splitlines():
        if line.startswith(TAG):
            name, _, value = line[len(TAG):].partition(" ")
            found[name] = value.strip()
    return found


def findings(found, port):
    """(all well, [lines]) for the facts a board gave."""
    ok = True
    lines = []

    def problem(text):
        nonlocal ok
        ok = False
        lines.append("problem: " + text)

    deploy_hint = hint("make deploy PORT=%s BOARD=<board>", "umcp deploy --port %s --board <board>") % port
    version = found.get("micropython", "")
    wanted = "%d.%d" % deploy.MIN_VERSION[:2]
    try:
        numbers = tuple(int(part) for part in version.split("."))
    except ValueError:
        numbers = ()
    if numbers >= deploy.MIN_VERSION:
        lines.append("ok: MicroPython %s (%s or newer needed)" % (version, wanted))
    else:
        problem("MicroPython %s is too old: flash %s or newer (%s)"
                % (version, wanted, hint("make flash", "umcp flash")))
    free, _, used = found.get("heap", "").partition(" ")
    if free.isdigit() and used.isdigit():
        lines.append("ok: heap %d KB free of %d KB after a soft reset"
                     % (int(free) // 1024, (int(free) + int(used)) // 1024))
    mine = this_version()
    if "umcp" in found:
        if found["umcp"] == mine:
            lines.append("ok: umcp %s deployed, the same as this copy" % mine)
        else:
            problem("the board has umcp %s, this copy is %s: %s" % (found["umcp"], mine, deploy_hint))
    else:
        problem("umcp is not deployed on the board: %s" % deploy_hint)
    have = set(found.get("lib", "").split()) | set(found.get("/rom/lib", "").split())
    missing = [name for name in firmware_packages() if name not in have]
    if missing:
        problem("missing in the board's /lib: %s (%s)" % (", ".join(missing), deploy_hint))
    else:
        lines.append("ok: every package of the firmware is in /lib%s" % (" (ROMFS)" if "/rom/lib" in found else ""))
    if "config" not in found:
        problem("no config.json on the board: %s copies it" % deploy_hint)
    else:
        said = config_problem(found["config"])
        if said:
            problem("the board's config.json" + said)
        else:
            lines.append("ok: the board's config.json passes the firmware's check")
    return ok, lines


def config_problem(hexed):
    """What is wrong with the board's config.json (hex of its bytes), as the end of a line
    after its name, or None."""
    try:
        config = json.loads(binascii.unhexlify(hexed).decode("utf-8"))
    except ValueError as error:  # (UnicodeDecodeError, binascii.Error are ValueErrors)
        return " is not valid JSON: %s" % error
    problem = deploy.config_problem(config)
    if problem:
        return problem
    if not isinstance(config.get("board"), str):
        return ' needs "board", the name of a board module (umcp deploy writes it)'
    return None


def doctor(args):
    """Print the findings; True when all is well."""
    if not args.port:
        ports = serial_ports()
        if not ports:
            print("problem: no serial ports here: is the board plugged in (and its USB driver installed)?")
            return False
        for device, what in ports:
            print("port: %s" % describe_ports([(device, what)]))
        print("doctor: %s --port PORT checks the board on one of them"
              % hint("python3 -m tools.board.doctor", "umcp doctor"))
        return True
    problem = port_problem(args.port)
    if problem:
        print("problem: " + problem)
        return False
    command = shlex.split(args.mpremote) + deploy.connect_args(args.port) + ["exec", SCRIPT]
    try:
        output = deploy.run(command, "asking the board at %s" % args.port, capture=True)
    except deploy.DeployError as error:
        print("problem: %s: is MicroPython on it, and no other program using the port?" % error)
        return False
    found = facts(output)
    if "micropython" not in found:
        print("problem: the board at %s did not answer; is MicroPython on it? (%s)"
              % (args.port, hint("make flash", "umcp flash")))
        return False
    ok, lines = findings(found, args.port)
    for line in lines:
        print(line)
    return ok


def main(argv=None, prog=module_prog("board.doctor")):
    return 0 if doctor(parse_args(argv, prog)) else 1


if __name__ == "__main__":
    sys.exit(main())
