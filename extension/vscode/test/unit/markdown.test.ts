// The Markdown readkeeper shows the user (stats, changes, confirmations) keeps its shape
// whatever the names in it: parsed by markdown-it, as VS Code renders a MarkdownString.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";
import { changesMarkdown, statsMarkdown } from "../../src/agent/render";
import { name } from "../../src/agent/quoting";
import { editConfirmation, writeConfirmation } from "../../src/agent/tools";

const md = new MarkdownIt();

// Names a repository or an agent could choose, each trying to end a span, a cell or a
// line, or to start Markdown of its own.
const HOSTILE = [
  "/w/a|b.py",
  "/w/`tick`.py",
  "/w/``two``|`",
  "`lead.py",
  "/w/**bold**_em_.py",
  "/w/[link](command:workbench.action.terminal.new).py",
  "/w/<img src=x>.py",
  "/w/line\nbreak.py",
  " spaced .py ",
];

/** Every inline token in `source`, flattened. */
function inline(source: string): Token[] {
  return md.parse(source, {}).flatMap((t) => (t.type === "inline" ? (t.children ?? []) : []));
}

function codeTexts(source: string): string[] {
  return inline(source)
    .filter((t) => t.type === "code_inline")
    .map((t) => t.content);
}

/** Inline markup other than code spans and text: what a name must never create. */
function markup(source: string): string[] {
  const allowed = new Set(["text", "code_inline", "softbreak", "strong_open", "strong_close"]);
  return inline(source)
    .map((t) => t.type)
    .filter((type) => !allowed.has(type));
}

describe("Markdown for the user", () => {
  it("a stats table keeps three cells a row, each name whole in its code span", () => {
    for (const key of HOSTILE) {
      const shown = statsMarkdown({ total: { tokens_by_file: { [key]: 7 } }, session: {} }, "chat");
      const tokens = md.parse(shown, {});
      const rows: number[] = [];
      for (const t of tokens) {
        if (t.type === "tr_open") rows.push(0);
        if (t.type === "td_open" || t.type === "th_open") rows[rows.length - 1] += 1;
      }
      assert.deepEqual(new Set(rows), new Set([3]), `${JSON.stringify(key)}:\n${shown}`);
      assert.ok(codeTexts(shown).includes(name(key).replace(/\n/g, " ")), `${JSON.stringify(key)}:\n${shown}`);
      assert.deepEqual(markup(shown), [], `${JSON.stringify(key)}:\n${shown}`);
    }
  });

  it("a session's name cannot start Markdown in the stats heading", () => {
    const shown = statsMarkdown({ total: { reads: 1 }, session: {} }, "ch`at [x](command:y) **z**");
    assert.deepEqual(markup(shown), []);
    assert.ok(codeTexts(shown).includes(name("ch`at [x](command:y) **z**")));
  });

  it("a changed file's name, and where it moved, stay whole in the changes list", () => {
    for (const path of HOSTILE) {
      const shown = changesMarkdown({
        changes: [{ file_path: path, new_path: path + "2", kind: "moved", diff: "", truncated: false, total_lines: 1 }],
      } as never);
      const codes = codeTexts(shown);
      assert.ok(codes.includes(name(path).replace(/\n/g, " ")), `${JSON.stringify(path)}:\n${shown}`);
      assert.ok(codes.includes(name(path + "2").replace(/\n/g, " ")), `${JSON.stringify(path)}:\n${shown}`);
      assert.deepEqual(markup(shown), [], `${JSON.stringify(path)}:\n${shown}`);
    }
  });

  it("a confirmation names the file the tool will change, whatever the agent sends", () => {
    for (const path of HOSTILE) {
      const edit = editConfirmation({ file_path: path, old_string: "a", new_string: "b" }).message;
      const write = writeConfirmation({ file_path: path, content: "x\n````\ny" }).message;
      for (const shown of [edit, write]) {
        assert.equal(codeTexts(shown)[0], name(path).replace(/\n/g, " "), shown);
        assert.deepEqual(markup(shown), [], shown);
      }
      // The preview is one fenced block, whatever fences the content holds.
      assert.equal(md.parse(write, {}).filter((t) => t.type === "fence").length, 1, write);
    }
    // An anchored edit's op and anchors are the agent's words: shown as code, never Markdown.
    const forged = editConfirmation({
      file_path: "a.py",
      anchor_edits: [{ op: "replace **safe.py** [x](command:y)" as never, start: "1`\n\n# Heading", lines: ["z"] }],
    }).message;
    assert.deepEqual(markup(forged), [], forged);
    assert.ok(!md.parse(forged, {}).some((t) => t.type === "heading_open"), forged);
  });
});
