// One VS Code window at a time sets up the private environment (windows share the
// extension's global storage): a lock folder, taken over when its owner died or when it
// is older than the longest setup.

import * as fs from "node:fs";
import * as path from "node:path";

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

