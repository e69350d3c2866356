import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as fake from "../fakeVscode";
import { statsMarkdown } from "../../src/agent/render";
import { stateSentence, StatsDocument, StatusBar } from "../../src/common/status";
import * as vscodeapi from "../../src/common/vscodeapi";

describe("status bar", () => {
  it("shows the server state, with an error background on error", (t) => {
    const item: { text: string; tooltip: unknown; backgroundColor: unknown; show(): void; dispose(): void } = { text: "", tooltip: undefined, backgroundColor: undefined, show() {}, dispose() {} };
    t.mock.method(vscodeapi, "createStatusBarItem", () => item);
    const bar = new StatusBar();
    assert.equal(item.text, "$(circle-slash) readkeeper");
    bar.setState("running");
    assert.equal(item.text, "$(eye) readkeeper");
    assert.equal(item.backgroundColor, undefined);
    bar.setState("error", "readkeeper not installed");
    assert.equal(item.text, "$(error) readkeeper");
    assert.equal((item.backgroundColor as unknown as fake.ThemeColor).id, "statusBarItem.errorBackground");
    assert.match((item.tooltip as fake.MarkdownString).value, /\*\*error\*\* \(readkeeper not installed\)/);
    bar.setStats(statsMarkdown({ total: { reads: 4 } }, "s"));
    assert.match((item.tooltip as fake.MarkdownString).value, /\| reads \| – \| 4 \|/);
  });

  it("lets its hover run only its own commands, whatever a file name in the stats says", (t) => {
    const item: { tooltip: unknown; show(): void; dispose(): void } = { tooltip: undefined, show() {}, dispose() {} };
    t.mock.method(vscodeapi, "createStatusBarItem", () => item);
    const bar = new StatusBar();
    const planted = "/w/[x](command:workbench.action.terminal.sendSequence?%7B%7D).py";
    bar.setStats(statsMarkdown({ total: { tokens_by_file: { [planted]: 9 } } } as never, "s"));
    const tooltip = item.tooltip as fake.MarkdownString;
    assert.deepEqual(tooltip.isTrusted, {
      enabledCommands: ["readkeeper.showStats", "readkeeper.restart", "readkeeper.showLog"],
    });
  });

  it("flashes change notices in the status bar, not in a popup", (t) => {
    t.mock.method(vscodeapi, "createStatusBarItem", () => ({ show() {}, dispose() {} }));
    const messages: [string, number][] = [];
    t.mock.method(vscodeapi, "setStatusBarMessage", (text: string, ms: number) => {
      messages.push([text, ms]);
      return { dispose() {} };
    });
    new StatusBar().flashChanges(2);
    assert.deepEqual(messages, [["$(history) readkeeper: 2 files the agent read changed", 5000]]);
  });

  it("says the state as a sentence, never \"readkeeper is error.\"", () => {
    assert.equal(
      stateSentence("error", "offline: could not install the server's dependencies"),
      "readkeeper is not running: offline: could not install the server's dependencies. Its log says why; readkeeper: Restart Server tries again.",
    );
    assert.equal(stateSentence("starting"), "readkeeper is still starting. Try again in a moment.");
    assert.match(stateSentence("stopped"), /^readkeeper is not running\. Run readkeeper: Restart Server/);
    for (const state of ["running", "starting", "stopped", "error"] as const) {
      assert.doesNotMatch(stateSentence(state, "x"), /is (error|stopped|starting)\b/);
    }
  });

  it("shows stats in a read-only virtual document, refreshed in place", () => {
    const doc = new StatsDocument();
    assert.equal(doc.uri.scheme, "readkeeper-stats");
    const fired: unknown[] = [];
    doc.onDidChange((uri) => fired.push(uri));
    doc.set("**readkeeper** stats");
    assert.equal(doc.provideTextDocumentContent(), "**readkeeper** stats");
    assert.deepEqual(fired, [doc.uri]);
    doc.dispose();
  });
});
