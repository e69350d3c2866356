// Which Python runs the server, and readkeeper's private environment.
//
// The `.vsix` carries the readkeeper wheel (bundled/, put there by `npm run
// bundle-server`). On start:
//   1. `readkeeper.interpreter`, when set, is used as it is (an explicit override);
//   2. else the Python extension's interpreter or `python3`/`python` on PATH, when one
//      already has readkeeper at the bundled version or newer;
//   3. else a private virtual environment in the extension's global storage: created
//      with the first Python >= 3.11 found (in that same order) on first start, reused
//      later, upgraded when the extension (so its wheel) changes. pip installs the wheel
//      and fetches its dependencies from the package index, with visible progress.
// Whatever fails ends in a Problem: what is missing and what to do, with buttons.

import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  candidateInterpreters,
  compareVersions,
  describeSource,
  expandSetting,
  type Interpreter,
  isSupportedPython,
  MIN_PYTHON,
  pipCanTarget,
  type Probe,
  probePython,
  type PythonInfo,
  type RunResult,
  runProcess,
  type Runner,
  shellQuote,
  versionText,
} from "./python";

// --- the bundled wheel ----------------------------------------------------------------

export interface BundledWheel {
  path: string;
  file: string;
  version: string;
  sha256: string;
}

export const BUNDLED_DIR = "bundled";

/** The readkeeper wheel in `<extension>/bundled/`, if this build carries one (the newest
 * when there are several). */
export function findBundledWheel(extensionPath: string): BundledWheel | undefined {
  const dir = path.join(extensionPath, BUNDLED_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return undefined;
  }
  const wheels = names
    .map((file) => ({ file, match: /^readkeeper-([^-]+)-[^-]+-[^-]+-[^-]+\.whl$/.exec(file) }))
    .filter((w): w is { file: string; match: RegExpExecArray } => w.match !== null)
    .sort((a, b) => compareVersions(b.match[1], a.match[1]));
  if (wheels.length === 0) return undefined;
  const { file, match } = wheels[0];
  const wheelPath = path.join(dir, file);
  const sha256 = createHash("sha256").update(fs.readFileSync(wheelPath)).digest("hex");
  return { path: wheelPath, file, version: match[1], sha256 };
}

// --- the private environment's layout and record ----------------------------------------

export interface EnvLayout {
  root: string;
  python: string;
  /** What was installed, written last: an environment without it is unfinished. */
  marker: string;
  lock: string;
}

export function envLayout(storageDir: string, platform: NodeJS.Platform = process.platform): EnvLayout {
  const root = path.join(storageDir, "python-env");
  return {
    root,
    python: platform === "win32" ? path.join(root, "Scripts", "python.exe") : path.join(root, "bin", "python"),
    marker: path.join(root, "readkeeper-env.json"),
    lock: path.join(storageDir, "python-env.lock"),
  };
}

export interface EnvMarker {
  extensionVersion: string;
  wheel: string;
  wheelSha256: string;
  readkeeperVersion: string;
  basePython: string;
  pythonVersion: string;
  installedAt: string;
}

export function readMarker(layout: EnvLayout): EnvMarker | undefined {
  try {
    const marker = JSON.parse(fs.readFileSync(layout.marker, "utf8")) as EnvMarker;
    return typeof marker.wheelSha256 === "string" ? marker : undefined;
  } catch {
    return undefined;
  }
}

export type EnvPlan =
  | { action: "reuse" }
  | { action: "create" | "recreate" | "upgrade"; reason: string };

/** What to do with the private environment, from what is on disk. */
export function planEnvironment(
  state: { marker: EnvMarker | undefined; pythonExists: boolean; rootExists: boolean },
  bundled: BundledWheel,
  extensionVersion: string,
): EnvPlan {
  const { marker, pythonExists, rootExists } = state;
  if (!pythonExists) {
    if (marker) {
      return { action: "recreate", reason: `its Python (${marker.basePython}, ${marker.pythonVersion}) is gone` };
    }
    return rootExists
      ? { action: "recreate", reason: "an earlier setup did not finish" }
      : { action: "create", reason: "first start" };
  }
  if (!marker) {
    return { action: "recreate", reason: "an earlier setup did not finish" };
  }
  if (marker.extensionVersion !== extensionVersion) {
    return {
      action: "upgrade",
      reason: `the extension changed from ${marker.extensionVersion} to ${extensionVersion}`,
    };
  }
  if (marker.wheelSha256 !== bundled.sha256) {
    return { action: "upgrade", reason: `the bundled wheel changed (${bundled.file})` };
  }
  return { action: "reuse" };
}

