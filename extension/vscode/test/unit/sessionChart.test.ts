// sessionChart.ts: the picture of the session in the webview, every value escaped.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chartSvg, type JournalEvent, sessionChartHtml, text } from "../../src/agent/sessionChart";

// A path a hostile repository can hold: it closes the SVG, opens a script, breaks quotes.
const HOSTILE = `/w/<script>alert('x')</script>"q'</svg><img src=x onerror=alert(1)>.py`;

function event(path: string, at_ms: number, tokens: number, saved: number, kind = "text"): JournalEvent {
  return { at_ms, session: "s", kind, path, tokens, saved, ms: 1 };
}

const count = (html: string, needle: string): number => html.split(needle).length - 1;

describe("the session chart page", () => {
  it("escapes a hostile path everywhere it shows it", () => {
    const history = {
      events: [event(HOSTILE, 1_700_000_000_000, 500, 0), event(HOSTILE, 1_700_000_060_000, 0, 480, "file_unchanged")],
      cap: 5000,
      dropped: 0,
    };
    const html = sessionChartHtml({ history }, "n0nce");
    assert.equal(count(html, "<script"), 0);
    assert.equal(count(html, "<img"), 0);
    assert.equal(count(html, "<svg"), 1);
    assert.equal(count(html, "</svg>"), 1);
    assert.ok(!html.includes(HOSTILE));
    assert.ok(count(html, text(HOSTILE)) >= 2); // the per-file table and the calls
    assert.match(html, /default-src &#39;none&#39;; style-src &#39;nonce-n0nce&#39;/);
    assert.match(html, /script-src &#39;none&#39;/);
  });

  it("draws sent and saved bars and says what was dropped", () => {
    const events = Array.from({ length: 10 }, (_, n) => event("/w/a.py", 1000 + n * 1000, 100, 50));
    const html = sessionChartHtml({ history: { events, cap: 10, dropped: 7 } }, "n");
    assert.ok(count(html, `<rect class="sent"`) >= 10);
    assert.ok(count(html, `<rect class="saved"`) >= 10);
    assert.match(html, /Only the newest 10 calls are kept in memory: 7 older ones were dropped/);
  });

  it("counts a mention's read within attachments once, in the attachments call", () => {
    const events = [
      { ...event("/w/a.py", 1000, 40, 0), within: "attachments" },
      { ...event("", 1000, 60, 0, "attachments") },
    ];
    const html = sessionChartHtml({ history: { events, cap: 10, dropped: 0 } }, "n");
    assert.match(html, /2 calls: 60 tokens sent to the agent/);
    assert.match(html, /text, within attachments/);
  });

  it("says when there is nothing to draw, and ignores malformed events", () => {
    assert.match(chartSvg([]), /No calls yet/);
    const html = sessionChartHtml({ history: { events: [null, { at_ms: "x" }, 3], cap: 1, dropped: 0 } }, "n");
    assert.match(html, /No calls yet/);
    assert.match(sessionChartHtml({}, "n"), /0 calls/);
  });
});

describe("the session chart's names", () => {
  it("shows bidirectional, zero-width and unpaired characters escaped, never raw", () => {
    const tricky = "/w/x\u202e\u2066\u200b\u200e\udcffgnp.exe.txt";
    const history = { events: [event(tricky, 1_700_000_000_000, 10, 0)], cap: 5000, dropped: 0 };
    const html = sessionChartHtml({ history }, "n0nce");
    for (const unseen of ["\u202e", "\u2066", "\u200b", "\u200e", "\udcff"]) {
      assert.ok(!html.includes(unseen), JSON.stringify(unseen));
    }
    assert.ok(html.includes("/w/x\\u202e\\u2066\\u200b\\u200e\\udcffgnp.exe.txt"));
  });
});
