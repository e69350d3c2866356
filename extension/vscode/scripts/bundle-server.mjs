// Builds the readkeeper wheel from this repository and puts it in bundled/, where the
// extension finds it at run time (and the .vsix carries it: see .vscodeignore).
//
//   npm run bundle-server     (`npm run package` runs it first)
//
// Built like `python -m build` builds: the sdist, then the wheel from the unpacked sdist
// (a file the sdist leaves out fails here, not on a user's machine), into a temporary
// folder. The Python is $READKEEPER_BUILD_PYTHON, else the repository's .venv (bash
// tests/run installs `build` and setuptools there), else python3. With setuptools 77+
// in that Python the build uses it (no isolation, no download); otherwise `build`
// fetches the backend into an isolated environment.

import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const EXTENSION = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPO = path.resolve(EXTENSION, "..", "..");
const BUNDLED = path.join(EXTENSION, "bundled");

function fail(message) {
  console.error(`bundle-server: ${message}`);
  process.exit(1);
}

function pickPython() {
  if (process.env.READKEEPER_BUILD_PYTHON) return process.env.READKEEPER_BUILD_PYTHON;
  const venv =
    process.platform === "win32"
      ? path.join(REPO, ".venv", "Scripts", "python.exe")
      : path.join(REPO, ".venv", "bin", "python");
  if (fs.existsSync(venv)) return venv;
  return process.platform === "win32" ? "python" : "python3";
}

const python = pickPython();
const run = (args, options = {}) => spawnSync(python, args, { encoding: "utf8", ...options });

const hasBuild = run(["-c", "import build"]);
if (hasBuild.error) fail(`cannot run ${python}: ${hasBuild.error.message}`);
if (hasBuild.status !== 0) {
  fail(`${python} has no \`build\` module: ${python} -m pip install build (or bash tests/run, which installs it)`);
}
const modernSetuptools =
  run(["-c", "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 77)"]).status === 0;

const out = fs.mkdtempSync(path.join(os.tmpdir(), "readkeeper-wheel-"));
try {
  const args = ["-m", "build", ...(modernSetuptools ? ["--no-isolation"] : []), "--outdir", out, REPO];
  const built = run(args, { cwd: out, stdio: ["ignore", "pipe", "pipe"] });
  if (built.status !== 0) {
    fail(`${python} ${args.join(" ")} failed:\n${(built.stdout ?? "").slice(-3000)}\n${(built.stderr ?? "").slice(-3000)}`);
  }
  const wheels = fs.readdirSync(out).filter((f) => /^readkeeper-.*\.whl$/.test(f));
  if (wheels.length !== 1) fail(`expected one wheel in ${out}, found: ${wheels.join(", ") || "none"}`);
  fs.mkdirSync(BUNDLED, { recursive: true });
  for (const old of fs.readdirSync(BUNDLED)) {
    if (/^readkeeper-.*\.whl$/.test(old)) fs.rmSync(path.join(BUNDLED, old));
  }
  const target = path.join(BUNDLED, wheels[0]);
  fs.copyFileSync(path.join(out, wheels[0]), target);
  const kb = Math.round(fs.statSync(target).size / 1024);
  console.log(`bundle-server: ${path.relative(EXTENSION, target)} (${kb} KB, built with ${python})`);
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
