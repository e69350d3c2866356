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
  USER_ONLY_KEYS,
} from "../../src/common/settings";
import { settingsReader } from "../fakeSettings";

const reader = (values: Record<string, unknown>) => settingsReader(values);

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

// Every contributed setting, classified once. A user-only one widens the sandbox, names a
// program, or names data to load: only the user may set it (SECURITY.md). A new setting
// fails this test until it is classified here, and a user-only one until package.json
// gives it a user scope (server settings get it from server/settings.py's `risk`).
const USER_ONLY = ["interpreter", "allowedPaths", "watcher", "tokenEncoding"];
const HARMLESS = [
  // the extension's own
  "chatSession", "diagnostics.forward", "diagnostics.debounceMs", "diagnostics.maxPerFile",
  "showChangeNotices", "trace.server",
  // the server's (caps and budgets, formats, the watcher's timing and exclusions)
  "maxSizeBytes", "maxTokens", "defaultLimit", "maxLineChars", "outlineOverTokens", "lineNumbers",
  "maxDocumentBytes", "imageMaxEdge", "imageMaxTokens", "imageMaxBase64Bytes", "imageMaxPixels",
  "pdfInline", "pdfMaxPages", "pdfWholeMaxPages", "pdfWholeMaxBytes", "notebookMaxOutputChars",
  "attachmentsBudgetTokens", "attachmentsTimeoutMs", "memoryMaxLines", "memoryMaxBytes",
  "deltaMaxPercent", "mentionMaxTokens", "memoryMaxTokens", "diagnosticsMaxTokens",
  "changesMaxTokens", "changesTotalMaxTokens", "selectionMaxTokens", "gitStatusMaxTokens",
  "gitTimeoutMs", "editDiagnosticsWaitMs", "editOpenBuffers", "newFileLineEnding", "watch",
  "watchExclude", "watchDebounceMs", "watchPollIntervalMs", "watchForcePolling",
]; // prettier-ignore

type Schema = { scope?: string };
const contributed = (): [string, Schema][] =>
  pkg.contributes.configuration.flatMap((s) => Object.entries(s.properties as unknown as Record<string, Schema>));

describe("settings only the user may set", () => {
  it("every contributed setting is classified, and every user-only one is machine-scoped", () => {
    const keys = contributed().map(([key]) => key.slice("readkeeper.".length));
    assert.deepEqual([...keys].sort(), [...USER_ONLY, ...HARMLESS].sort());
    for (const [key, schema] of contributed()) {
      const name = key.slice("readkeeper.".length);
      if (USER_ONLY.includes(name)) {
        assert.ok(schema.scope === "machine" || schema.scope === "application", `${key}: ${schema.scope}`);
      } else {
        // "machine-overridable" or none would let a workspace set it, which is fine here
        assert.ok(schema.scope !== "machine" && schema.scope !== "application", `${key} is harmless`);
      }
    }
    assert.deepEqual([...USER_ONLY_KEYS].sort(), [...USER_ONLY].sort());
  });

  it("Restricted Mode is a limited mode that ignores every user-only setting's workspace value", () => {
    const untrusted = pkg.capabilities.untrustedWorkspaces as {
      supported: unknown;
      description?: string;
      restrictedConfigurations?: string[];
    };
    assert.equal(untrusted.supported, "limited");
    assert.match(untrusted.description ?? "", /git status/);
    assert.deepEqual(
      [...(untrusted.restrictedConfigurations ?? [])].sort(),
      USER_ONLY.map((k) => `readkeeper.${k}`).sort(),
    );
  });

  it("reads a user-only setting from the user's value only, even when VS Code merges a workspace's in", () => {
    const user = { allowedPaths: ["/home/me/notes"], interpreter: "/usr/bin/python3", maxTokens: 1000 };
    const workspace = {
      allowedPaths: ["/"],
      interpreter: "./evil/python",
      watcher: "watchman",
      tokenEncoding: "cl100k_base",
      maxTokens: 500,
    };
    const config = settingsReader(user, workspace);
    assert.deepEqual(serverSettings(config), { allowed_paths: ["/home/me/notes"], max_tokens: 500 });
    assert.equal(extensionSettings(config).interpreter, "/usr/bin/python3");
    const noUserValue = settingsReader({}, workspace);
    assert.deepEqual(serverSettings(noUserValue), { max_tokens: 500 });
    assert.equal(extensionSettings(noUserValue).interpreter, "");
  });

  it("sends no user-only setting at all in restricted mode", () => {
    const config = settingsReader({ allowedPaths: ["/home/me/notes"], watcher: "polling", maxTokens: 9 });
    assert.deepEqual(serverSettings(config, false), { max_tokens: 9 });
  });
});
