// The status bar item: running / stopped / error, stats on hover, change notices
// flashed briefly (never a popup).

import * as vscode from "vscode";
import * as vscodeapi from "./vscodeapi";
import type { ServerState } from "./server";

const ICONS: Record<ServerState, string> = {
  starting: "$(sync~spin)",
  running: "$(eye)",
  stopped: "$(circle-slash)",
  error: "$(error)",
};

/** The server's state as a sentence for a message ("readkeeper is not running: ..."). */
export function stateSentence(state: ServerState, detail?: string): string {
  const why = detail ? `: ${detail}` : "";
  switch (state) {
    case "running":
      return "readkeeper is running.";
    case "starting":
      return `readkeeper is still starting${why}. Try again in a moment.`;
    case "stopped":
      return `readkeeper is not running${why}. Run readkeeper: Restart Server to start it.`;
    case "error":
      return `readkeeper is not running${why}. Its log says why; readkeeper: Restart Server tries again.`;
  }
}

export const STATS_SCHEME = "readkeeper-stats";

/** The "Show Stats" page: a read-only virtual document (never an untitled buffer to
 * save or discard), refreshed in place. */
export class StatsDocument implements vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly uri = vscode.Uri.parse(`${STATS_SCHEME}:/readkeeper-stats.md`);
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private markdown = "**readkeeper**: no stats yet.";

  set(markdown: string): void {
    this.markdown = markdown;
    this.emitter.fire(this.uri);
  }

  provideTextDocumentContent(): string {
    return this.markdown;
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** The commands the status bar's hover links to. */
export const TOOLTIP_COMMANDS = ["readkeeper.showStats", "readkeeper.restart", "readkeeper.showLog"] as const;

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: ServerState = "stopped";
  private detail = "";
  private stats: string | undefined;

  constructor() {
    this.item = vscodeapi.createStatusBarItem("readkeeper.status", 100);
    this.item.name = "readkeeper";
    this.item.command = "readkeeper.showStats";
    this.render();
    this.item.show();
  }

  setState(state: ServerState, detail?: string): void {
    this.state = state;
    this.detail = detail ?? "";
    this.render();
  }

  setStats(markdown: string): void {
    this.stats = markdown;
    this.render();
  }

  /** A quiet notice that files the agent read changed (kept for a few seconds). */
  flashChanges(count: number): void {
    vscodeapi.setStatusBarMessage(
      `$(history) readkeeper: ${count} file${count === 1 ? "" : "s"} the agent read changed`,
      5000,
    );
  }

  get text(): string {
    return this.item.text;
  }

  private render(): void {
    this.item.text = `${ICONS[this.state]} readkeeper`;
    const tooltip = new vscode.MarkdownString(
      `readkeeper: **${this.state}**${this.detail ? ` (${this.detail})` : ""}\n\n` +
        (this.stats ?? "") +
        "\n\n[Show stats](command:readkeeper.showStats) · [Restart](command:readkeeper.restart) · " +
        "[Log](command:readkeeper.showLog)",
    );
    // Only these commands' links run: the stats name files, and a file name is the
    // repository's, which could otherwise plant a link to any command.
    tooltip.isTrusted = { enabledCommands: [...TOOLTIP_COMMANDS] };
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      this.state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
