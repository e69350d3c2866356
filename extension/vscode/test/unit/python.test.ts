import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  candidateInterpreters,
  compareVersions,
  expandSetting,
  isSupportedPython,
  pipCanTarget,
  probePython,
  runProcess,
  serverCommand,
  type PythonInfo,
} from "../../src/common/python";

const PYTHON = process.platform === "win32" ? "python" : "python3";

describe("interpreter candidates", () => {
  it("the Python extension's selection first, then python3 and python on PATH", async () => {
    assert.deepEqual(await candidateInterpreters(async () => "/envs/py311/bin/python", "linux"), [
      { command: "/envs/py311/bin/python", source: "python-extension" },
      { command: "python3", source: "path" },
      { command: "python", source: "path" },
    ]);
  });

  it("skips a Python extension that is absent, has no selection or is broken", async () => {
    const paths = [
      { command: "python3", source: "path" },
      { command: "python", source: "path" },
    ];
    assert.deepEqual(await candidateInterpreters(async () => undefined, "linux"), paths);
    const broken = await candidateInterpreters(async () => {
      throw new Error("python extension failed to activate");
    }, "linux");
    assert.deepEqual(broken, paths);
    assert.deepEqual(await candidateInterpreters(async () => "python3", "linux"), [
      { command: "python3", source: "python-extension" },
      { command: "python", source: "path" },
    ]);
  });

  it("expands ~, ${userHome}, ${workspaceFolder} and relative paths in the setting", () => {
    assert.equal(expandSetting("~/py/bin/python"), path.join(os.homedir(), "py/bin/python"));
    assert.equal(expandSetting("${userHome}/x"), `${os.homedir()}/x`);
    assert.equal(expandSetting("${workspaceFolder}/.venv/bin/python", "/ws"), "/ws/.venv/bin/python");
    assert.equal(expandSetting("./.venv/bin/python", "/ws"), "/ws/.venv/bin/python");
    assert.equal(expandSetting("python3.12", "/ws"), "python3.12");
  });
});

describe("what an interpreter can do", () => {
  it("probes a real Python: its version, venv, pip, and readkeeper when it has it", async () => {
    const probe = await probePython(PYTHON);
    assert.ok(probe.ok, JSON.stringify(probe));
    assert.equal(probe.info.version[0], 3);
    assert.equal(typeof probe.info.venv, "boolean");
    assert.ok(probe.info.readkeeper === undefined || /^\d/.test(probe.info.readkeeper));
  });

  it("a missing interpreter, or something that is not Python 3, is said plainly", async () => {
    const missing = await probePython("/nonexistent/bin/python3");
    assert.ok(!missing.ok);
    assert.match(missing.detail, /could not run it \(ENOENT/);
    const notPython = await probePython(process.execPath); // node: `-c` is not Python
    assert.ok(!notPython.ok);
    assert.match(notPython.detail, /not a Python 3 that readkeeper can use/);
  });

  it("runs processes with their output line by line, and stops them on abort", async () => {
    const lines: string[] = [];
    const result = await runProcess(process.execPath, ["-e", "console.log('a\\nb'); console.error('c')"], {
      timeoutMs: 10000,
      onLine: (l) => lines.push(l),
    });
    assert.equal(result.code, 0);
    assert.deepEqual(lines.sort(), ["a", "b", "c"]);
    const abort = new AbortController();
    const pending = runProcess(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { timeoutMs: 60000, signal: abort.signal });
    abort.abort();
    assert.equal((await pending).cancelled, true);
  });

  it("never runs a program from the folder it runs in through an empty or relative PATH entry", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "rk-path-"));
    try {
      const planted = path.join(folder, PYTHON);
      fs.writeFileSync(planted, "#!/bin/sh\necho planted\n", { mode: 0o755 });
      for (const entry of ["", ".", "./"]) {
        const env = { ...process.env, PATH: [entry, process.env.PATH ?? ""].join(path.delimiter) };
        const result = await runProcess(PYTHON, ["-c", "print('real')"], { timeoutMs: 30000, cwd: folder, env });
        assert.equal(result.stdout.trim(), "real", `PATH entry ${JSON.stringify(entry)}`);
      }
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("the server's command never imports the folder it runs in (the workspace's own `readkeeper` or `json`)", async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "rk-cwd-"));
    try {
      fs.mkdirSync(path.join(folder, "readkeeper"));
      fs.writeFileSync(path.join(folder, "readkeeper", "__init__.py"), "");
      fs.writeFileSync(path.join(folder, "readkeeper", "__main__.py"), "print('planted readkeeper')\n");
      fs.writeFileSync(path.join(folder, "json.py"), "print('planted json')\n");
      const { command, args } = serverCommand(PYTHON);
      const server = await runProcess(command, args, { timeoutMs: 30000, cwd: folder });
      assert.doesNotMatch(server.stdout + server.stderr, /planted/);
      // Any Python the extension runs (probes, pip) leaves the folder off sys.path too.
      const other = await runProcess(PYTHON, ["-c", "import json"], { timeoutMs: 30000, cwd: folder });
      assert.doesNotMatch(other.stdout + other.stderr, /planted/);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it("needs Python 3.11+, and pip 22.3+ to install into another environment", () => {
    const info = (version: [number, number, number], pip?: string): PythonInfo => ({
      executable: "x",
      version,
      venv: true,
      ensurepip: true,
      pip,
    });
    assert.equal(isSupportedPython(info([3, 10, 12])), false);
    assert.equal(isSupportedPython(info([3, 11, 0])), true);
    assert.equal(isSupportedPython(info([4, 0, 0])), true);
    assert.equal(pipCanTarget(info([3, 12, 0], "22.2.2")), false);
    assert.equal(pipCanTarget(info([3, 12, 0], "24.0")), true);
    assert.equal(pipCanTarget(info([3, 12, 0])), false);
  });

  it("compares versions as pip does in the common cases", () => {
    assert.equal(compareVersions("0.1.0", "0.1.0"), 0);
    assert.equal(compareVersions("0.1", "0.1.0"), 0);
    assert.equal(compareVersions("0.10.0", "0.9.9"), 1);
    assert.equal(compareVersions("0.2.0rc1", "0.2.0"), -1);
    assert.equal(compareVersions("0.2.0.dev3", "0.2.0rc1"), -1);
    assert.equal(compareVersions("0.2.0.post1", "0.2.0"), 1);
    assert.equal(compareVersions("1.0.0", "0.99"), 1);
  });
});
