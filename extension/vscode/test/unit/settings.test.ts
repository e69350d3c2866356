import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pkg from "../../package.json";
import {
  affectsServer,
  camelToSnake,
  extensionSettings,
  needsRestart,
  SERVER_SETTING_KEYS,
  serverSettings,
} from "../../src/common/settings";

function reader(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

describe("settings", () => {
  it("takes the server's settings from the package.json 'Server' section", () => {
    for (const key of ["maxSizeBytes", "maxTokens", "defaultLimit", "allowedPaths", "tokenEncoding"]) {
      assert.ok(SERVER_SETTING_KEYS.includes(key), key);
    }
    assert.ok(!SERVER_SETTING_KEYS.includes("interpreter"));
    const contributed = pkg.contributes.configuration.flatMap((s) => Object.keys(s.properties));
    for (const key of SERVER_SETTING_KEYS) {
      assert.ok(contributed.includes(`readkeeper.${key}`));
    }
  });

  it("maps camelCase VS Code settings to the server's snake_case names", () => {
    assert.equal(camelToSnake("maxSizeBytes"), "max_size_bytes");
    const settings = serverSettings(
      reader({
        maxSizeBytes: 1024,
        allowedPaths: ["/data"],
        interpreter: "/usr/bin/python3",
        chatSession: "s",
        maxTokens: null,
      }),
    );
    assert.deepEqual(settings, { max_size_bytes: 1024, allowed_paths: ["/data"] });
  });

  it("reads the extension's own settings with defaults", () => {
    assert.deepEqual(extensionSettings(reader({})), {
      interpreter: "",
      chatSession: "vscode-chat",
      diagnosticsForward: true,
      diagnosticsDebounceMs: 300,
      diagnosticsMaxPerFile: 200,
      showChangeNotices: true,
    });
    const s = extensionSettings(reader({ interpreter: " /py ", "diagnostics.debounceMs": -5 }));
    assert.equal(s.interpreter, "/py");
    assert.equal(s.diagnosticsDebounceMs, 0);
  });

  it("restarts for the interpreter, pushes server settings without a restart", () => {
    const event = (...keys: string[]) => ({ affectsConfiguration: (k: string) => keys.includes(k) });
    assert.equal(needsRestart(event("readkeeper.interpreter")), true);
    assert.equal(needsRestart(event("readkeeper.maxTokens")), false);
    assert.equal(affectsServer(event("readkeeper.maxTokens")), true);
    assert.equal(affectsServer(event("readkeeper.chatSession")), false);
  });
});
