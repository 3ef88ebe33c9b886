"""The tool catalogue of a board and its config.json: make deploy copies it to the board
beside config.json and the simulator writes it with config.json (tools.sim.board), so that
the board keeps no tool objects for the common, board and parts tools. Its format:
docs/boards.md, "The tool catalogue (tools.cat)"; why: docs/DESIGN.md, "Tools as data".

It is written from the firmware itself: tools/sim/device.py --tools starts the firmware up
to its tools on CPython, the simulated hardware standing in for the board's, and hands over
each tool's entry texts, parameter table and callback target; this module lays them out.
The board checks at start that the catalogue was written for its firmware version, board,
parts and hardware, and builds its tools at run time otherwise (umcpfw.boot).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from ..paths import HWSIM, ROOT

CATALOGUE_FILE = "tools.cat"  # on the board, beside config.json (umcpfw.boot)
FORMAT = 2  # umcp.catalogue.FORMAT
USER_ONLY, STRUCTURED, WITH_USER_TOOLS = 1, 2, 4  # umcp.catalogue's flags and page forms
# A page is cut for this many bytes of envelope and id (a xiaozhi session's envelope is
# about 70): it is the board's answer wherever the real ones leave the same cut.
PAGE_RESERVE = 80
DEVICE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim", "device.py")
_HEAD = '{"name":'
START_TIMEOUT_S = 120  # the firmware's start up to its tools takes about half a second


class CatalogueError(Exception):
    """The firmware could not start up to its tools for this config.json (its words)."""


def tool_facts(config, root=ROOT):
    """(what the catalogue is for, a page's texts, each tool's facts) from the firmware in
    `root` (its lib/
    and firmware/) started with `config` (config.json's content) on the simulated hardware;
    CatalogueError with the firmware's last words when it cannot start."""
    with tempfile.TemporaryDirectory(prefix="umcp-catalogue-") as folder:
        with open(os.path.join(folder, "config.json"), "w") as sink:
            json.dump(config, sink)
        facts = os.path.join(folder, "tools.jsonl")
        paths = [os.path.join(root, "firmware"), os.path.join(root, "lib"), HWSIM]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths),
                   PYTHONDONTWRITEBYTECODE="1")
        try:
            done = subprocess.run([sys.executable, "-S", DEVICE, "--tools", facts], cwd=folder, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise CatalogueError("the firmware did not reach its tools within %d s" % START_TIMEOUT_S)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise CatalogueError("the firmware did not start up to its tools: %s"
                                 % (said[-1] if said else "exit status %d" % done.returncode))
        with open(facts) as f:
            lines = [json.loads(line) for line in f]
    return lines[0], lines[1], lines[2:]


def layout(about, listing, tools):
    """The catalogue's bytes: the header (FORMAT, `about`, the counts of tool and page
    records, the record width, the texts' bytes), the fixed-width records, the texts
    (umcp.catalogue). `listing`: a tools/list page's texts and the page limit."""
    records, texts, offset = [], [], 0
    for tool in tools:
        name, plain, full = tool["name"], tool["plain"], tool["full"]
        head = _HEAD + json.dumps(name)
        # The device writes head + rest [+ extra] + "}": both entries must be that.
        if not (plain.startswith(head) and plain.endswith("}") and full.startswith(plain[:-1])
                and full.endswith("}")):
            raise CatalogueError("tool %s: its entries are not of the catalogue's form" % name)
        rest = plain[len(head):-1].encode()
        extra = full[len(plain) - 1:-1].encode()
        call = _compact([tool["target"], tool["rows"]]).encode()
        records.append([name, tool["flags"], offset, len(rest), len(extra), len(call)])
        texts.extend((rest, extra, call))
        offset += len(rest) + len(extra) + len(call)
    pages = []
    for form in (0, STRUCTURED, WITH_USER_TOOLS, STRUCTURED | WITH_USER_TOOLS):
        for cursor, text, longer in _pages(listing, tools, form):
            # CPython's JSON is ASCII; the board sends a page in cuts of 256 bytes, which a
            # transport may decode one at a time (umcp.compat.join_pieces).
            if not text.isascii():
                raise CatalogueError("a tools/list page is not ASCII: %r" % text[:80])
            pages.append([cursor, form, offset, len(text), longer])
            texts.append(text)
            offset += len(text)
    lines = [_compact(record) for record in records + pages]
    width = max([len(line) for line in lines], default=0) + 1
    header = dict({"umcp-tools": FORMAT}, **about)
    header.update(count=len(records), pages=len(pages), width=width, texts=offset)
    out = [(_compact(header) + "\n").encode()]
    out.extend((line.ljust(width - 1) + "\n").encode() for line in lines)
    out.extend(texts)
    return b"".join(out)


def _pages(listing, tools, form):
    """(cursor, text, longer) of each tools/list page in `form` cut as umcp.paging cuts it
    for a frame of the page limit with PAGE_RESERVE bytes of envelope and id: `text` is the
    page after its id, `longer` the bytes it would take with one more entry (0: the last
    page). They stop before an entry too big for a page (umcp.paging answers that one)."""
    listed = [tool for tool in tools if form & WITH_USER_TOOLS or not tool["flags"] & USER_ONLY]
    entries = [(tool["full"] if form & STRUCTURED else tool["plain"]).encode() for tool in listed]
    names = [tool["name"] for tool in listed]

    def text(start, end):
        tail = (listing["end"] if end == len(listed)
                else listing["more_head"] + names[end] + listing["more_end"])
        return listing["open"].encode() + b",".join(entries[start:end]) + tail.encode()

    room = listing["page_limit"] - len(listing["frame_open"]) - PAGE_RESERVE
    start = 0
    while True:
        end = start + 1 if start < len(listed) else start
        if len(text(start, end)) > room and end > start:
            return  # too big for a page: umcp.paging answers so
        while end < len(listed) and len(text(start, end + 1)) <= room:
            end += 1
        longer = len(text(start, end + 1)) if end < len(listed) else 0
        yield names[start] if start else "", text(start, end), longer
        if end == len(listed):
            return
        start = end


def _compact(value):
    return json.dumps(value, separators=(",", ":"))


_written = {}  # (board, parts) -> the catalogue's bytes, for this process's boards


def catalogue_for(config, root=ROOT):
    """The catalogue's bytes for `config` and the firmware in `root`: for what it depends on
    (the board and its parts), made once per process."""
    key = (root, config.get("board"), _compact(config.get("parts")))
    if key not in _written:
        _written[key] = layout(*tool_facts(config, root))
    return _written[key]


def write(config, path, root=ROOT):
    """The catalogue for `config` written to `path` (replacing what was there)."""
    data = catalogue_for(config, root)
    with open(path + ".new", "wb") as sink:
        sink.write(data)
    os.replace(path + ".new", path)


def main(argv=None, prog="python3 -m tools.board.catalogue"):
    """Write the catalogue for a config.json: for a board whose firmware came another way
    than make deploy (mpremote mip install), then `mpremote cp tools.cat :`."""
    parser = argparse.ArgumentParser(prog=prog, description=main.__doc__.split(":")[0])
    parser.add_argument("--config", default="config.json", help="the board's config.json (default: %(default)s)")
    parser.add_argument("--out", default=CATALOGUE_FILE, help="the file to write (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        with open(args.config) as source:
            config = json.load(source)
        write(config, args.out)
    except (OSError, ValueError, CatalogueError) as error:
        sys.stderr.write("catalogue: %s\n" % error)
        return 1
    print("catalogue: %s written for board %s; copy it beside config.json: mpremote cp %s :"
          % (args.out, config.get("board"), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
