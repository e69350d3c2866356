import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pkg from "../../package.json";
import {
  affectsServer,
  camelToSnake,
  extensionSettings,
  LIMITS,
  limitValue,
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
  "maxSizeBytes", "maxTokens", "defaultLimit", "maxLineChars", "outlineOverTokens", "readAhead",
  "lineNumbers", "maxDocumentBytes", "imageMaxEdge", "imageMaxTokens", "imageMaxBase64Bytes", "imageMaxPixels",
  "pdfInline", "pdfMaxPages", "pdfWholeMaxPages", "pdfWholeMaxBytes", "notebookMaxOutputChars",
  "attachmentsBudgetTokens", "attachmentsTimeoutMs", "memoryMaxLines", "memoryMaxBytes",
  "deltaMaxPercent", "mentionMaxTokens", "memoryMaxTokens", "diagnosticsMaxTokens",
  "changesMaxTokens", "changesTotalMaxTokens", "selectionMaxTokens", "gitStatusMaxTokens",
  "gitTimeoutMs", "editDiagnosticsWaitMs", "progressAfterMs", "editOpenBuffers", "editApplyTimeoutMs",
  "newFileLineEnding", "watch",
  "watchExclude", "watchDebounceMs", "watchPollIntervalMs", "watchForcePolling", "lineFormat",
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

// Every whole-number setting, reviewed: a limit says which way is tighter, so that a
// workspace may only tighten it (SECURITY.md). A new one fails here until it is listed
// (the server's get it from server/settings.py's `tighter`, via limits.json).
const TIGHTER_LOWER = [
  "maxSizeBytes", "maxTokens", "defaultLimit", "maxLineChars", "outlineOverTokens",
  "maxDocumentBytes", "imageMaxEdge", "imageMaxTokens", "imageMaxBase64Bytes", "imageMaxPixels",
  "pdfMaxPages", "pdfWholeMaxPages", "pdfWholeMaxBytes", "notebookMaxOutputChars",
  "attachmentsBudgetTokens", "attachmentsTimeoutMs", "memoryMaxLines", "memoryMaxBytes",
  "mentionMaxTokens", "memoryMaxTokens", "diagnosticsMaxTokens", "changesMaxTokens",
  "changesTotalMaxTokens", "selectionMaxTokens", "gitStatusMaxTokens", "gitTimeoutMs",
  "editDiagnosticsWaitMs", "editApplyTimeoutMs", "diagnostics.maxPerFile",
]; // prettier-ignore
const TIGHTER_HIGHER = ["watchDebounceMs", "watchPollIntervalMs", "diagnostics.debounceMs"];
// A preference, not a protection: the diff and the whole file are both cut by maxTokens;
// progressAfterMs only decides when progress of work bounded anyway is shown.
const NOT_A_LIMIT = ["deltaMaxPercent", "progressAfterMs"];
// Flags: on, pdfInline adds a PDF's base64 to its read and readAhead spends CPU between
// calls (off is tighter); the others turn a feature or its display on or off without
// raising what one answer may cost.
const FLAG_LIMITS = ["pdfInline", "readAhead"];
const NOT_A_LIMIT_FLAGS = ["watch", "watchForcePolling", "diagnostics.forward", "showChangeNotices"];

type NumberSchema = { type?: string; default?: number; minimum?: number };
const numbers = (): [string, NumberSchema][] =>
  contributed()
    .map(([key, schema]) => [key.slice("readkeeper.".length), schema as NumberSchema] as [string, NumberSchema])
    .filter(([, schema]) => schema.type === "integer" || schema.type === "number");

// A value on the loose side of `base`, and one on the strict side (still valid).
const looser = (key: string, base: number) => (LIMITS[key] === "lower" ? base * 1000 : 1);
const stricter = (key: string, base: number) => (LIMITS[key] === "lower" ? Math.ceil(base / 2) : base * 2);

describe("a workspace may only tighten a limit", () => {
  it("every whole-number setting is a limit that says which way is tighter, or reviewed as none", () => {
    const keys = numbers().map(([key]) => key);
    assert.deepEqual([...keys].sort(), [...TIGHTER_LOWER, ...TIGHTER_HIGHER, ...NOT_A_LIMIT].sort());
    const flags = contributed().filter(([, schema]) => (schema as NumberSchema).type === "boolean");
    assert.deepEqual(flags.map(([key]) => key.slice("readkeeper.".length)).sort(), [...FLAG_LIMITS, ...NOT_A_LIMIT_FLAGS].sort());
    assert.deepEqual(Object.keys(LIMITS).sort(), [...TIGHTER_LOWER, ...TIGHTER_HIGHER, ...FLAG_LIMITS].sort());
    for (const key of [...TIGHTER_LOWER, ...FLAG_LIMITS]) assert.equal(LIMITS[key], "lower", key);
    for (const key of TIGHTER_HIGHER) assert.equal(LIMITS[key], "higher", key);
  });

  it("takes a workspace's value of every limit only when it is at least as strict as the user's", () => {
    for (const [key, schema] of numbers().filter(([k]) => k in LIMITS)) {
      const user = stricter(key, schema.default ?? 1);
      // looser than the user's: the user's stands, at either workspace level
      assert.equal(limitValue(settingsReader({ [key]: user }, { [key]: looser(key, user) }), key), user, key);
      // stricter: the workspace's
      const tight = stricter(key, user);
      assert.equal(limitValue(settingsReader({ [key]: user }, { [key]: tight }), key), tight, key);
      // no user value: measured against the default
      const noUser = settingsReader({}, { [key]: looser(key, schema.default ?? 1) });
      assert.equal(limitValue(noUser, key), schema.default, key);
      // a value the server would refuse (and then fall back to its looser default) never counts
      for (const bad of [0, -1, "99999999", null, true]) {
        if (typeof bad === "number" && bad >= (schema.minimum ?? -Infinity)) continue;
        assert.equal(limitValue(settingsReader({ [key]: user }, { [key]: bad }), key), user, `${key}=${bad}`);
      }
    }
  });

  it("lets a workspace turn pdfInline off, never on; restricted mode keeps it off", () => {
    const value = (user: Record<string, unknown>, ws: Record<string, unknown>, trusted = true) =>
      limitValue(settingsReader(user, ws), "pdfInline", trusted);
    assert.equal(value({ pdfInline: false }, { pdfInline: true }), false);
    assert.equal(value({}, { pdfInline: true }), false);
    assert.equal(value({ pdfInline: true }, { pdfInline: false }), false);
    assert.equal(value({ pdfInline: true }, { pdfInline: "yes" }), true);
    assert.equal(value({ pdfInline: true }, {}, false), false);
    assert.equal(value({ pdfInline: true }, {}, true), true);
  });

  it("sends the server the stricter value, and the extension uses it for its own limits", () => {
    const user = { maxTokens: 1000, imageMaxPixels: 1_000_000, watchPollIntervalMs: 2000 };
    const workspace = { maxTokens: 10_000_000, imageMaxPixels: 10 ** 12, watchPollIntervalMs: 1, maxLineChars: 50 };
    assert.deepEqual(serverSettings(settingsReader(user, workspace)), {
      max_tokens: 1000,
      image_max_pixels: 1_000_000,
      watch_poll_interval_ms: 2000,
      max_line_chars: 50,
    });
    const own = extensionSettings(
      settingsReader({}, { "diagnostics.debounceMs": 0, "diagnostics.maxPerFile": 100_000 }),
    );
    assert.equal(own.diagnosticsDebounceMs, 300);
    assert.equal(own.diagnosticsMaxPerFile, 200);
  });

  it("in restricted mode no source makes a limit looser than its default", () => {
    for (const [key, schema] of numbers().filter(([k]) => k in LIMITS)) {
      const loose = looser(key, schema.default ?? 1);
      for (const config of [settingsReader({ [key]: loose }), settingsReader({}, { [key]: loose })]) {
        assert.equal(limitValue(config, key, false), schema.default, key);
      }
      // the control: trusted, the user may loosen a limit
      assert.equal(limitValue(settingsReader({ [key]: loose }), key, true), loose, key);
      const tight = stricter(key, schema.default ?? 1);
      assert.equal(limitValue(settingsReader({ [key]: tight }), key, false), tight, key);
    }
  });
});