// --- problems: what is missing, and what to do ------------------------------------------

export type ProblemAction = "Install" | "Open Setting" | "Select Interpreter" | "Retry" | "Show Log";

export interface Problem {
  /** The whole message: what happened and what to do next. */
  message: string;
  /** A few words for the status bar's tooltip. */
  status: string;
  actions: ProblemAction[];
  /** For "Install": the command that installs the bundled wheel into the set interpreter. */
  installCommand?: string[];
}

const RESTART = "run readkeeper: Restart Server (or the Retry button)";

function noSuitablePython(rejected: { python: Interpreter; why: string }[]): Problem {
  const need = `Python ${versionText(MIN_PYTHON)} or newer`;
  const found = rejected.map((r) => `${r.python.command} (${describeSource(r.python.source)}): ${r.why}`).join("; ");
  const venvHint = rejected.some((r) => r.why.includes("python3-venv"));
  return {
    message:
      `readkeeper needs ${need} to set up its server, and found none it can use. ${found}. ` +
      (venvHint
        ? "Install the venv module for that Python (Debian/Ubuntu: sudo apt install python3-venv), "
        : `Install ${need} (python.org, or your system's package manager), `) +
      `then ${RESTART}; or set readkeeper.interpreter to a Python that has readkeeper installed.`,
    status: `no ${need} found`,
    actions: ["Retry", "Open Setting", "Show Log"],
  };
}

const NETWORK_ERROR =
  /Failed to establish a new connection|NewConnectionError|Temporary failure in name resolution|Name or service not known|nodename nor servname|Network is unreachable|Connection refused|ConnectTimeout|timed out|ProxyError|SSLError|CERTIFICATE_VERIFY_FAILED|Could not fetch URL|No matching distribution found|Could not find a version that satisfies/i;

function lastLines(text: string, count: number): string {
  return text
    .trim()
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !/^(WARNING: Retrying|\[notice\])/.test(l))
    .slice(-count)
    .join(" ");
}

/** A failed pip or venv run, told as what the user can do about it. */
export function installProblem(step: string, result: RunResult, layout: EnvLayout): Problem {
  const output = `${result.stdout}\n${result.stderr}`;
  if (result.cancelled) {
    return {
      message: `Setting up readkeeper's Python environment was cancelled. To finish it, ${RESTART}.`,
      status: "setup cancelled",
      actions: ["Retry", "Show Log"],
    };
  }
  if (NETWORK_ERROR.test(output)) {
    return {
      message:
        "readkeeper could not download its server's dependencies from the Python package index " +
        `(pypi.org, or the index your pip is configured with): ${lastLines(result.stderr || output, 2)}. ` +
        `Check the network connection (and pip's proxy or index settings: pip config list), then ${RESTART}. ` +
        "Offline, set readkeeper.interpreter to a Python that already has readkeeper installed.",
      status: "offline: could not install the server's dependencies",
      actions: ["Retry", "Show Log", "Open Setting"],
    };
  }
  const why = result.spawnError ?? (result.timedOut ? "it took too long" : lastLines(output, 3) || `exit ${result.code}`);
  return {
    message:
      `readkeeper could not ${step} (in ${layout.root}): ${why}. The log has the full output. ` +
      `Fix what it names and ${RESTART}; or set readkeeper.interpreter to a Python that has readkeeper installed.`,
    status: `could not ${step}`,
    actions: ["Retry", "Show Log", "Open Setting"],
  };
}

// --- the decision -----------------------------------------------------------------------

export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Runs `task` with visible progress (a notification in VS Code); `report` sets its
 * message; `signal` aborts when the user cancels. */
