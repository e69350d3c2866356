// Renders the results read as JSON from stdin with the extension's renderer (render.ts)
// and prints the texts as a JSON array: tests/editors/test_vscode_forgery.py checks, for
// results naming any file and holding any of its text, that every line is readkeeper's.
import { readFileSync } from "node:fs";
import type { ChangesResult, ReadResult } from "../src/protocol";
import type { AttachmentsResult, EditOutcome, GrepResult, WriteOutcome } from "../src/agent/contract";
import {
  changeNoticeSummary,
  changesMarkdown,
  errorMessage,
  type Part,
  renderAttachments,
  renderEditResult,
  renderGrep,
  renderReadResult,
  renderWriteResult,
} from "../src/agent/render";
import { marks } from "../src/agent/quoting";

const textOf = (parts: Part[]): string =>
  parts.map((p) => (p.kind === "text" ? p.text : "[image]")).join("\n");

function render(kind: string, value: unknown): string {
  switch (kind) {
    case "read":
      return textOf(renderReadResult(value as ReadResult));
    case "edit":
      return textOf(renderEditResult(value as EditOutcome));
    case "write":
      return textOf(renderWriteResult(value as WriteOutcome));
    case "marks":
      return marks(value as string);
    case "grep":
      return textOf(renderGrep(value as GrepResult));
    case "attachments":
      return textOf(renderAttachments(value as AttachmentsResult));
    case "error":
      return errorMessage(value, "readkeeper/read");
    case "changes":
      return changesMarkdown(value as ChangesResult);
    case "notice":
      return changeNoticeSummary({ session: "", changes: (value as ChangesResult).changes }).lines.join("\n");
    default:
      throw new Error(`no renderer for ${kind}`);
  }
}

const cases = JSON.parse(readFileSync(0, "utf8")) as [string, unknown][];
process.stdout.write(JSON.stringify(cases.map(([kind, value]) => render(kind, value))));
