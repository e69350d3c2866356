// readkeeper's private environment: a virtual environment in the extension's global
// storage that runs the server from the wheel the `.vsix` carries (bundled/, put there by
// `npm run bundle-server`). Created with the first Python >= 3.11 found on first start,
// reused later, upgraded when the extension (so its wheel) changes. pip installs the
// wheel and fetches its dependencies from the package index, with visible progress.

import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { acquireLock } from "./lock";
import {
  compareVersions,
  describeSource,
  type Interpreter,
  isSupportedPython,
  pipCanTarget,
  type Probe,
  probePython,
  type PythonInfo,
  type RunResult,
  type Runner,
  shellQuote,
  versionText,
} from "./python";
import { installProblem, type Log, noSuitablePython, type Resolution, type WithProgress } from "./resolution";

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

// --- setting it up ----------------------------------------------------------------------

/** What setting up the private environment needs from the extension. */
export interface PrivateEnvInputs {
  /** The extension's global storage folder (the private environment lives under it). */
  storageDir: string;
  extensionVersion: string;
  log: Log;
  withProgress: WithProgress;
  /** Extra environment for venv and pip (tests point pip at a closed index). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** How long a pip install may take. */
  installTimeoutMs?: number;
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

export async function privateEnvironment(
  inputs: PrivateEnvInputs,
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
        return { ok: false, problem: installProblem("create its Python environment", venv, layout.root) };
      }
      const pip = basePip
        ? [chosen.python.command, "-m", "pip", "--python", layout.python]
        : [layout.python, "-m", "pip"];
      const installed = await pipInstall(run, pip, [bundled.path], { report, signal, env, timeoutMs, log });
      if (installed.code !== 0) {
        return { ok: false, problem: installProblem("install the readkeeper server", installed, layout.root) };
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
        layout.root,
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
  inputs: PrivateEnvInputs,
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
      const problem = installProblem("update the readkeeper server", result, layout.root);
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
