import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as fake from "../fakeVscode";
import {
  DiagnosticsForwarder,
  selectDiagnostics,
  type Timers,
  toLspDiagnostic,
} from "../../src/agent/diagnostics";
import type { DidChangeDiagnosticsParams } from "../../src/agent/contract";

/** Timers run by hand: `advance(ms)` fires what is due. */
class ManualTimers implements Timers {
  now = 0;
  private next = 1;
  private readonly due = new Map<number, { at: number; callback: () => void }>();
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.due.set(id, { at: this.now + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  advance(ms: number): void {
    this.now += ms;
    for (const [id, timer] of [...this.due]) {
      if (timer.at <= this.now) {
        this.due.delete(id);
        timer.callback();
      }
    }
  }
}

class FakeSource {
  diagnostics = new Map<string, fake.Diagnostic[]>();
  versions = new Map<string, number>();
  private listener: ((uris: readonly fake.Uri[]) => void) | undefined;
  get(uri: fake.Uri) {
    return (this.diagnostics.get(uri.toString()) ?? []) as never[];
  }
  all() {
    return [...this.diagnostics].map(([key, ds]) => [fake.Uri.parse(key), ds]) as never;
  }
  version(uri: fake.Uri) {
    return this.versions.get(uri.toString());
  }
  onDidChange(listener: (uris: readonly fake.Uri[]) => void) {
    this.listener = listener;
    return { dispose: () => (this.listener = undefined) };
  }
  set(uri: fake.Uri, ...ds: fake.Diagnostic[]) {
    this.diagnostics.set(uri.toString(), ds);
    this.listener?.([uri]);
  }
  get listening() {
    return this.listener !== undefined;
  }
}

const error = (line: number, message: string) =>
  new fake.Diagnostic(new fake.Range(line, 0, line, 5), message, fake.DiagnosticSeverity.Error);
const warning = (line: number, message: string) =>
  new fake.Diagnostic(new fake.Range(line, 0, line, 5), message, fake.DiagnosticSeverity.Warning);

function setup(debounceMs = 300, maxPerFile = 50) {
  const sent: DidChangeDiagnosticsParams[] = [];
  const source = new FakeSource();
  const timers = new ManualTimers();
  const forwarder = new DiagnosticsForwarder((p) => sent.push(p), source as never, { debounceMs, maxPerFile }, timers);
  return { sent, source, timers, forwarder };
}

describe("diagnostics conversion", () => {
  it("maps VS Code severities to LSP's and keeps source and code", () => {
    const d = error(3, "undefined name 'x'");
    d.source = "Pylance";
    d.code = { value: "reportUndefinedVariable", target: {} };
    assert.deepEqual(toLspDiagnostic(d as never), {
      range: { start: { line: 3, character: 0 }, end: { line: 3, character: 5 } },
      message: "undefined name 'x'",
      severity: 1,
      source: "Pylance",
      code: "reportUndefinedVariable",
    });
    const hint = new fake.Diagnostic(new fake.Range(0, 0, 0, 1), "h", fake.DiagnosticSeverity.Hint);
    assert.equal(toLspDiagnostic(hint as never).severity, 4);
  });

  it("keeps errors first, then by position, up to the cap", () => {
    const picked = selectDiagnostics([warning(1, "w1"), error(9, "e9"), error(2, "e2")] as never, 2);
    assert.deepEqual(picked.map((d) => d.message), ["e2", "e9"]);
  });
});

describe("diagnostics forwarding", () => {
  it("sends a snapshot on start, of file URIs only", () => {
    const { sent, source, forwarder } = setup();
    source.diagnostics.set(fake.Uri.file("/ws/a.py").toString(), [error(0, "e")]);
    source.diagnostics.set(fake.Uri.parse("git:///ws/a.py").toString(), [error(0, "e")]);
    forwarder.start();
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0].items.map((i) => i.uri), ["file:///ws/a.py"]);
  });

  it("debounces a burst into one notification with the latest state", () => {
    const { sent, source, timers, forwarder } = setup(300);
    forwarder.start();
    const a = fake.Uri.file("/ws/a.py");
    const b = fake.Uri.file("/ws/b.py");
    source.set(a, error(1, "first"));
    timers.advance(100);
    source.set(b, warning(2, "w"));
    timers.advance(100);
    source.set(a, error(1, "second"));
    timers.advance(299);
    assert.equal(sent.length, 0, "nothing is sent while the burst goes on");
    timers.advance(1);
    assert.equal(sent.length, 1);
    const byUri = Object.fromEntries(sent[0].items.map((i) => [i.uri, i.diagnostics.map((d) => d.message)]));
    assert.deepEqual(byUri, { "file:///ws/a.py": ["second"], "file:///ws/b.py": ["w"] });
  });

  it("ties each file to the version of its open document", () => {
    const { sent, source, timers, forwarder } = setup(0);
    forwarder.start();
    const a = fake.Uri.file("/ws/a.py");
    const closed = fake.Uri.file("/ws/closed.py");
    source.versions.set(a.toString(), 12);
    source.set(a, error(0, "e"));
    source.set(closed, error(0, "e"));
    timers.advance(0);
    const items = Object.fromEntries(sent[0].items.map((i) => [i.uri, i]));
    assert.equal(items["file:///ws/a.py"].version, 12);
    assert.equal("version" in items["file:///ws/closed.py"], false);
  });

  it("sends cleared diagnostics as an empty list", () => {
    const { sent, source, timers, forwarder } = setup(10);
    forwarder.start();
    const a = fake.Uri.file("/ws/a.py");
    source.set(a, error(0, "e"));
    timers.advance(10);
    source.set(a);
    timers.advance(10);
    assert.equal(sent.length, 2);
    assert.deepEqual(sent[1].items, [{ uri: "file:///ws/a.py", diagnostics: [] }]);
  });

  it("stops listening and drops pending changes on dispose", () => {
    const { sent, source, timers, forwarder } = setup(10);
    forwarder.start();
    source.set(fake.Uri.file("/ws/a.py"), error(0, "e"));
    forwarder.dispose();
    timers.advance(100);
    assert.equal(sent.length, 0);
    assert.equal(source.listening, false);
  });

  it("a failing connection does not break forwarding", () => {
    const source = new FakeSource();
    const timers = new ManualTimers();
    let calls = 0;
    const forwarder = new DiagnosticsForwarder(
      () => {
        calls += 1;
        return Promise.reject(new Error("connection closed"));
      },
      source as never,
      { debounceMs: 0, maxPerFile: 5 },
      timers,
    );
    forwarder.start();
    source.set(fake.Uri.file("/ws/a.py"), error(0, "e"));
    timers.advance(0);
    source.set(fake.Uri.file("/ws/a.py"), error(0, "f"));
    timers.advance(0);
    assert.equal(calls, 2);
  });
});
