// The private environment and the choice of the server's Python, with real processes:
// real `python3 -m venv`, real pip installing small stand-in readkeeper wheels (built
// here, no dependencies, so no network), a closed index for the offline case.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type ResolveInputs, resolveServerPython } from "../../src/common/environment";
import { acquireLock } from "../../src/common/lock";
import {
  type BundledWheel,
  envLayout,
  type EnvMarker,
  findBundledWheel,
  planEnvironment,
  readMarker,
} from "../../src/common/privateEnv";
import { type RunResult, runProcess, type Runner } from "../../src/common/python";
import type { WithProgress } from "../../src/common/resolution";

const PYTHON = process.platform === "win32" ? "python" : "python3";

/** A PATH whose python3 is the real interpreter behind this machine's `python3` (not a
 * version manager's shim, which costs a second a call on a busy machine): the processes
 * are real, they only start faster. */
const FAST_PATH = [
  path.dirname(execFileSync(PYTHON, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim()),
  process.env.PATH ?? "",
].join(path.delimiter);
const fastRun: Runner = (command, args, options) =>
  runProcess(command, args, { ...options, env: { ...(options.env ?? process.env), PATH: FAST_PATH } });

const WHEEL_SCRIPT = `
import base64, hashlib, sys, zipfile
out, version, requires, extra = sys.argv[1:5]
info = f"readkeeper-{version}.dist-info"
files = {
    "readkeeper/__init__.py": f'__version__ = "{version}"\\n# {extra}\\n',
    "readkeeper/__main__.py": "import sys; print('stand-in readkeeper'); sys.exit(0)\\n",
    f"{info}/METADATA": "Metadata-Version: 2.1\\nName: readkeeper\\nVersion: " + version + "\\n"
        + "".join(f"Requires-Dist: {r}\\n" for r in requires.split(",") if r),
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
record = "".join(f"{n},{digest(d.encode())},{len(d.encode())}\\n" for n, d in files.items())
record += f"{info}/RECORD,,\\n"
with zipfile.ZipFile(out, "w") as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr(f"{info}/RECORD", record)
`;

/** A stand-in readkeeper wheel in `<extension>/bundled/`, like `npm run bundle-server`
 * leaves it. */
function makeWheel(extension: string, version: string, options: { requires?: string[]; extra?: string } = {}): BundledWheel {
  const dir = path.join(extension, "bundled");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `readkeeper-${version}-py3-none-any.whl`);
  execFileSync(PYTHON, ["-c", WHEEL_SCRIPT, file, version, (options.requires ?? []).join(","), options.extra ?? ""]);
  const found = findBundledWheel(extension);
  assert.ok(found, "the wheel is found");
  return found;
}

const UNPACK_SCRIPT = `
import sys, sysconfig, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sysconfig.get_paths()["purelib"])
`;

/** A real virtual environment, with the given stand-in wheel unpacked into its
 * site-packages (what pip does with a pure wheel, without pip's seconds). */
function makeVenv(dir: string, wheel?: string): string {
  execFileSync(PYTHON, ["-m", "venv", "--without-pip", dir]);
  const python = process.platform === "win32" ? path.join(dir, "Scripts", "python.exe") : path.join(dir, "bin", "python");
  if (wheel) execFileSync(python, ["-c", UNPACK_SCRIPT, wheel]);
  return python;
}

interface Recorded {
  titles: string[];
  messages: string[];
  logs: string[];
}

function inputs(
  storageDir: string,
  bundled: BundledWheel | undefined,
  overrides: Partial<ResolveInputs> = {},
): { inputs: ResolveInputs; seen: Recorded } {
  const seen: Recorded = { titles: [], messages: [], logs: [] };
  const withProgress: WithProgress = async (title, task) => {
    seen.titles.push(title);
    return task((m) => seen.messages.push(m), new AbortController().signal);
  };
  const log = (level: string) => (m: string) => seen.logs.push(`${level} ${m}`);
  return {
    seen,
    inputs: {
      setting: "",
      trusted: true,
      pythonExtension: async () => undefined,
      storageDir,
      extensionVersion: "1.0.0",
      bundled,
      log: { info: log("info"), warn: log("warn"), error: log("error") },
      withProgress,
      run: fastRun,
      // pip never reaches a real index from these tests
      env: {
        PIP_CONFIG_FILE: os.devNull,
        PIP_INDEX_URL: "http://127.0.0.1:9/simple",
        PIP_RETRIES: "0",
        PIP_TIMEOUT: "2",
        PIP_NO_CACHE_DIR: "1",
      },
      ...overrides,
    },
  };
}