export type WithProgress = <T>(
  title: string,
  task: (report: (message: string) => void, signal: AbortSignal) => Promise<T>,
) => Promise<T>;

export interface ResolveInputs {
  /** The `readkeeper.interpreter` setting ("" when unset). */
  setting: string;
  workspaceFolder?: string;
  /** The Python extension's interpreter, undefined when absent or when it has none. */
  pythonExtension: () => Promise<string | undefined>;
  /** The extension's global storage folder (the private environment lives under it). */
  storageDir: string;
  extensionVersion: string;
  bundled: BundledWheel | undefined;
  log: Log;
  withProgress: WithProgress;
  run?: Runner;
  /** Extra environment for venv and pip (tests point pip at a closed index). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** How long a pip install may take. */
  installTimeoutMs?: number;
}

export type How = "setting" | "existing" | "reused" | "created" | "upgraded" | "kept";

export type Resolution =
  | { ok: true; python: Interpreter; version: string; how: How; note?: string }
  | { ok: false; problem: Problem };

export async function resolveServerPython(inputs: ResolveInputs): Promise<Resolution> {
  const run = inputs.run ?? runProcess;
  const { log, bundled } = inputs;

  if (inputs.setting.trim()) {
    return fromSetting(inputs, run);
  }

  const candidates = await candidateInterpreters(inputs.pythonExtension, inputs.platform);
  const probes = new Map<string, Probe>();
  const probe = async (python: Interpreter) => {
    let result = probes.get(python.command);
    if (!result) {
      result = await probePython(python.command, run);
      probes.set(python.command, result);
    }
    return result;
  };
  for (const python of candidates) {
    const result = await probe(python);
    if (!result.ok) continue;
    const installed = result.info.readkeeper;
    if (installed === undefined || !isSupportedPython(result.info)) continue;
    if (bundled && compareVersions(installed, bundled.version) < 0) {
      log.info(
        `${python.command} (${describeSource(python.source)}) has readkeeper ${installed}, older than ` +
          `the bundled ${bundled.version}: not used`,
      );
      continue;
    }
    return { ok: true, python, version: installed, how: "existing" };
  }

  if (!bundled) {
    return {
      ok: false,
      problem: {
        message:
          "readkeeper is not installed for any Python found (the Python extension's interpreter, python3, " +
          "python), and this build of the extension carries no server wheel to install. Set " +
          "readkeeper.interpreter to a Python that has readkeeper installed (in a clone: " +
          "python3 -m venv .venv && .venv/bin/pip install -e .), or install the extension from a " +
          ".vsix built with npm run package.",
        status: "readkeeper not installed",
        actions: ["Open Setting", "Show Log"],
      },
    };
  }
  return privateEnvironment(inputs, run, bundled, candidates, probe);
}

async function fromSetting(inputs: ResolveInputs, run: Runner): Promise<Resolution> {
  const python: Interpreter = { command: expandSetting(inputs.setting, inputs.workspaceFolder), source: "setting" };
  const result = await probePython(python.command, run);
  const clear = "or clear the setting to let readkeeper set up its own environment";
  if (!result.ok) {
    return {
      ok: false,
      problem: {
        message: `readkeeper cannot use the Python in readkeeper.interpreter, "${python.command}": ${result.detail}. Fix the setting, ${clear}.`,
        status: "the readkeeper.interpreter setting is not a Python",
        actions: ["Open Setting", "Show Log"],
      },
    };
  }
  const { info } = result;
  if (!isSupportedPython(info)) {
    return {
      ok: false,
      problem: {
        message:
          `${python.command} (readkeeper.interpreter) is Python ${versionText(info.version)}; readkeeper ` +
          `needs ${versionText(MIN_PYTHON)} or newer. Point the setting at a newer Python, ${clear}.`,
        status: `Python ${versionText(info.version)} is too old`,
        actions: ["Open Setting", "Show Log"],
      },
    };
  }
  if (info.readkeeper === undefined) {
    const install = inputs.bundled
      ? [python.command, "-m", "pip", "install", inputs.bundled.path]
      : undefined;
    const broken = info.readkeeperError ? ` (it is there but fails to import: ${info.readkeeperError})` : "";
    return {
      ok: false,
      problem: {
        message:
          `readkeeper is not installed for ${python.command} (readkeeper.interpreter)${broken}. ` +
          (install ? `Install it there (${shellQuote(install)}), ` : "Install it there, ") +
          `${clear}.`,
        status: "readkeeper not installed for the set interpreter",
        actions: install ? ["Install", "Open Setting", "Show Log"] : ["Open Setting", "Show Log"],
        installCommand: install,
      },
    };
  }
  const bundled = inputs.bundled;
  const note =
    bundled && compareVersions(info.readkeeper, bundled.version) < 0
      ? `readkeeper.interpreter has readkeeper ${info.readkeeper}, older than this extension's ${bundled.version}`
      : undefined;
  return { ok: true, python, version: info.readkeeper, how: "setting", note };
}

