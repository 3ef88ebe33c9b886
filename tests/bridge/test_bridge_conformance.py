"""The bridge against tools outside this repository, run from node_modules under the Node
22 that the npm package `node@22` brings (package.json):

* the official MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12)
  against the bridge's streamable-HTTP endpoint, for both 2026-07-28 and 2025-11-25. The
  bridge offers no prompts and none of the suite's fixture tools/resources/prompts
  (test_simple_text, test://static-text, ...), so the scenarios that need them cannot pass
  and are not asserted; every other server scenario is (SCENARIOS), and must pass whole.
* the MCP Inspector CLI (@modelcontextprotocol/inspector, --cli) listing and calling
  tools through the bridge over stdio, in its default (legacy) era and in the modern one.
"""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from tests.support.fakedevice import FakeDevice
from tests.bridge.test_bridge import FAKE, TOKEN, free_port, wait_for_line
from tests.support import ROOT
from tools.childprocess import stop_process

pytestmark = pytest.mark.timeout(180)
BIN = os.path.join(ROOT, "node_modules", ".bin")
NODE = os.path.join(BIN, "node")
# Scenarios that need none of the suite's own fixtures (see the module docstring).
SCENARIOS = {
    "2026-07-28": ["server-stateless", "tools-list", "resources-list", "prompts-list",
                   "sep-2164-resource-not-found", "dns-rebinding-protection", "caching",
                   "server-sse-multiple-streams", "http-header-validation",
                   "input-required-result-missing-input-response", "input-required-result-unsupported-methods",
                   "input-required-result-ignore-extra-params", "input-required-result-validate-input"],
    "2025-11-25": ["server-initialize", "server-session-lifecycle", "logging-set-level", "ping", "tools-list",
                   "resources-list", "resources-subscribe", "resources-unsubscribe", "prompts-list",
                   "server-sse-multiple-streams", "server-sse-polling", "dns-rebinding-protection"],
}
# Checks inside those scenarios that probe a fixture tool the suite would plant on its own
# reference server (the suite marks them "Not testable"), or that mutate a fixture list.
# WARNINGs (SHOULDs; here both probe fixture tools of the input-required scenarios) are
# printed, not asserted.
UNTESTABLE = ("Not testable", "Mutated the tool list", "Mutated the prompt list")


def node_env():
    if not os.path.exists(NODE):
        pytest.fail("no Node 22 in node_modules: run `make setup` (npm ci installs node@22)")
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], MCP_INSPECTOR_SECRET_STORE="memory",
               NO_COLOR="1")
    return env


@pytest.fixture(scope="module")
def bridge():
    """A bridge over HTTP with the fake device (tools and resources) behind it."""
    ws_port, http_port = free_port(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.bridge", "--port", str(ws_port), "--token", TOKEN, "--host", "127.0.0.1",
         "--http", str(http_port), "--alias", FAKE + "=lab", "--expect", "1"],
        cwd=ROOT, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fake = FakeDevice("ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port, TOKEN, FAKE).start()
    try:
        wait_for_line(process.stderr, "MCP clients connect to http://127.0.0.1:%d/mcp" % http_port)
        yield {"url": "http://127.0.0.1:%d/mcp" % http_port, "ws_port": ws_port, "fake": fake,
               "process": process}
    finally:
        fake.stop()
        stop_process(process)


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_conformance_suite(bridge, revision, tmp_path):
    out = tmp_path / "out"
    run = subprocess.run([os.path.join(BIN, "conformance"), "server", "--url", bridge["url"],
                          "--requirements", revision, "-o", str(out)],
                         env=node_env(), cwd=ROOT, capture_output=True, text=True, timeout=150)
    results, failures = {}, []
    for checks_file in glob.glob(str(out / "*" / "checks.json")):
        # server-<scenario>-<ISO timestamp>
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", os.path.basename(os.path.dirname(checks_file)))[7:]
        results[name] = json.load(open(checks_file))
    for scenario in SCENARIOS[revision]:
        assert scenario in results, "scenario %s did not run:\n%s" % (scenario, run.stdout[-3000:])
        for check in results[scenario]:
            message = check.get("errorMessage") or ""
            if check["status"] == "FAILURE" and not message.startswith(UNTESTABLE):
                failures.append("%s/%s: %s" % (scenario, check["id"], message))
            elif check["status"] in ("FAILURE", "WARNING"):
                print("conformance %s: %s/%s %s (not asserted): %s"
                      % (revision, scenario, check["id"], check["status"], message))
    passed = sum(c["status"] == "SUCCESS" for s in SCENARIOS[revision] for c in results[s])
    print("conformance %s: %d checks passed in %d scenarios" % (revision, passed, len(SCENARIOS[revision])))
    assert not failures, "\n".join(failures)
    assert bridge["process"].poll() is None


def bridge_args(ws_port):
    return ["-m", "tools.bridge", "--port", str(ws_port), "--token", TOKEN, "--host", "127.0.0.1",
            "--alias", FAKE + "=lab", "--expect", "1"]


def test_inspector_cli_lists_and_calls_tools_over_stdio(tmp_path):
    env = node_env()
    ws_port = free_port()
    fake = FakeDevice("ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port, TOKEN, FAKE).start()
    config = tmp_path / "inspector.json"
    config.write_text(json.dumps({"mcpServers": {"bridge": {
        "command": sys.executable, "args": bridge_args(ws_port), "env": {"PYTHONPATH": ROOT},
        "protocolEra": "modern"}}}))
    try:
        def run(*method_args, config_file=None):
            command = [os.path.join(BIN, "mcp-inspector"), "--cli"]
            command += ["--config", str(config_file), "--server", "bridge"] if config_file \
                else [sys.executable, *bridge_args(ws_port)]
            done = subprocess.run(command + list(method_args) + ["--format", "json"], env=env, cwd=ROOT,
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr
            return json.loads(done.stdout)["result"]

        for config_file in (None, config):  # the Inspector's default era is legacy; then modern
            listing = run("--method", "tools/list", config_file=config_file)
            names = {tool["name"] for tool in listing["tools"]}
            assert {"bridge__list_devices", "lab__audio_speaker_set_volume", "lab__chatty"} <= names
            volume = 11 if config_file is None else 12
            result = run("--method", "tools/call", "--tool-name", "lab__audio_speaker_set_volume",
                         "--tool-arg", "volume=%d" % volume, config_file=config_file)
            assert result["content"][0]["text"] == "true" and fake.volume == volume
            devices = run("--method", "tools/call", "--tool-name", "bridge__list_devices", config_file=config_file)
            assert devices["structuredContent"]["devices"][0]["alias"] == "lab"
    finally:
        fake.stop()


def test_node22_is_the_one_from_node_modules():
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, env=node_env())
    assert out.stdout.startswith("v22."), out.stdout