const marker = (over: Partial<EnvMarker> = {}): EnvMarker => ({
  extensionVersion: "1.0.0",
  wheel: "readkeeper-0.1.0-py3-none-any.whl",
  wheelSha256: "aaa",
  readkeeperVersion: "0.1.0",
  basePython: "/usr/bin/python3",
  pythonVersion: "3.11.7",
  installedAt: "",
  ...over,
});

describe("the private environment: what to do with it", () => {
  const bundled: BundledWheel = { path: "/x.whl", file: "readkeeper-0.1.0-py3-none-any.whl", version: "0.1.0", sha256: "aaa" };

  it("creates it on first start, reuses it after, upgrades it when the extension or its wheel changes", () => {
    assert.deepEqual(planEnvironment({ marker: undefined, pythonExists: false, rootExists: false }, bundled, "1.0.0"), {
      action: "create",
      reason: "first start",
    });
    assert.deepEqual(planEnvironment({ marker: marker(), pythonExists: true, rootExists: true }, bundled, "1.0.0"), {
      action: "reuse",
    });
    const newer = planEnvironment({ marker: marker(), pythonExists: true, rootExists: true }, bundled, "1.1.0");
    assert.equal(newer.action, "upgrade");
    assert.match("reason" in newer ? newer.reason : "", /extension changed from 1.0.0 to 1.1.0/);
    const rebuilt = planEnvironment({ marker: marker({ wheelSha256: "bbb" }), pythonExists: true, rootExists: true }, bundled, "1.0.0");
    assert.equal(rebuilt.action, "upgrade");
  });

  it("recreates it when unfinished or when its Python is gone", () => {
    const unfinished = planEnvironment({ marker: undefined, pythonExists: true, rootExists: true }, bundled, "1.0.0");
    assert.deepEqual(unfinished, { action: "recreate", reason: "an earlier setup did not finish" });
    const half = planEnvironment({ marker: undefined, pythonExists: false, rootExists: true }, bundled, "1.0.0");
    assert.equal(half.action, "recreate");
    const gone = planEnvironment({ marker: marker(), pythonExists: false, rootExists: true }, bundled, "1.0.0");
    assert.deepEqual(gone, { action: "recreate", reason: "its Python (/usr/bin/python3, 3.11.7) is gone" });
  });

  it("finds the newest bundled wheel, and none in a build without one", () => {
    const ext = fs.mkdtempSync(path.join(os.tmpdir(), "rk-ext-"));
    try {
      assert.equal(findBundledWheel(ext), undefined);
      fs.mkdirSync(path.join(ext, "bundled"));
      for (const name of ["readkeeper-0.9.0-py3-none-any.whl", "readkeeper-0.10.0-py3-none-any.whl", "notes.txt"]) {
        fs.writeFileSync(path.join(ext, "bundled", name), name);
      }
      const found = findBundledWheel(ext);
      assert.equal(found?.version, "0.10.0");
      assert.match(found?.sha256 ?? "", /^[0-9a-f]{64}$/);
    } finally {
      fs.rmSync(ext, { recursive: true, force: true });
    }
  });
});

