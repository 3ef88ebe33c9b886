"""python tests/support/wiretap.py LOG COMMAND...: run COMMAND as a stdio MCP server, passing
stdin and stdout through, and append every line each way to LOG as JSON
[direction, line] ("c": client -> server, "s": server -> client). Tests read LOG to
validate every message the server sent (see check_wire in test_bridge.py)."""

import json
import subprocess
import sys
import threading


def main():
    log_path, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    log = open(log_path, "a", buffering=1)
    lock = threading.Lock()

    def record(direction, line):
        with lock:
            log.write(json.dumps([direction, line.decode("utf-8", "replace").rstrip("\n")]) + "\n")

    def client_to_server():
        try:
            for line in sys.stdin.buffer:
                record("c", line)
                child.stdin.write(line)
                child.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass
        finally:
            try:
                child.stdin.close()
            except OSError:
                pass

    threading.Thread(target=client_to_server, daemon=True).start()
    for line in child.stdout:
        record("s", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