/** Why a Python cannot host the private environment, or undefined when it can. */
function unsuitable(result: Probe): string | undefined {
  if (!result.ok) return result.detail;
  const { info } = result;
  const version = versionText(info.version);
  if (!isSupportedPython(info)) return `Python ${version}, too old`;
  const minor = `${info.version[0]}.${info.version[1]}`;
  if (!info.venv) {
    return `Python ${version} cannot create virtual environments (its venv module is missing: install python3-venv, e.g. sudo apt install python${minor}-venv)`;
  }
  if (!pipCanTarget(info) && !info.ensurepip) {
    return `Python ${version} has neither pip 22.3+ nor ensurepip (install python3-venv, e.g. sudo apt install python${minor}-venv, or python3-pip)`;
  }
  return undefined;
}

const LOCK_STALE_MS = 20 * 60_000;

/** One VS Code window at a time sets up the environment (they share global storage).
 * Returns the release function. A lock whose owner died, or that is older than the
 * longest setup, is taken over. */
export async function acquireLock(
  lockDir: string,
  onWait: () => void,
  staleMs = LOCK_STALE_MS,
): Promise<() => void> {
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  let waited = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, "owner.json"), JSON.stringify({ pid: process.pid, at: Date.now() }));
      return () => fs.rmSync(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let owner: { pid?: number; at?: number } = {};
    try {
      owner = JSON.parse(fs.readFileSync(path.join(lockDir, "owner.json"), "utf8"));
    } catch {
      owner = { at: fs.statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs };
    }
    const old = owner.at === undefined || Date.now() - owner.at > staleMs;
    if (old || (owner.pid !== undefined && !processAlive(owner.pid))) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!waited) {
      waited = true;
      onWait();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const PIP_FLAGS = ["--disable-pip-version-check", "--no-input"];
// --no-compile: byte-compiling every installed module (over 100 MB of packages) doubles the
// install; Python compiles the few hundred the server imports on its first start.
const INSTALL_FLAGS = ["--progress-bar", "off", "--no-compile"];

/** A pip line worth showing as progress ("Collecting pygls", "Installing collected
 * packages: ..."). */
function progressLine(line: string): string | undefined {
  const match = /^\s*(Collecting|Downloading|Installing collected packages|Building wheel|Successfully installed)\b(.*)$/.exec(line);
  if (!match) return undefined;
  const text = `${match[1]}${match[2]}`.replace(/\s+/g, " ");
  return text.length > 90 ? `${text.slice(0, 87)}...` : text;
}

async function privateEnvironment(
  inputs: ResolveInputs,
  run: Runner,
  bundled: BundledWheel,
  candidates: Interpreter[],
  probe: (python: Interpreter) => Promise<Probe>,
): Promise<Resolution> {
  const { log } = inputs;
  const layout = envLayout(inputs.storageDir, inputs.platform);
  // A `user = true` in the user's pip configuration would refuse to install into a venv.
  const env: NodeJS.ProcessEnv = { ...process.env, ...inputs.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_USER: "0" };
  delete env.PYTHONHOME;
  delete env.VIRTUAL_ENV;
  const timeoutMs = inputs.installTimeoutMs ?? 15 * 60_000;
  const envPython: Interpreter = { command: layout.python, source: "private-env" };

  const release = await acquireLock(layout.lock, () =>
    log.info("another VS Code window is setting up readkeeper's environment: waiting for it"),
  );
  try {
    let plan = planEnvironment(
      { marker: readMarker(layout), pythonExists: fs.existsSync(layout.python), rootExists: fs.existsSync(layout.root) },
      bundled,
      inputs.extensionVersion,
    );
    if (plan.action === "reuse") {
      const current = await probePython(layout.python, run);
      if (current.ok && current.info.readkeeper !== undefined) {
        log.info(`readkeeper's environment ${layout.root}: readkeeper ${current.info.readkeeper}`);
        return { ok: true, python: envPython, version: current.info.readkeeper, how: "reused" };
      }
      const why = current.ok ? (current.info.readkeeperError ?? "readkeeper is missing") : current.detail;
      plan = { action: "recreate", reason: `its readkeeper does not work (${why})` };
    }
    if (plan.action === "upgrade") {
      const upgraded = await upgrade(inputs, run, bundled, layout, env, timeoutMs, plan.reason, candidates, probe);
      if (upgraded) return upgraded;
      plan = { action: "recreate", reason: "no pip can update it" };
    }

    // create or recreate: the first Python >= 3.11 that can make a venv
    const rejected: { python: Interpreter; why: string }[] = [];
    let base: { python: Interpreter; info: PythonInfo } | undefined;
    for (const python of candidates) {
      const result = await probe(python);
      const why = unsuitable(result);
      if (why === undefined && result.ok) {
        base = { python, info: result.info };
        break;
      }
      rejected.push({ python, why: why ?? "unusable" });
    }
    if (!base) {
      return { ok: false, problem: noSuitablePython(rejected) };
    }
    const chosen = base;
    log.info(
      `setting up readkeeper's environment in ${layout.root} (${plan.reason}) with Python ` +
        `${versionText(chosen.info.version)} (${chosen.python.command}, ${describeSource(chosen.python.source)})`,
    );
    const began = Date.now();
    const made = await inputs.withProgress("readkeeper: setting up its Python environment", async (report, signal): Promise<Resolution> => {
      fs.rmSync(layout.root, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(layout.root), { recursive: true });
      // pip of the base Python, pointed at the new environment, skips ensurepip's copy
      // of pip (tens of seconds on a slow machine); without such a pip, ensurepip.
      const basePip = pipCanTarget(chosen.info);
      report(`creating the environment with Python ${versionText(chosen.info.version)}`);
      const venvArgs = ["-m", "venv", ...(basePip ? ["--without-pip"] : []), layout.root];
      const venv = await run(chosen.python.command, venvArgs, { timeoutMs, env, signal, onLine: (l) => log.info(`venv: ${l}`) });
      if (venv.code !== 0 || !fs.existsSync(layout.python)) {
        return { ok: false, problem: installProblem("create its Python environment", venv, layout) };
      }
      const pip = basePip
        ? [chosen.python.command, "-m", "pip", "--python", layout.python]
        : [layout.python, "-m", "pip"];
      const installed = await pipInstall(run, pip, [bundled.path], { report, signal, env, timeoutMs, log });
      if (installed.code !== 0) {
        return { ok: false, problem: installProblem("install the readkeeper server", installed, layout) };
      }
      return finish(run, layout, bundled, inputs.extensionVersion, chosen.info.executable, chosen.info, "created");
    });
    if (made.ok) log.info(`readkeeper's environment was set up in ${Math.round((Date.now() - began) / 1000)} s`);
    return made;
  } finally {
    release();
  }
}

async function pipInstall(
  run: Runner,
  pip: string[],
  args: string[],
  options: { report: (m: string) => void; signal: AbortSignal; env: NodeJS.ProcessEnv; timeoutMs: number; log: Log },
): Promise<RunResult> {
  const [command, ...prefix] = pip;
  const full = [...prefix, ...PIP_FLAGS, "install", ...INSTALL_FLAGS, ...args];
  options.log.info(`running ${shellQuote([command, ...full])}`);
  options.report("installing readkeeper and its dependencies (pip)");
  return run(command, full, {
    timeoutMs: options.timeoutMs,
    env: options.env,
    signal: options.signal,
    onLine: (line) => {
      options.log.info(`pip: ${line}`);
      const shown = progressLine(line);
      if (shown) options.report(shown);
    },
  });
}

async function finish(
  run: Runner,
  layout: EnvLayout,
  bundled: BundledWheel,
  extensionVersion: string,
  basePython: string,
  baseInfo: PythonInfo,
  how: "created" | "upgraded",
): Promise<Resolution> {
  const check = await probePython(layout.python, run);
  if (!check.ok || check.info.readkeeper === undefined) {
    const why = check.ok ? (check.info.readkeeperError ?? "it is not there") : check.detail;
    return {
      ok: false,
      problem: installProblem(
        "import the readkeeper it installed",
        { code: 1, stdout: "", stderr: why },
        layout,
      ),
    };
  }
  const marker: EnvMarker = {
    extensionVersion,
    wheel: bundled.file,
    wheelSha256: bundled.sha256,
    readkeeperVersion: check.info.readkeeper,
    basePython,
    pythonVersion: versionText(baseInfo.version),
    installedAt: new Date().toISOString(),
  };
  fs.writeFileSync(layout.marker, JSON.stringify(marker, null, 2) + "\n");
  return { ok: true, python: { command: layout.python, source: "private-env" }, version: check.info.readkeeper, how };
}

/** Reinstalls the bundled wheel into the existing environment: its dependencies first
 * (so an offline failure leaves the old server working), then the wheel itself even when
 * its version number did not change. Undefined when no pip can reach the environment. */
async function upgrade(
  inputs: ResolveInputs,
  run: Runner,
  bundled: BundledWheel,
  layout: EnvLayout,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  reason: string,
  candidates: Interpreter[],
  probe: (python: Interpreter) => Promise<Probe>,
): Promise<Resolution | undefined> {
  const { log } = inputs;
  const current = await probePython(layout.python, run);
  if (!current.ok) return undefined;
  const marker = readMarker(layout);
  let pip: string[] | undefined;
  if (current.info.pip !== undefined) {
    pip = [layout.python, "-m", "pip"];
  } else {
    const bases: Interpreter[] = [
      ...(marker ? [{ command: marker.basePython, source: "path" as const }] : []),
      ...candidates,
    ];
    for (const base of bases) {
      const result = await probe(base);
      if (result.ok && pipCanTarget(result.info)) {
        pip = [base.command, "-m", "pip", "--python", layout.python];
        break;
      }
    }
  }
  if (!pip) return undefined;
  const chosenPip = pip;
  log.info(`updating readkeeper's environment ${layout.root}: ${reason}`);
  return inputs.withProgress(`readkeeper: updating its Python environment to ${bundled.version}`, async (report, signal) => {
    const options = { report, signal, env, timeoutMs, log };
    let result = await pipInstall(run, chosenPip, [bundled.path], options);
    if (result.code === 0) {
      result = await pipInstall(run, chosenPip, ["--force-reinstall", "--no-deps", bundled.path], options);
    }
    if (result.code !== 0) {
      const problem = installProblem("update the readkeeper server", result, layout);
      const still = await probePython(layout.python, run);
      if (still.ok && still.info.readkeeper !== undefined) {
        // The old server still works: run it, and say why it is not the new one.
        log.warn(problem.message);
        return {
          ok: true,
          python: { command: layout.python, source: "private-env" },
          version: still.info.readkeeper,
          how: "kept",
          note: `readkeeper could not update its environment and runs the previous server (${still.info.readkeeper}) for now: ${problem.message}`,
        };
      }
      return { ok: false, problem };
    }
    return finish(
      run,
      layout,
      bundled,
      inputs.extensionVersion,
      marker?.basePython ?? layout.python,
      current.info,
      "upgraded",
    );
  });
}

/** Deletes the private environment (the next start sets it up again). */
export function removeEnvironment(storageDir: string): string {
  const layout = envLayout(storageDir);
  fs.rmSync(layout.root, { recursive: true, force: true });
  return layout.root;
}
