// node tools/mpy/runwasm.mjs [--tests DIR]
// node tools/mpy/runwasm.mjs --script FILE.py
//
// Runs the portable test cases (tests/portable/test_*.py) inside MicroPython's
// WebAssembly build (npm @micropython/micropython-webassembly-pyscript) with
// tests/portable/runner.py. The device trees are copied into its in-memory
// filesystem under /umcp and put on sys.path in the simulator's order (the same
// list as SEARCH_PATH in tools/mpy/__init__.py). Prints each failure with its
// traceback and `N passed, N failed`; exits 1 if a test failed or nothing ran.
// With --script it instead awaits FILE's `async def main()` (make bench), and
// exits 1 only if that raised.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const TREES = ["lib", "firmware", "tools/sim/hwsim", "tests/portable"];
const MOUNT = "/umcp";
const SEARCH_PATH = ["tests/portable", "firmware", "lib", "tools/sim/hwsim"].map((p) => `${MOUNT}/${p}`);

const { values: options } = parseArgs({
  options: {
    tests: { type: "string" },
    script: { type: "string" },
  },
});

function copyTree(FS, hostDir, fsDir) {
  FS.mkdirTree(fsDir);
  for (const entry of fs.readdirSync(hostDir, { withFileTypes: true })) {
    const hostPath = path.join(hostDir, entry.name);
    if (entry.isDirectory() && entry.name !== "__pycache__") {
      copyTree(FS, hostPath, `${fsDir}/${entry.name}`);
    } else if (entry.isFile()) {
      FS.writeFile(`${fsDir}/${entry.name}`, fs.readFileSync(hostPath));
    }
  }
}

async function loadDevice() {
  // No heapsize: this build grows its heap on demand, so a limit would not hold.
  const mp = await loadMicroPython({
    stdout: (line) => process.stdout.write(line + "\n"),
    stderr: (line) => process.stderr.write(line + "\n"),
  });
  for (const tree of TREES) {
    const hostDir = path.join(ROOT, tree);
    if (fs.existsSync(hostDir)) copyTree(mp.FS, hostDir, `${MOUNT}/${tree}`);
  }
  mp.runPython(`import sys\nsys.path[:0] = ${JSON.stringify(SEARCH_PATH)}`);
  return mp;
}

// asyncio runs on Node's event loop here: there is no asyncio.run, and wait_for
// only works inside a task, so each run is one task awaited from the top level.

async function runTests(mp, hostTestDir) {
  let testDir = `${MOUNT}/tests/portable`;
  if (hostTestDir !== undefined) {
    testDir = "/tests-under-run";
    copyTree(mp.FS, path.resolve(hostTestDir), testDir);
  }
  await mp.runPythonAsync(
    `import asyncio, runner\n` +
    `_tally = await asyncio.create_task(runner.run_dir(${JSON.stringify(testDir)}))\n` +
    `_ok = _tally.ok()`,
  );
  return mp.globals.get("_ok") ? 0 : 1;
}

async function runScript(mp, hostFile) {
  const name = path.basename(hostFile, ".py");
  mp.FS.mkdirTree(`${MOUNT}/script`);
  mp.FS.writeFile(`${MOUNT}/script/${name}.py`, fs.readFileSync(hostFile));
  await mp.runPythonAsync(
    `import asyncio, sys\nsys.path.insert(0, "${MOUNT}/script")\n` +
    `import ${name}\nawait asyncio.create_task(${name}.main())`,
  );
  return 0;
}

let code = 1;
try {
  const mp = await loadDevice();
  code = options.script !== undefined ? await runScript(mp, options.script) : await runTests(mp, options.tests);
} catch (e) {
  // The harness itself broke, or the script raised (a PythonError carries
  // MicroPython's traceback): the package's own runner would still exit 0.
  console.log(`runwasm: ${e.constructor.name}: ${e.message}`);
}
// Exit now: tasks a test left behind may hold timers that would keep Node alive.
process.exit(code);
