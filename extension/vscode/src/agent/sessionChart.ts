// The picture of the session, for the "Show Session Chart" webview: what the agent read,
// when, at what cost and what readkeeper saved it (stubs, outlines and budget cuts,
// diffs), drawn from readkeeper/stats' journal (`history`) as one inline SVG chart and
// two tables. The same picture as `readkeeper stats --html` (server/picture.py).
//
// The page runs no script and loads nothing (its CSP: default-src 'none', styles only
// from its own nonce), and every value that reaches it goes through `text`, which
// escapes &, <, >, " and ': file paths come from the repository, which may be hostile.

import { printable } from "./quoting";

export interface JournalEvent {
  at_ms: number;
  session: string;
  kind: string;
  path: string;
  tokens: number;
  saved: number;
  ms: number;
  error?: string;
  within?: string; // the call it ran inside: its tokens are that call's too
}

export interface History {
  events: JournalEvent[];
  cap: number;
  dropped: number;
  beyond_roots?: number;
}

const BARS = 48;
const WIDTH = 720;
const HEIGHT = 200;
const TOP_FILES = 50;
const LATEST_CALLS = 200;

/** `value` as HTML text or a quoted attribute's value: the naming rule's escapes first
 * (`printable`: no name reads reversed or as another), then HTML's. */
export function text(value: unknown): string {
  return printable(String(value))
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const count = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0);
const number = (n: number): string => n.toLocaleString("en-US");
const when = (ms: number): string => new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");

/** The events of a stats answer's `history` that have a time (anything else is dropped). */
export function eventsOf(history: unknown): JournalEvent[] {
  const events = (history as History | undefined)?.events;
  if (!Array.isArray(events)) return [];
  return events.filter((e): e is JournalEvent => !!e && typeof e === "object" && typeof e.at_ms === "number");
}

/** The chart: tokens sent (below) and saved (above) per slice of time, as SVG. */
export function chartSvg(events: JournalEvent[]): string {
  if (events.length === 0) return `<p class="note">No calls yet.</p>`;
  const start = Math.min(...events.map((e) => e.at_ms));
  const span = Math.max(1, Math.max(...events.map((e) => e.at_ms)) - start);
  const sent = new Array<number>(BARS).fill(0);
  const saved = new Array<number>(BARS).fill(0);
  for (const e of events.filter((e) => !e.within)) {
    const slot = Math.min(BARS - 1, Math.floor(((e.at_ms - start) * BARS) / span));
    sent[slot] += count(e.tokens);
    saved[slot] += count(e.saved);
  }
  const top = Math.max(1, ...sent.map((s, i) => s + saved[i]));
  const bar = WIDTH / BARS;
  const shapes: string[] = [];
  for (let slot = 0; slot < BARS; slot++) {
    const x = (slot * bar).toFixed(1);
    const low = (sent[slot] * (HEIGHT - 20)) / top;
    const high = (saved[slot] * (HEIGHT - 20)) / top;
    const width = (bar - 1).toFixed(1);
    if (low) shapes.push(`<rect class="sent" x="${x}" y="${(HEIGHT - low).toFixed(1)}" width="${width}" height="${low.toFixed(1)}"/>`);
    if (high) shapes.push(`<rect class="saved" x="${x}" y="${(HEIGHT - low - high).toFixed(1)}" width="${width}" height="${high.toFixed(1)}"/>`);
  }
  const label =
    `Tokens sent (blue) and saved (green) from ${when(start)} to ${when(start + span)}; ` +
    `the tallest slice is ${number(top)} tokens.`;
  return (
    `<svg id="readkeeper-chart" role="img" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${text(label)}</title>` +
    `<line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"/>` +
    `${shapes.join("")}</svg><p class="note">${text(label)}</p>`
  );
}

type Cell = [unknown, boolean]; // value, numeric

