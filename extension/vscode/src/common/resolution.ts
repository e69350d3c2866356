// What the search for the server's Python ends in: a Python (a Resolution), or a Problem
// that says what is missing and what to do, with buttons. Shared by the choice of the
// interpreter (environment.ts) and the private environment (privateEnv.ts).

import { describeSource, type Interpreter, MIN_PYTHON, type RunResult, versionText } from "./python";

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

export const RESTART = "run readkeeper: Restart Server (or the Retry button)";

/** No Python found can host the private environment: why each was turned down. */
export function noSuitablePython(rejected: { python: Interpreter; why: string }[]): Problem {
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
export function installProblem(step: string, result: RunResult, root: string): Problem {
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
      `readkeeper could not ${step} (in ${root}): ${why}. The log has the full output. ` +
      `Fix what it names and ${RESTART}; or set readkeeper.interpreter to a Python that has readkeeper installed.`,
    status: `could not ${step}`,
    actions: ["Retry", "Show Log", "Open Setting"],
  };
}

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

/** How the server's Python was found: the setting, a Python that already had readkeeper,
 * or the private environment (reused, created, upgraded, or kept when an upgrade failed). */
export type How = "setting" | "existing" | "reused" | "created" | "upgraded" | "kept";

/** The Python that runs the server, or what is missing. */
export type Resolution =
  | { ok: true; python: Interpreter; version: string; how: How; note?: string }
  | { ok: false; problem: Problem };

