// Python interpreters: where they come from (the `readkeeper.interpreter` setting, the
// Python extension, PATH), what one can do (its version, whether it can make a virtual
// environment, which readkeeper it has), and running them.

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as vscode from "vscode";

export const PYTHON_EXTENSION_ID = "ms-python.python";

/** The oldest Python readkeeper runs on (pyproject.toml's `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export type InterpreterSource = "setting" | "python-extension" | "path" | "private-env";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
}

export function describeSource(source: InterpreterSource): string {
  switch (source) {
    case "setting":
      return "the readkeeper.interpreter setting";
    case "python-extension":
      return "the Python extension's selected interpreter";
    case "path":
      return "PATH";
    case "private-env":
      return "readkeeper's own environment";
  }
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

/** Interpreters worth trying when the setting is empty, in order: the Python extension's
 * selection, then `python3` and `python` on PATH (duplicates dropped). A broken Python
 * extension is skipped, never fatal. */
export async function candidateInterpreters(
  pythonExtension: () => Promise<string | undefined>,
  platform: NodeJS.Platform = process.platform,
): Promise<Interpreter[]> {
  const found: Interpreter[] = [];
  try {
    const selected = await pythonExtension();
    if (selected) found.push({ command: selected, source: "python-extension" });
  } catch {
    // a Python extension that fails to activate must not stop readkeeper
  }
  const onPath = platform === "win32" ? ["python", "py"] : ["python3", "python"];
  for (const command of onPath) {
    if (!found.some((c) => c.command === command)) found.push({ command, source: "path" });
  }
  return found;
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

/** How the extension starts the server: `<python> -P -m readkeeper serve` (stdio). It
 * runs in the workspace, and `-m` would put that folder first on sys.path: `-P` (Python
 * 3.11+, which readkeeper needs) keeps a repository's own `readkeeper` package, or a
 * `json.py`, from being what runs. */
export function serverCommand(python: string): { command: string; args: string[] } {
  return { command: python, args: ["-P", "-m", "readkeeper", "serve"] };
}

// --- running processes ----------------------------------------------------------------

export interface RunOptions {
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Each line of output (stdout and stderr) as it arrives. */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The process could not be started (ENOENT, EACCES...). */
  spawnError?: string;
  timedOut?: boolean;
  cancelled?: boolean;
}

export type Runner = (command: string, args: string[], options: RunOptions) => Promise<RunResult>;

/** The environment of every process the extension starts, the server included: PATH
 * without its empty and relative entries, which name the folder a program runs in (the
 * workspace, for the server), so a trailing ':' cannot make a repository's own `python3`
 * or `git` run; and PYTHONSAFEPATH, so no Python 3.11+ puts that folder on sys.path
 * (older ones ignore it: the probes run in a private empty folder). */
export function safeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const key = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
  const entries = (env[key] ?? "").split(path.delimiter);
  const kept = entries.filter((entry) => path.isAbsolute(entry)).join(path.delimiter);
  return { ...env, [key]: kept, PYTHONSAFEPATH: "1" };
}

let quietFolder: string | undefined;

/** An empty folder only this user can write, for processes that need no other: a Python
 * started in the shared temp folder would import a `json.py` another user left there. */
export function neutralFolder(): string {
  if (!quietFolder || !fs.existsSync(quietFolder)) {
    quietFolder = fs.mkdtempSync(path.join(os.tmpdir(), "readkeeper-cwd-"));
  }
  return quietFolder;
}

export const runProcess: Runner = (command, args, options) =>
  new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let settled = false;
    const child = spawn(command, args, {
      cwd: options.cwd ?? neutralFolder(),
      env: safeEnv(options.env ?? process.env),
      windowsHide: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const pending = { out: "", err: "" };
    const feed = (which: "out" | "err", chunk: string) => {
      if (!options.onLine) return;
      const lines = (pending[which] + chunk).split(/\r?\n/);
      pending[which] = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) options.onLine(line);
    };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      feed("out", chunk);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      feed("err", chunk);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill();
    }, options.timeoutMs);
    const onAbort = () => child.kill();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (result: RunResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      for (const rest of [pending.out, pending.err]) if (rest.trim()) options.onLine?.(rest);
      resolve(result);
    };
    child.on("error", (error: NodeJS.ErrnoException) =>
      finish({ code: null, stdout, stderr, spawnError: `${error.code ?? "error"}: ${error.message}` }),
    );
    child.on("close", (code) =>
      finish({ code, stdout, stderr, timedOut, cancelled: options.signal?.aborted ?? false }),
    );
  });

