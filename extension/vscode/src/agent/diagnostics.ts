// Forwards the diagnostics of every language server to readkeeper
// (`readkeeper/didChangeDiagnostics`), so attachments can tell the agent about errors.
//
// Changes are collected per URI and sent once the burst settles (debounced), each file
// with the version of the open document the diagnostics belong to (versioned). A file
// whose diagnostics were cleared is sent with an empty list, so readkeeper forgets them.
//
// The server decides what the agent sees (attachments/diagnostics.py sorts what arrives
// and cuts it to a token budget). What stays here is the bound on what crosses the wire:
// at most `readkeeper.diagnostics.maxPerFile` per file, the most severe first so that the
// cut never drops an error for a warning, in the server's order (severity, line,
// column). The Neovim plugin applies the same bound in lua/readkeeper/diagnostics.lua.

import type * as vscode from "vscode";
import type { DiagnosticsItem, DidChangeDiagnosticsParams, LspDiagnostic } from "./contract";

export interface DiagnosticsSource {
  /** Diagnostics of one URI (all language servers). */
  get(uri: vscode.Uri): readonly vscode.Diagnostic[];
  /** Every URI that has diagnostics. */
  all(): [vscode.Uri, readonly vscode.Diagnostic[]][];
  /** Version of the open document at `uri`, undefined when it is not open. */
  version(uri: vscode.Uri): number | undefined;
  onDidChange(listener: (uris: readonly vscode.Uri[]) => void): vscode.Disposable;
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface ForwarderOptions {
  debounceMs: number;
  maxPerFile: number;
  /** URI schemes forwarded: readkeeper works on files. */
  schemes?: readonly string[];
}

/** vscode.DiagnosticSeverity (Error = 0 ... Hint = 3) -> LSP (Error = 1 ... Hint = 4). */
export function toLspSeverity(severity: number | undefined): number | undefined {
  return severity === undefined ? undefined : severity + 1;
}

export function toLspDiagnostic(d: vscode.Diagnostic): LspDiagnostic {
  const out: LspDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    message: d.message,
  };
  const severity = toLspSeverity(d.severity as number | undefined);
  if (severity !== undefined) out.severity = severity;
  if (d.source) out.source = d.source;
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  if (code !== undefined && code !== "") out.code = code;
  return out;
}

/** The most severe first, then by position; at most `max` (the wire bound above). */
export function selectDiagnostics(
  diagnostics: readonly vscode.Diagnostic[],
  max: number,
): LspDiagnostic[] {
  return [...diagnostics]
    .sort(
      (a, b) =>
        (a.severity as number) - (b.severity as number) ||
        a.range.start.line - b.range.start.line ||
        a.range.start.character - b.range.start.character,
    )
    .slice(0, max)
    .map(toLspDiagnostic);
}

export class DiagnosticsForwarder implements vscode.Disposable {
  private readonly pending = new Map<string, vscode.Uri>();
  private timer: unknown;
  private subscription: vscode.Disposable | undefined;
  /** Notifications sent (for tests and the log). */
  sent = 0;

  constructor(
    private readonly send: (params: DidChangeDiagnosticsParams) => unknown,
    private readonly source: DiagnosticsSource,
    private readonly options: ForwarderOptions,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Sends what the editor has now, then follows changes. */
  start(): void {
    this.subscription?.dispose();
    this.subscription = this.source.onDidChange((uris) => this.onChange(uris));
    const snapshot = this.source
      .all()
      .filter(([uri, diagnostics]) => this.forwarded(uri) && diagnostics.length > 0)
      .map(([uri, diagnostics]) => this.item(uri, diagnostics));
    if (snapshot.length > 0) {
      this.emit(snapshot);
    }
  }

  private forwarded(uri: vscode.Uri): boolean {
    return (this.options.schemes ?? ["file"]).includes(uri.scheme);
  }

  private onChange(uris: readonly vscode.Uri[]): void {
    for (const uri of uris) {
      if (this.forwarded(uri)) {
        this.pending.set(uri.toString(), uri);
      }
    }
    if (this.pending.size === 0) {
      return;
    }
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
    }
    this.timer = this.timers.setTimeout(() => this.flush(), this.options.debounceMs);
  }

  private item(uri: vscode.Uri, diagnostics: readonly vscode.Diagnostic[]): DiagnosticsItem {
    const item: DiagnosticsItem = {
      uri: uri.toString(),
      diagnostics: selectDiagnostics(diagnostics, this.options.maxPerFile),
    };
    const version = this.source.version(uri);
    if (version !== undefined) {
      item.version = version;
    }
    return item;
  }

  /** Sends the pending changes now (the debounce timer calls this). */
  flush(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.size === 0) {
      return;
    }
    // Read the diagnostics at send time: the latest state, whatever the burst was.
    const items = [...this.pending.values()].map((uri) => this.item(uri, this.source.get(uri)));
    this.pending.clear();
    this.emit(items);
  }

  private emit(items: DiagnosticsItem[]): void {
    this.sent += 1;
    try {
      const maybe = this.send({ items }) as Promise<unknown> | undefined;
      // A stopped connection rejects: the next start sends a fresh snapshot anyway.
      maybe?.catch?.(() => undefined);
    } catch {
      // as above
    }
  }

  dispose(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.pending.clear();
    this.subscription?.dispose();
    this.subscription = undefined;
  }
}
