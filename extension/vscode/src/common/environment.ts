// Which Python runs the server:
//   1. `readkeeper.interpreter`, when set, is used as it is (an explicit override);
//   2. else the Python extension's interpreter or `python3`/`python` on PATH, when one
//      already has readkeeper at the bundled version or newer;
//   3. else readkeeper's private environment (privateEnv.ts), set up with the first
//      Python >= 3.11 found in that same order.
// Whatever fails ends in a Problem: what is missing and what to do, with buttons.
//
// In restricted mode (VS Code does not trust the workspace) nothing the workspace can
// choose runs: the Python extension's interpreter is skipped (the workspace's settings
// and its .venv choose it), and so is a `readkeeper.interpreter` that points into a
// workspace folder; the user's own Python on PATH or the private environment runs the
// server. A Python found by name on PATH is started by the absolute path it reports, so
// the server's working folder (the workspace) never picks another `python3` (a relative
// PATH entry, or a version manager's shim reading the workspace's .python-version).

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
  type Probe,
  probePython,
  runProcess,
  type Runner,
  shellQuote,
  versionText,
} from "./python";
import { type BundledWheel, privateEnvironment, type PrivateEnvInputs } from "./privateEnv";
import type { Resolution } from "./resolution";

/** What choosing the server's Python needs from the extension. */
export interface ResolveInputs extends PrivateEnvInputs {
  /** The `readkeeper.interpreter` setting, the user's value only ("" when unset). */
  setting: string;
  workspaceFolder?: string;
  /** Whether VS Code trusts the workspace; false: restricted mode (see the top). */
  trusted: boolean;
  /** The workspace folders, which a restricted-mode interpreter may not lie in. */
  workspaceFolders?: readonly string[];
  /** The Python extension's interpreter, undefined when absent or when it has none. */
  pythonExtension: () => Promise<string | undefined>;
  bundled: BundledWheel | undefined;
  run?: Runner;
}

export async function resolveServerPython(inputs: ResolveInputs): Promise<Resolution> {
  const run = inputs.run ?? runProcess;
  const { log, bundled } = inputs;

  if (inputs.setting.trim()) {
    const chosen = expandSetting(inputs.setting, inputs.workspaceFolder);
    if (inputs.trusted || !insideAny(chosen, inputs.workspaceFolders ?? [], inputs.setting)) {
      return fromSetting(inputs, run);
    }
    log.warn(
      `readkeeper.interpreter (${chosen}) lies in the workspace, which VS Code does not trust: ` +
        "not used in restricted mode; the server runs on your own Python instead",
    );
  }

  const pythonExtension = inputs.trusted ? inputs.pythonExtension : async () => undefined;
  const candidates = await candidateInterpreters(pythonExtension, inputs.platform);
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
    return { ok: true, python: absolute(python, result.info.executable), version: installed, how: "existing" };
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
      ? [python.command, "-P", "-m", "pip", "install", inputs.bundled.path] // -P: the terminal opens in the workspace
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
  return { ok: true, python: absolute(python, info.executable), version: info.readkeeper, how: "setting", note };
}

/** `python`, named by the absolute path it reported when it was found by name. */
function absolute(python: Interpreter, executable: string): Interpreter {
  return path.isAbsolute(python.command) || !path.isAbsolute(executable) ? python : { ...python, command: executable };
}

/** Whether `command` (the expanded setting) lies in one of `folders`, or the setting
 * (`raw`) names the workspace itself (`${workspaceFolder}`, a relative path). */
function insideAny(command: string, folders: readonly string[], raw: string): boolean {
  if (raw.includes("${workspaceFolder")) return true;
  if (!path.isAbsolute(command)) return /[\\/]/.test(command); // a bare name is PATH's
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const target = real(command);
  return folders.some((folder) => {
    const relative = path.relative(real(folder), target);
    return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
  });
}
