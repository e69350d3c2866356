import assert from "node:assert/strict";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  checkImportable,
  chooseInterpreter,
  expandSetting,
  importProblemMessage,
  installCommand,
  type Runner,
} from "../../src/python";

describe("interpreter choice", () => {
  it("uses the readkeeper.interpreter setting first", async () => {
    let asked = false;
    const choice = await chooseInterpreter({
      setting: "${workspaceFolder}/.venv/bin/python",
      workspaceFolder: "/ws",
      pythonExtension: async () => {
        asked = true;
        return "/from/extension/python";
      },
    });
    assert.deepEqual(choice, { command: "/ws/.venv/bin/python", source: "setting" });
    assert.equal(asked, false, "the Python extension is not consulted when the setting is set");
  });

  it("then the Python extension's selected interpreter", async () => {
    const choice = await chooseInterpreter({
      setting: "  ",
      pythonExtension: async () => "/envs/py311/bin/python",
    });
    assert.deepEqual(choice, { command: "/envs/py311/bin/python", source: "python-extension" });
  });

  it("then python3, also when the Python extension is absent or broken", async () => {
    const absent = await chooseInterpreter({ setting: "", pythonExtension: async () => undefined });
    assert.deepEqual(absent, { command: "python3", source: "default" });
    const broken = await chooseInterpreter({
      setting: "",
      pythonExtension: async () => {
        throw new Error("python extension failed to activate");
      },
    });
    assert.deepEqual(broken, { command: "python3", source: "default" });
  });

  it("expands ~, ${userHome} and relative paths in the setting", () => {
    assert.equal(expandSetting("~/py/bin/python"), path.join(os.homedir(), "py/bin/python"));
    assert.equal(expandSetting("${userHome}/x"), `${os.homedir()}/x`);
    assert.equal(expandSetting("./.venv/bin/python", "/ws"), "/ws/.venv/bin/python");
    assert.equal(expandSetting("python3.12", "/ws"), "python3.12");
  });
});

describe("importability check", () => {
  const runner =
    (result: Awaited<ReturnType<Runner>>): Runner =>
    async () =>
      result;

  it("reports the version when readkeeper imports", async () => {
    const check = await checkImportable("py", runner({ code: 0, stdout: "0.1.0\n", stderr: "" }));
    assert.deepEqual(check, { ok: true, version: "0.1.0" });
  });

  it("tells a missing package from a missing interpreter from a broken install", async () => {
    const missing = await checkImportable("py", runner({ code: 3, stdout: "", stderr: "" }));
    assert.equal(missing.ok || missing.reason, "not_installed");
    const noPython = await checkImportable(
      "py",
      runner({ code: null, stdout: "", stderr: "", spawnError: "ENOENT: spawn py" }),
    );
    assert.equal(noPython.ok || noPython.reason, "no_python");
    const broken = await checkImportable(
      "py",
      runner({ code: 1, stdout: "", stderr: "ImportError: No module named pygls" }),
    );
    assert.equal(broken.ok || broken.reason, "failed");
    assert.match(broken.ok ? "" : broken.detail, /pygls/);
  });

  it("runs a real interpreter: a missing one is no_python", async () => {
    const check = await checkImportable("/nonexistent/bin/python3");
    assert.equal(check.ok || check.reason, "no_python");
  });

  it("offers the install command in the message, never a silent failure", () => {
    const python = { command: "/opt/py/bin/python", source: "python-extension" as const };
    const message = importProblemMessage(python, {
      ok: false,
      reason: "not_installed",
      detail: "",
    });
    assert.match(message, /not installed for \/opt\/py\/bin\/python/);
    assert.match(message, /Python extension's selected interpreter/);
    assert.ok(message.includes("/opt/py/bin/python -m pip install --upgrade readkeeper"));
    assert.deepEqual(installCommand("python3"), ["python3", "-m", "pip", "install", "--upgrade", "readkeeper"]);
    const noPython = importProblemMessage(
      { command: "python3", source: "default" },
      { ok: false, reason: "no_python", detail: "ENOENT" },
    );
    assert.match(noPython, /Set readkeeper.interpreter/);
  });
});
