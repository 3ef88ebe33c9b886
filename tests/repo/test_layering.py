"""The import contract (.importlinter, checked by `make test-contract`): it holds on the
tree, and a wrong import in a copy of the tree breaks the rule it offends, by name, with
the offending line."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.support import ROOT

LINT = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def lint(root):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(root, "lib"), os.path.join(root, "firmware"), root]))
    return subprocess.run([LINT, "--config", os.path.join(root, ".importlinter"), "--no-cache"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path):
    """A copy of the code the contract covers, to break on purpose."""
    root = tmp_path / "repo"
    for name in ("lib", "firmware", "tools"):
        shutil.copytree(os.path.join(ROOT, name), root / name,
                        ignore=shutil.ignore_patterns("__pycache__", "node_modules", "static"))
    shutil.copy(os.path.join(ROOT, ".importlinter"), root)
    return root


def plant(root, path, line):
    target = root / path
    target.write_text(line + "\n" + target.read_text())


def test_the_tree_keeps_every_contract():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize("path, line, rule, shown", [
    ("lib/umcp/schema.py", "from unet import http", "The MCP core (umcp) imports nothing of ours",
     "umcp.schema -> unet.http"),
    ("lib/unet/conn.py", "import xiaozhi.link", "(a lower layer never imports a higher one)",
     "unet.conn -> xiaozhi.link"),
    ("lib/xiaozhi/link.py", "from devsvc import settings",
     "The xiaozhi session, the plain MCP transports and theirs import the core and the network clients only",
     "xiaozhi.link -> devsvc.settings"),
    ("lib/boards/host.py", "from unet import conn", "Boards import drivers and the core only",
     "boards.host -> unet.conn"),
    ("lib/umcpfw/app.py", "from tools.sim import board", "Device code never imports the host tools",
     "umcpfw.app -> tools.sim.board"),
    # The circles issue 16 broke stay broken.
    ("lib/umcp/resource.py", "from umcp.server import McpServer", "server > registry | requests > resource | modern | handshake | paging | refusal > catalogue > notices | tool | result > listing | image | chunks > rpc | toolcheck | jsonpeek > schema > args | jsonin | names > jsonfix > compat > propcheck (no circles)",
     "umcp.resource -> umcp.server"),
    ("lib/umcp/rpc.py", "from umcp.tool import McpTool", "server > registry | requests > resource | modern | handshake | paging | refusal > catalogue > notices | tool | result > listing | image | chunks > rpc | toolcheck | jsonpeek > schema > args | jsonin | names > jsonfix > compat > propcheck (no circles)",
     "umcp.rpc -> umcp.tool"),
    ("lib/devsvc/espimage.py", "from devsvc.upgrade import UpgradeError", "otacheck > espimage | settings > settingsload (no circles)",
     "devsvc.espimage -> devsvc.upgrade"),
    ("lib/devsvc/settings.py", "from devsvc import otacheck", "otacheck > espimage | settings > settingsload (no circles)",
     "devsvc.settings -> devsvc.otacheck"),
    ("lib/devsvc/upgrade.py", "from devsvc import otacheck", "otacheck > espimage | settings > settingsload (no circles)",
     "devsvc.upgrade -> devsvc.otacheck"),
    ("lib/devsvc/settingsload.py", "from devsvc import settings", "otacheck > espimage | settings > settingsload (no circles)",
     "devsvc.settingsload -> devsvc.settings"),
])
def test_a_wrong_import_breaks_the_rule_it_offends(tree, path, line, rule, shown):
    plant(tree, path, line)
    done = lint(str(tree))
    out = " ".join((done.stdout + done.stderr).split())  # the report wraps long names
    assert done.returncode != 0
    assert rule + " BROKEN" in out
    assert shown in out