// One environment, set up once and taken through its life (pip runs take seconds each).
describe("the private environment, with real interpreters", () => {
  let tmp: string;
  let ext: string;
  let storage: string;
  let layout: ReturnType<typeof envLayout>;
  let bundled: BundledWheel;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "rk-env-"));
    ext = path.join(tmp, "ext");
    storage = path.join(tmp, "storage");
    layout = envLayout(storage);
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("is set up on first start with visible progress, and the server runs from it", async () => {
    // A version no Python on this machine has: the private environment is the way.
    bundled = makeWheel(ext, "99.0.0");
    const first = inputs(storage, bundled);
    const created = await resolveServerPython(first.inputs);
    assert.ok(created.ok, JSON.stringify(created));
    assert.deepEqual(
      { how: created.how, python: created.python, version: created.version },
      { how: "created", python: { command: layout.python, source: "private-env" }, version: "99.0.0" },
    );
    assert.deepEqual(first.seen.titles, ["readkeeper: setting up its Python environment"]);
    assert.ok(first.seen.messages.some((m) => /creating the environment with Python 3\.\d+/.test(m)), first.seen.messages.join("\n"));
    assert.ok(first.seen.messages.some((m) => /installing readkeeper/.test(m)));
    assert.ok(first.seen.logs.some((l) => /pip: .*Successfully installed readkeeper-99\.0\.0/.test(l)), first.seen.logs.join("\n"));
    assert.equal(readMarker(layout)?.wheelSha256, bundled.sha256);
    assert.equal(execFileSync(layout.python, ["-m", "readkeeper"], { encoding: "utf8", cwd: tmp }).trim(), "stand-in readkeeper");
  });

  it("is reused on later starts, with no progress shown", async () => {
    const later = inputs(storage, bundled);
    const reused = await resolveServerPython(later.inputs);
    assert.ok(reused.ok && reused.how === "reused", JSON.stringify(reused));
    assert.deepEqual(later.seen.titles, []);
  });

  it("is not needed when an interpreter already has readkeeper at the bundled version or newer", async () => {
    const newer = makeVenv(path.join(tmp, "new-venv"), makeWheel(path.join(tmp, "ext-newer"), "99.0.0").path);
    const withNewer = await resolveServerPython(inputs(storage, bundled, { pythonExtension: async () => newer }).inputs);
    assert.ok(withNewer.ok, JSON.stringify(withNewer));
    assert.deepEqual([withNewer.how, withNewer.python, withNewer.version], [
      "existing",
      { command: newer, source: "python-extension" },
      "99.0.0",
    ]);
    // An older readkeeper is passed over, for the private environment.
    const older = makeVenv(path.join(tmp, "old-venv"), makeWheel(path.join(tmp, "ext-older"), "98.9.0").path);
    const withOlder = inputs(storage, bundled, { pythonExtension: async () => older });
    const resolved = await resolveServerPython(withOlder.inputs);
    assert.ok(resolved.ok && resolved.how === "reused", JSON.stringify(resolved));
    assert.ok(withOlder.seen.logs.some((l) => /has readkeeper 98\.9\.0, older than the bundled 99\.0\.0: not used/.test(l)));
  });

  it("is upgraded in place when the extension changes, its wheel reinstalled", async () => {
    bundled = makeWheel(ext, "99.0.1");
    const update = inputs(storage, bundled, { extensionVersion: "1.1.0" });
    const upgraded = await resolveServerPython(update.inputs);
    assert.ok(upgraded.ok, JSON.stringify(upgraded));
    assert.deepEqual([upgraded.how, upgraded.version], ["upgraded", "99.0.1"]);
    assert.deepEqual(update.seen.titles, ["readkeeper: updating its Python environment to 99.0.1"]);
    assert.equal(readMarker(layout)?.extensionVersion, "1.1.0");
  });

  it("offline, an upgrade keeps the working server and says why", async () => {
    const needsIndex = makeWheel(ext, "99.1.0", { requires: ["readkeeper-test-missing-dependency"] });
    const kept = await resolveServerPython(inputs(storage, needsIndex, { extensionVersion: "2.0.0" }).inputs);
    assert.ok(kept.ok, JSON.stringify(kept));
    assert.deepEqual([kept.how, kept.version], ["kept", "99.0.1"]);
    assert.match(kept.note ?? "", /could not update its environment and runs the previous server \(99\.0\.1\)/);
    assert.match(kept.note ?? "", /could not download its server's dependencies from the Python package index/);
    assert.equal(readMarker(layout)?.extensionVersion, "1.1.0", "the next start tries the update again");
  });

  it("is set up again when its Python is gone; offline, that says what to do", async () => {
    fs.rmSync(layout.python);
    const needsIndex = findBundledWheel(ext);
    assert.ok(needsIndex);
    const again = inputs(storage, needsIndex, { extensionVersion: "2.0.0" });
    const offline = await resolveServerPython(again.inputs);
    assert.ok(!offline.ok, JSON.stringify(offline));
    assert.ok(again.seen.logs.some((l) => /setting up readkeeper's environment .*its Python .* is gone/.test(l)), again.seen.logs.join("\n"));
    assert.match(offline.problem.message, /could not download its server's dependencies from the Python package index/);
    assert.match(offline.problem.message, /Check the network connection .* then run readkeeper: Restart Server/);
    assert.match(offline.problem.message, /Offline, set readkeeper\.interpreter to a Python that already has readkeeper installed/);
    assert.deepEqual(offline.problem.actions, ["Retry", "Show Log", "Open Setting"]);
    assert.equal(readMarker(layout), undefined, "an unfinished environment has no record: the next start sets it up");
  });
});

describe("the server's Python: the setting, and no usable Python", () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "rk-py-"));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("uses the readkeeper.interpreter setting as it is, and says what to do when it lacks readkeeper", async () => {
    const ext = path.join(tmp, "ext-setting");
    const bare = makeVenv(path.join(tmp, "bare-venv"));
    const older = makeVenv(path.join(tmp, "older-venv"), makeWheel(ext, "0.6.9").path);
    const bundled = makeWheel(ext, "0.7.0");
    const storage = path.join(tmp, "storage-setting");

    const missing = await resolveServerPython(inputs(storage, bundled, { setting: bare }).inputs);
    assert.ok(!missing.ok);
    assert.match(missing.problem.message, /readkeeper is not installed for .*bare-venv.* \(readkeeper\.interpreter\)/);
    assert.ok(missing.problem.message.includes(`-P -m pip install ${bundled.path}`), missing.problem.message);
    assert.match(missing.problem.message, /or clear the setting to let readkeeper set up its own environment/);
    assert.deepEqual(missing.problem.actions, ["Install", "Open Setting", "Show Log"]);
    assert.deepEqual(missing.problem.installCommand, [bare, "-P", "-m", "pip", "install", bundled.path]);

    const nowhere = await resolveServerPython(inputs(storage, bundled, { setting: "/nonexistent/bin/python3" }).inputs);
    assert.ok(!nowhere.ok);
    assert.match(nowhere.problem.message, /cannot use the Python in readkeeper\.interpreter, "\/nonexistent\/bin\/python3": could not run it \(ENOENT/);
    assert.deepEqual(nowhere.problem.actions, ["Open Setting", "Show Log"]);

    const used = await resolveServerPython(inputs(storage, bundled, { setting: older }).inputs);
    assert.ok(used.ok, JSON.stringify(used));
    assert.equal(used.how, "setting");
    assert.match(used.note ?? "", /has readkeeper 0\.6\.9, older than this extension's 0\.7\.0/);
    assert.equal(fs.existsSync(envLayout(storage).root), false, "no private environment for an explicit setting");
  });

  it("without a usable Python says which it tried and what to install", async () => {
    const empty = path.join(tmp, "empty-path");
    fs.mkdirSync(empty, { recursive: true });
    // Real processes, with a PATH where no python3 or python is.
    const run: Runner = (command, args, options) => runProcess(command, args, { ...options, env: { ...process.env, PATH: empty } });
    const bundled = makeWheel(path.join(tmp, "ext-nopython"), "0.1.0");
    const result = await resolveServerPython(
      inputs(path.join(tmp, "storage-nopython"), bundled, { run, pythonExtension: async () => "/nonexistent/python" }).inputs,
    );
    assert.ok(!result.ok);
    assert.match(result.problem.message, /readkeeper needs Python 3\.11 or newer to set up its server, and found none it can use/);
    assert.match(result.problem.message, /\/nonexistent\/python \(the Python extension's selected interpreter\): could not run it/);
    assert.match(result.problem.message, /python3 \(PATH\): could not run it/);
    assert.match(result.problem.message, /Install Python 3\.11 or newer .* then run readkeeper: Restart Server/);
    assert.equal(result.problem.status, "no Python 3.11 or newer found");
  });

  it("tells a Python too old from one without venv (the message names the package)", async () => {
    const answers: Record<string, object> = {
      "/py39": { executable: "/py39", version: [3, 9, 18], venv: true, ensurepip: true, pip: "23.0" },
      "/debian": { executable: "/debian", version: [3, 12, 3], venv: false, ensurepip: false },
    };
    const run: Runner = async (command): Promise<RunResult> =>
      answers[command]
        ? { code: 0, stdout: JSON.stringify(answers[command]), stderr: "" }
        : { code: null, stdout: "", stderr: "", spawnError: "ENOENT: not found" };
    const bundled = makeWheel(path.join(tmp, "ext-old"), "0.1.0");
    const result = await resolveServerPython(
      inputs(path.join(tmp, "storage-old"), bundled, { run, pythonExtension: async () => "/py39" }).inputs,
    );
    assert.ok(!result.ok);
    assert.match(result.problem.message, /\/py39 \(the Python extension's selected interpreter\): Python 3\.9\.18, too old/);
    const debian = await resolveServerPython(
      inputs(path.join(tmp, "storage-old"), bundled, { run, pythonExtension: async () => "/debian" }).inputs,
    );
    assert.ok(!debian.ok);
    assert.match(debian.problem.message, /cannot create virtual environments .*sudo apt install python3\.12-venv/);
    assert.match(debian.problem.message, /Debian\/Ubuntu: sudo apt install python3-venv/);
  });
});

describe("the server's Python in Restricted Mode", () => {
  // Probes answered from a table: `python3` on PATH reports where it really is; the
  // workspace's .venv (the Python extension's pick) claims the newest readkeeper.
  const answers: Record<string, object> = {
    python3: { executable: "/usr/bin/python3.12", version: [3, 12, 3], venv: true, ensurepip: true, readkeeper: "1.0.0" },
    "/ws/.venv/bin/python": { executable: "/ws/.venv/bin/python", version: [3, 12, 3], venv: true, ensurepip: true, readkeeper: "9.9.9" },
  };
  const probed: string[] = [];
  const run: Runner = async (command): Promise<RunResult> => {
    probed.push(command);
    return answers[command]
      ? { code: 0, stdout: JSON.stringify(answers[command]), stderr: "" }
      : { code: null, stdout: "", stderr: "", spawnError: "ENOENT: not found" };
  };
  const restricted = (over: Partial<ResolveInputs>) =>
    inputs(path.join(os.tmpdir(), "rk-restricted-unused"), undefined, {
      run,
      trusted: false,
      workspaceFolder: "/ws",
      workspaceFolders: ["/ws"],
      ...over,
    }).inputs;

  it("never asks the Python extension (the workspace picks its interpreter) and starts PATH's Python by its absolute path", async () => {
    probed.length = 0;
    let asked = 0;
    const pythonExtension = async () => {
      asked++;
      return "/ws/.venv/bin/python";
    };
    const result = await resolveServerPython(restricted({ pythonExtension }));
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.python.command, "/usr/bin/python3.12");
    assert.equal(asked, 0);
    assert.ok(!probed.includes("/ws/.venv/bin/python"), probed.join(" "));
    // The control: a trusted workspace's Python extension choice is used.
    const trusted = await resolveServerPython(restricted({ pythonExtension, trusted: true }));
    assert.ok(trusted.ok);
    assert.equal(trusted.python.command, "/ws/.venv/bin/python");
  });

  it("skips a readkeeper.interpreter that lies in the workspace, and uses one outside it", async () => {
    for (const setting of ["${workspaceFolder}/.venv/bin/python", "./.venv/bin/python", "/ws/.venv/bin/python"]) {
      probed.length = 0;
      const result = await resolveServerPython(restricted({ setting }));
      assert.ok(result.ok, setting);
      assert.equal(result.python.command, "/usr/bin/python3.12", setting);
      assert.ok(!probed.includes("/ws/.venv/bin/python"), `${setting}: ${probed.join(" ")}`);
    }
    const outside = await resolveServerPython(restricted({ setting: "python3" }));
    assert.ok(outside.ok);
    assert.equal(outside.how, "setting");
    assert.equal(outside.python.command, "/usr/bin/python3.12");
  });
});

describe("one window at a time sets up the environment", () => {
  it("waits for the lock's owner, and takes over a lock whose owner died", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rk-lock-"));
    try {
      const lock = path.join(dir, "python-env.lock");
      const release = await acquireLock(lock, () => undefined);
      let waited = 0;
      let acquired = false;
      const pending = acquireLock(lock, () => waited++).then((r) => {
        acquired = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(acquired, false, "the second waits");
      assert.equal(waited, 1);
      release();
      const second = await pending;
      second();

      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "owner.json"), JSON.stringify({ pid: 2 ** 22 + 7, at: Date.now() }));
      const takeover = await acquireLock(lock, () => assert.fail("a dead owner's lock is not waited for"));
      takeover();
      assert.equal(fs.existsSync(lock), false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
