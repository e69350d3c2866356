// Which Python runs the server, and whether readkeeper is importable there.
//
// Order: the `readkeeper.interpreter` setting, else the interpreter selected in the
// Python extension (when it is installed), else `python3`.

import { execFile } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import type * as vscode from "vscode";

export const PYTHON_EXTENSION_ID = "ms-python.python";

export type InterpreterSource = "setting" | "python-extension" | "default";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
}

export interface InterpreterInputs {
  /** The `readkeeper.interpreter` setting ("" when unset). */
  setting: string;
  /** The first workspace folder, for `${workspaceFolder}` in the setting. */
  workspaceFolder?: string;
  /** The Python extension's interpreter, undefined when absent or when it has none. */
  pythonExtension: () => Promise<string | undefined>;
  /** Fallback command (default `python3`, `python` on Windows). */
  fallback?: string;
}

export function expandSetting(value: string, workspaceFolder?: string): string {
  let result = value.trim();
  if (workspaceFolder) {
    result = result.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  result = result.replace(/\$\{userHome\}/g, os.homedir());
  if (result === "~" || result.startsWith("~/")) {
    result = path.join(os.homedir(), result.slice(1));
  }
  if (workspaceFolder && (result.startsWith("./") || result.startsWith("../"))) {
    result = path.resolve(workspaceFolder, result);
  }
  return result;
}

export async function chooseInterpreter(inputs: InterpreterInputs): Promise<Interpreter> {
  if (inputs.setting.trim()) {
    return { command: expandSetting(inputs.setting, inputs.workspaceFolder), source: "setting" };
  }
  let fromExtension: string | undefined;
  try {
    fromExtension = await inputs.pythonExtension();
  } catch {
    fromExtension = undefined; // a broken Python extension must not stop readkeeper
  }
  if (fromExtension) {
    return { command: fromExtension, source: "python-extension" };
  }
  const fallback = inputs.fallback ?? (process.platform === "win32" ? "python" : "python3");
  return { command: fallback, source: "default" };
}

/** The interpreter the Python extension has selected for `resource`, if it is installed. */
export async function pythonExtensionInterpreter(
  getExtension: (id: string) => vscode.Extension<unknown> | undefined,
  resource?: vscode.Uri,
): Promise<string | undefined> {
  if (!getExtension(PYTHON_EXTENSION_ID)) {
    return undefined;
  }
  const { PythonExtension } = await import("@vscode/python-extension");
  const api = await PythonExtension.api();
  const envPath = api.environments.getActiveEnvironmentPath(resource);
  const env = await api.environments.resolveEnvironment(envPath);
  return env?.executable.uri?.fsPath;
}

/** Calls `listener` when the Python extension's selected interpreter changes. */
export async function onPythonInterpreterChange(
  getExtension: (id: string) => vscode.Extension<unknown> | undefined,
  listener: () => void,
): Promise<vscode.Disposable | undefined> {
  if (!getExtension(PYTHON_EXTENSION_ID)) {
    return undefined;
  }
  const { PythonExtension } = await import("@vscode/python-extension");
  const api = await PythonExtension.api();
  return api.environments.onDidChangeActiveEnvironmentPath(() => listener());
}

/** How the extension starts the server: `<python> -m readkeeper serve` (stdio). */
export function serverCommand(python: string): { command: string; args: string[] } {
  return { command: python, args: ["-m", "readkeeper", "serve"] };
}

export type ImportCheck =
  | { ok: true; version: string }
  | { ok: false; reason: "no_python" | "not_installed" | "failed"; detail: string };

export type Runner = (
  command: string,
  args: string[],
  timeoutMs: number,
) => Promise<{ code: number | null; stdout: string; stderr: string; spawnError?: string }>;

export const runProcess: Runner = (command, args, timeoutMs) =>
  new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      const err = error as (NodeJS.ErrnoException & { code?: unknown }) | null;
      if (err && typeof err.code === "string") {
        // ENOENT, EACCES...: the interpreter itself could not be started.
        resolve({ code: null, stdout, stderr, spawnError: `${err.code}: ${err.message}` });
        return;
      }
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

const CHECK_SCRIPT =
  "import importlib.util, sys\n" +
  "if importlib.util.find_spec('readkeeper') is None: sys.exit(3)\n" +
  "import readkeeper; print(readkeeper.__version__)";

/** Whether `python -m readkeeper` can work with this interpreter. */
export async function checkImportable(
  python: string,
  run: Runner = runProcess,
  timeoutMs = 20000,
): Promise<ImportCheck> {
  const result = await run(python, ["-c", CHECK_SCRIPT], timeoutMs);
  if (result.spawnError !== undefined) {
    return { ok: false, reason: "no_python", detail: result.spawnError };
  }
  if (result.code === 0) {
    return { ok: true, version: result.stdout.trim() };
  }
  if (result.code === 3) {
    return { ok: false, reason: "not_installed", detail: `readkeeper is not installed for ${python}` };
  }
  return { ok: false, reason: "failed", detail: (result.stderr || result.stdout).trim() };
}

/** The command that installs readkeeper into `python` (shown to the user, and run in a
 * terminal when they accept). */
export function installCommand(python: string): string[] {
  return [python, "-m", "pip", "install", "--upgrade", "readkeeper"];
}

export function shellQuote(args: string[]): string {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

/** The message for a failed check: what happened, and the next thing that will work. */
export function importProblemMessage(python: Interpreter, check: ImportCheck): string {
  if (check.ok) {
    return "";
  }
  const where =
    python.source === "setting"
      ? "the readkeeper.interpreter setting"
      : python.source === "python-extension"
        ? "the Python extension's selected interpreter"
        : "PATH";
  switch (check.reason) {
    case "no_python":
      return (
        `readkeeper could not start Python "${python.command}" (from ${where}): ${check.detail}. ` +
        "Set readkeeper.interpreter to a Python 3.11+ that has readkeeper installed."
      );
    case "not_installed":
      return (
        `readkeeper is not installed for ${python.command} (from ${where}). ` +
        `Install it with: ${shellQuote(installCommand(python.command))}`
      );
    default:
      return (
        `readkeeper failed to import with ${python.command} (from ${where}): ${check.detail}. ` +
        `Reinstall it with: ${shellQuote(installCommand(python.command))}`
      );
  }
}
