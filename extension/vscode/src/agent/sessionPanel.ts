// The "Show Session Chart" page: a webview panel (one, reused) showing sessionChart.ts'
// picture of readkeeper/stats' journal. It runs no script: each showing fetches the
// stats afresh and replaces the page.

import { randomBytes } from "node:crypto";
import type * as vscode from "vscode";
import * as vscodeapi from "../common/vscodeapi";
import { sessionChartHtml } from "./sessionChart";

export const SESSION_CHART_VIEW = "readkeeper.sessionChart";
export const SESSION_CHART_TITLE = "readkeeper: session chart";

export class SessionPanel {
  private panel: vscode.WebviewPanel | undefined;

  /** Show the picture of `stats` (an answer sent with `history`), in the panel. */
  show(stats: { history?: unknown }): void {
    if (!this.panel) {
      this.panel = vscodeapi.createWebviewPanel(SESSION_CHART_VIEW, SESSION_CHART_TITLE);
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.panel.webview.html = sessionChartHtml(stats, randomBytes(16).toString("base64"));
    this.panel.reveal();
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