// --- what an interpreter can do ---------------------------------------------------------

export interface PythonInfo {
  executable: string;
  version: [number, number, number];
  /** `venv` imports (Debian and Ubuntu ship it apart, as python3-venv). */
  venv: boolean;
  ensurepip: boolean;
  /** pip's version when pip is importable. */
  pip?: string;
  /** readkeeper's `__version__`, when it imports. */
  readkeeper?: string;
  /** Why readkeeper is there but does not import (a dependency missing...). */
  readkeeperError?: string;
}

export type Probe = { ok: true; info: PythonInfo } | { ok: false; detail: string };

const PROBE_SCRIPT = `
import importlib.util, json, sys
info = {"executable": sys.executable, "version": list(sys.version_info[:3])}
def has(name):
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False
info["venv"] = has("venv")
info["ensurepip"] = has("ensurepip")
try:
    import pip
    info["pip"] = pip.__version__
except Exception:
    pass
if has("readkeeper"):
    try:
        import readkeeper
        info["readkeeper"] = readkeeper.__version__
    except Exception as error:
        info["readkeeperError"] = f"{type(error).__name__}: {error}"
print(json.dumps(info))
`;

/** Runs `python` once to learn what it is and what it has. Runs in a neutral folder, so a
 * workspace's own `readkeeper` folder is never what gets imported. */
export async function probePython(python: string, run: Runner = runProcess, timeoutMs = 30000): Promise<Probe> {
  const result = await run(python, ["-c", PROBE_SCRIPT], { timeoutMs, cwd: neutralFolder() });
  if (result.spawnError !== undefined) {
    return { ok: false, detail: `could not run it (${result.spawnError})` };
  }
  if (result.timedOut) {
    return { ok: false, detail: `it did not answer within ${timeoutMs / 1000} s` };
  }
  const last = result.stdout.trim().split("\n").pop() ?? "";
  try {
    const info = JSON.parse(last) as PythonInfo;
    if (Array.isArray(info.version) && typeof info.executable === "string") {
      return { ok: true, info };
    }
  } catch {
    // not our JSON: Python 2, or a wrapper that printed something else
  }
  const said = (result.stderr || result.stdout).trim().split("\n").slice(-2).join(" ");
  return { ok: false, detail: `it is not a Python 3 that readkeeper can use (exit ${result.code}${said ? `: ${said}` : ""})` };
}

export function versionText(version: readonly number[]): string {
  return version.join(".");
}

export function isSupportedPython(info: PythonInfo): boolean {
  const [major, minor] = info.version;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** pip can install into another environment (`pip --python`) from 22.3 on. */
export function pipCanTarget(info: PythonInfo): boolean {
  return info.pip !== undefined && compareVersions(info.pip, "22.3") >= 0;
}

/** Compares two version strings like "0.1.0", "0.2.0rc1", "1.0.post1" (PEP 440's common
 * cases): release numbers first; at equal releases a pre-release or dev release sorts
 * below the release and a post-release above it. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): { release: number[]; rank: number; extra: number } => {
    const match = /^v?(\d+(?:\.\d+)*)(?:[.-]?(a|b|rc|c|alpha|beta|pre|preview|dev|post)\.?(\d*))?/i.exec(v.trim());
    if (!match) return { release: [], rank: 0, extra: 0 };
    const tag = (match[2] ?? "").toLowerCase();
    const rank = tag === "" ? 0 : tag === "post" ? 1 : tag === "dev" ? -2 : -1;
    return { release: match[1].split(".").map(Number), rank, extra: Number(match[3] || 0) };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const d = (x.release[i] ?? 0) - (y.release[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.rank !== y.rank) return Math.sign(x.rank - y.rank);
  return Math.sign(x.extra - y.extra);
}

export function shellQuote(args: string[]): string {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}
