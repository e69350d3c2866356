// extension.ts: the commands, with the editor's API stubbed (every vscodeapi wrapper
// answers with an inert object unless a test says otherwise).

import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import * as fake from "../fakeVscode";
import type { RequestSender } from "../../src/agent/contract";
import * as log from "../../src/common/log";
import { ReadkeeperServer } from "../../src/common/server";
import * as vscodeapi from "../../src/common/vscodeapi";
import { activate } from "../../src/extension";
import { settingsReader } from "../fakeSettings";

/** Anything: every property is a no-op function, so logs, status items and
 * disposables all fit. Never a thenable. */
const inert: unknown = new Proxy(function () {}, {
  get: (_target, name) => (name === "then" ? undefined : () => inert),
  set: () => true,
});

interface Editor {
  commands: Map<string, (...args: unknown[]) => unknown>;
  errors: string[];
  dispose(): void;
}

/** Activates the extension with a running server whose requests go to `client`. */
async function activated(t: TestContext, client: RequestSender, more?: () => void): Promise<Editor> {
  const commands = new Map<string, (...args: unknown[]) => unknown>();
  const errors: string[] = [];
  const api = vscodeapi as unknown as Record<string, unknown>;
  for (const name of Object.keys(api)) {
    if (typeof api[name] === "function") t.mock.method(api, name as never, (() => inert) as never);
  }
  t.mock.method(vscodeapi, "getConfiguration", () => settingsReader({}) as never);
  t.mock.method(vscodeapi, "getWorkspaceFolders", () => []);
  t.mock.method(vscodeapi, "getExtension", () => undefined);
  t.mock.method(vscodeapi, "registerMcpServerDefinitionProvider", () => undefined);
  t.mock.method(vscodeapi, "registerCommand", (name: string, callback: (...args: unknown[]) => unknown) => {
    commands.set(name, callback);
    return inert as never;
  });
  t.mock.method(vscodeapi, "showErrorMessage", async (message: string) => {
    errors.push(message);
    return undefined;
  });
  t.mock.method(vscodeapi, "showWarningMessage", async () => undefined);
  t.mock.method(vscodeapi, "showInformationMessage", async () => undefined);
  t.mock.method(log, "logFileFor", () => undefined);
  t.mock.getter(ReadkeeperServer.prototype, "running", () => client as never);
  more?.();
  const context = {
    subscriptions: [] as { dispose(): unknown }[],
    globalStorageUri: fake.Uri.file("/tmp/readkeeper-test-storage"),
    extension: { packageJSON: { version: "0.1.0" } },
    extensionPath: "/tmp/readkeeper-test-extension",
    extensionUri: fake.Uri.file("/tmp/readkeeper-test-extension"),
  };
  await activate(context as never);
  return { commands, errors, dispose: () => context.subscriptions.forEach((d) => d.dispose()) };
}

const failing = (error: unknown): RequestSender => ({
  sendRequest: async () => {
    throw error;
  },
});

describe("commands", () => {
  for (const [command, method] of [
    ["readkeeper.forget", "readkeeper/forget"],
    ["readkeeper.showStats", "readkeeper/stats"],
  ]) {
    it(`${command} shows a failed request as an error message naming ${method}`, async (t) => {
      const editor = await activated(t, failing({ code: -32601, message: `Method Not Found: ${method}` }));
      t.after(() => editor.dispose());
      await editor.commands.get(command)!();
      assert.deepEqual(editor.errors, [`This readkeeper server does not support ${method}; update readkeeper.`]);
    });

    it(`${command} shows the server's message for any other failure`, async (t) => {
      const editor = await activated(t, failing({ code: -32803, message: "The session is busy.", data: { kind: "busy" } }));
      t.after(() => editor.dispose());
      await editor.commands.get(command)!();
      assert.deepEqual(editor.errors, ["busy: The session is busy."]);
    });
  }
});

describe("Workspace Trust", () => {
  it("restarts the server when the user grants trust, so restricted mode ends", async (t) => {
    const calls: string[] = [];
    let grant: (() => unknown) | undefined;
    const editor = await activated(t, failing(new Error("unused")), () => {
      t.mock.method(vscodeapi, "getWorkspaceFolders", () => [{ uri: fake.Uri.file("/ws"), name: "ws", index: 0 }]);
      t.mock.method(vscodeapi, "isWorkspaceTrusted", () => false);
      t.mock.method(ReadkeeperServer.prototype, "start", async () => void calls.push("start"));
      t.mock.method(ReadkeeperServer.prototype, "restart", async () => void calls.push("restart"));
      t.mock.method(vscodeapi, "onDidGrantWorkspaceTrust", (listener: () => unknown) => {
        grant = listener;
        return { dispose() {} } as never;
      });
    });
    t.after(() => editor.dispose());
    assert.deepEqual(calls, ["start"], "the limited server starts at once");
    assert.ok(grant, "the extension listens for trust being granted");
    grant();
    assert.deepEqual(calls, ["start", "restart"]);
  });
});