function table(head: string[], rows: Cell[][]): string {
  const header = head.map((h) => `<th>${text(h)}</th>`).join("");
  const body = rows
    .map(
      (row) =>
        "<tr>" +
        row
          .map(([v, numeric]) =>
            numeric ? `<td class="n">${text(typeof v === "number" ? number(v) : v)}</td>` : `<td><code>${text(v)}</code></td>`,
          )
          .join("") +
        "</tr>",
    )
    .join("");
  return `<table><tr>${header}</tr>${body}</table>`;
}

/** The whole page for a stats answer sent with `history`; `nonce` lets its one style in. */
export function sessionChartHtml(stats: { history?: unknown }, nonce: string): string {
  const history = (stats.history ?? {}) as Partial<History>;
  const events = eventsOf(history);
  const top = events.filter((e) => !e.within); // each token once: not a mention's read again
  const sent = top.reduce((n, e) => n + count(e.tokens), 0);
  const saved = top.reduce((n, e) => n + count(e.saved), 0);
  const notes = [
    `${number(events.length)} calls: ${number(sent)} tokens sent to the agent, ${number(saved)} saved by readkeeper ` +
      "(stubs of unchanged re-reads, outlines and budget cuts, diffs).",
  ];
  if (count(history.dropped) > 0) {
    notes.push(
      `Only the newest ${number(count(history.cap))} calls are kept in memory: ${number(count(history.dropped))} ` +
        "older ones were dropped and are not shown.",
    );
  }
  if (count(history.beyond_roots) > 0) notes.push(`${number(count(history.beyond_roots))} calls beyond these roots are left out.`);
  const files = new Map<string, [number, number, number, number]>();
  for (const e of events) {
    if (typeof e.path !== "string" || !e.path) continue;
    const row = files.get(e.path) ?? [0, 0, 0, 0];
    files.set(e.path, [row[0] + 1, row[1] + count(e.tokens), row[2] + count(e.saved), Math.max(row[3], e.at_ms)]);
  }
  const fileRows: Cell[][] = [...files.entries()]
    .sort((a, b) => b[1][1] + b[1][2] - (a[1][1] + a[1][2]) || a[0].localeCompare(b[0]))
    .slice(0, TOP_FILES)
    .map(([path, [calls, t, s, at]]) => [[path, false], [calls, true], [t, true], [s, true], [when(at), false]]);
  const callRows: Cell[][] = events
    .slice(-LATEST_CALLS)
    .reverse()
    .map((e) => [
      [when(e.at_ms), false],
      [e.session ?? "", false],
      [`${e.kind ?? ""}${e.error ? ` (${e.error})` : ""}${e.within ? `, within ${e.within}` : ""}`, false],
      [e.path ?? "", false],
      [count(e.tokens), true],
      [count(e.saved), true],
      [String(e.ms ?? ""), true],
    ]);
  const csp = `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'none'; script-src 'none'; form-action 'none'`;
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="${text(csp)}">` +
    `<title>readkeeper: the session</title><style nonce="${text(nonce)}">${STYLE}</style></head><body>` +
    `<h1>readkeeper: the session</h1>` +
    notes.map((n) => `<p class="note">${text(n)}</p>`).join("") +
    `<h2>Over time</h2>${chartSvg(events)}` +
    `<h2>Per file (the ${TOP_FILES} costliest)</h2>` +
    table(["file", "calls", "tokens sent", "tokens saved", "last"], fileRows) +
    `<h2>The latest calls (up to ${LATEST_CALLS}, newest first)</h2>` +
    table(["when", "session", "what", "file", "tokens", "saved", "ms"], callRows) +
    `</body></html>`
  );
}

const STYLE = `
body { font: 13px var(--vscode-font-family, system-ui, sans-serif); color: var(--vscode-foreground, #222); margin: 1em; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.note { opacity: 0.8; } .sent { fill: #3b6fd4; } .saved { fill: #3ca55c; } .axis { stroke: #999; }
#readkeeper-chart { background: transparent; }
code { word-break: break-all; }
`;
