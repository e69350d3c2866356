// readkeeper's results as text for whoever reads them: the model (a tool result's
// parts: numbered lines, stubs, diffs, notes in brackets) and the user (Markdown in the
// chat, the stats page, the log). The extension's one place that turns a result into
// words; plain functions, tested without VS Code.

import type { ChangesResult, DidChangeReadFilesParams, NotebookFile, ReadResult } from "../protocol";
import {
  type AttachmentsResult,
  type EditOutcome,
  type ForgetResult,
  type GrepResult,
  isRpcError,
  METHOD_NOT_FOUND,
  type Stats,
  type WriteOutcome,
} from "./contract";
import { heldWords, nextReadWords } from "./held";
import { code, count, fence, jsonText, lines as fileText, marks, name } from "./quoting";

/** A part of a tool result, before it becomes a vscode.LanguageModel*Part. */
export type Part = { kind: "text"; text: string } | { kind: "image"; base64: string; mimeType: string };

const text = (value: string): Part => ({ kind: "text", text: value });

// --- read, edit, write and attachments results, for the model --------------------------

export { UNCHANGED_NOTE } from "./held";

function notes(...lines: (string | undefined | false)[]): string {
  const kept = lines.filter((l): l is string => typeof l === "string" && l.length > 0);
  return kept.length ? "\n\n" + kept.map((l) => `[${fileText(l)}]`).join("\n") : "";
}

/** The cells a notebook view shows, numbered from 1 as offset counts them. */
function cellRange(file: NotebookFile): string {
  const first = (file.cells[0]?.index ?? 0) + 1;
  const last = first + file.cells.length - 1;
  return last > first ? `cells ${first}-${last}` : `cell ${first}`;
}

function renderNotebook(file: NotebookFile): Part[] {
  const parts: Part[] = [];
  const chunks: string[] = [];
  for (const cell of file.cells) {
    const count = cell.execution_count != null ? ` execution_count=${cell.execution_count}` : "";
    // The cell's id and type are the notebook's words, quoted; its text is fenced, so no
    // cell can close its <cell> or open another (quoting.ts).
    chunks.push(
      `<cell id=${jsonText(cell.cell_id)} index=${cell.index} type=${name(cell.cell_type)}${count}>`,
    );
    // The source comes as the file holds it: its cut markers' `[` escaped here, as the
    // server's render does (quoting.ts `marks`); outputs come escaped, but an error's name.
    chunks.push(fence(marks(cell.source)));
    for (const out of cell.outputs ?? []) {
      const body =
        out.output_type === "error"
          ? [out.ename && marks(out.ename), out.evalue, out.traceback].filter(Boolean).join(": ")
          : (out.text ?? "");
      chunks.push(`<output type=${name(out.output_type)}${out.name ? ` name=${name(out.name)}` : ""}>`);
      if (body) chunks.push(fence(body));
      for (const image of out.images ?? []) {
        if (image.base64) {
          parts.push(text(chunks.splice(0).join("\n")));
          parts.push({ kind: "image", base64: image.base64, mimeType: image.media_type });
        } else {
          chunks.push(`[image ${name(image.media_type)} ${image.width ?? "?"}x${image.height ?? "?"}]`);
        }
      }
      if (out.note) chunks.push(`[${fileText(out.note)}]`);
      chunks.push("</output>");
    }
    if (cell.note) chunks.push(`[${fileText(cell.note)}]`);
    chunks.push("</cell>");
  }
  const tail = notes(
    file.unsaved && "Unsaved editor buffer",
    file.partial && file.next_offset != null
      ? `Showing ${cellRange(file)} of ${file.total_cells}; continue with offset: ${file.next_offset}` +
          (file.include_images ? ", include_images: true" : "")
      : file.cells.length > 0 && file.cells.length !== file.total_cells
        ? `Showing ${cellRange(file)} of ${file.total_cells}`
        : undefined,
    file.note,
  );
  parts.push(text(chunks.join("\n") + tail));
  return parts.filter((p) => p.kind !== "text" || p.text.length > 0);
}

export function renderReadResult(result: ReadResult): Part[] {
  switch (result.type) {
    case "text": {
      const f = result.file;
      const end = f.start_line + f.num_lines - 1;
      const of = f.total_lines != null ? ` of ${f.total_lines}` : "";
      return [
        text(
          (fileText(f.content) || "(empty file)") +
            notes(
              f.unsaved && `Unsaved editor buffer (version ${f.buffer_version ?? "?"}), not the file on disk`,
              f.partial &&
                (f.note ??
                  `Showing lines ${f.start_line}-${end}${of}; continue with offset: ${f.next_offset}`),
              !f.partial && f.note,
              f.truncated_lines ? `${count(f.truncated_lines, "long line")} cut` : undefined,
            ),
        ),
      ];
    }
    case "file_unchanged":
      return [text(heldWords(result.file))];
    case "file_changed": {
      const f = result.file;
      return [
        text(
          `${name(f.file_path)} changed since you last read it (${f.total_lines} lines now); ` +
            `the diff from what you hold:\n${fileText(f.diff)}` +
            notes(f.note),
        ),
      ];
    }
    case "outline": {
      const f = result.file;
      return [
        text(
          `Outline of ${name(f.file_path)} (${name(f.language)}, ${f.total_lines} lines, about ` +
            `${f.file_tokens} tokens whole): ${f.shown_symbols} of ${f.symbols} symbols\n` +
            `${fileText(f.outline)}\n\nFirst lines:\n${fileText(f.content)}` +
            notes(f.unsaved && `Unsaved editor buffer (version ${f.buffer_version ?? "?"}), not the file on disk`, f.note),
        ),
      ];
    }
    case "estimate": {
      const f = result.file;
      const of = f.total_lines != null ? ` of ${f.total_lines}` : "";
      return [
        text(
          `Estimate for ${name(f.file_path)}: ${f.tokens} tokens, ${f.num_lines} lines${of}` +
            `${f.partial ? " (a partial read)" : ""}; no content was read.` +
            notes(f.note),
        ),
      ];
    }
    case "image": {
      const f = result.file;
      const d = f.dimensions;
      return [
        { kind: "image", base64: f.base64, mimeType: f.media_type },
        text(
          `Image ${name(f.file_path)}: ${d.original_width}x${d.original_height}, shown at ` +
            `${d.display_width}x${d.display_height} (${f.tokens} tokens)` +
            notes(f.note),
        ),
      ];
    }
    case "pdf": {
      const f = result.file;
      return [
        text(
          fileText(f.content) +
            notes(
              `PDF ${name(f.file_path)}: pages ${f.shown_pages} of ${f.page_count}`,
              f.partial && f.next_pages ? `Continue with pages: "${f.next_pages}"` : undefined,
              f.note,
            ),
        ),
      ];
    }
    case "parts": {
      const f = result.file;
      const list = f.pages.map((p, i) => `page ${f.page_numbers[i] ?? i + 1}: ${name(p)}`).join("\n");
      return [
        text(
          `Rendered ${count(f.count, "page")} of ${name(f.file_path)} (${count(f.page_count, "page")}) to PNG; ` +
            `read each image to see it:\n${list}` +
            notes(f.partial && f.next_pages ? `Continue with pages: "${f.next_pages}", render: true` : undefined, f.note),
        ),
      ];
    }
    case "notebook":
      return renderNotebook(result.file);
    default: {
      const unknown = result as { type?: string };
      return [text(`Unrecognized read result type ${name(unknown.type)}:\n${jsonText(result)}`)];
    }
  }
}

/** What the model should know beyond "done": a merge with someone else's change, an
 * edit applied to the editor buffer, diagnostics for the edited file. */
function editExtras(result: EditOutcome | WriteOutcome): string {
  const lines: string[] = [];
  if (result.applied_to === "buffer") {
    lines.push("Applied to the open editor buffer (not yet saved).");
  }
  // Only an edit merges; a write replaces what it read whole.
  const external = "external_change" in result ? result.external_change : undefined;
  const merged = "merged" in result && result.merged;
  if (merged || external) {
    lines.push("The file had changed since your read, away from your edit; both changes are kept.");
    if (external?.diff) lines.push(`What had changed:\n${fileText(external.diff)}`);
  }
  // Language servers' words about the file (they read it): one JSON line, quoted.
  const diagnostics = result.diagnostics;
  if (diagnostics !== undefined && diagnostics !== null) {
    lines.push(`Diagnostics: ${jsonText(diagnostics)}`);
  }
  return lines.length ? "\n" + lines.join("\n") : "";
}

export function renderEditResult(result: EditOutcome): Part[] {
  const n = result.replacements;
  return [
    text(
      `Edited ${name(result.file_path)}: ${n} replacement${n === 1 ? "" : "s"}.` +
        (result.snippet ? `\n${fileText(result.snippet)}` : "") +
        editExtras(result) +
        notes(result.note, nextReadWords(result.read_state)),
    ),
  ];
}

export function renderWriteResult(result: WriteOutcome): Part[] {
  const verb = result.created ? "Created" : result.changed === false ? "Unchanged (same content):" : "Wrote";
  const size = typeof result.total_lines === "number" ? ` (${result.total_lines} lines)` : "";
  return [text(`${verb} ${name(result.file_path)}${size}.` + editExtras(result) + notes(result.note, nextReadWords(result.read_state)))];
}

/** One attachment per file: a file the user attached that is also a memory file
 * (AGENTS.md, which VS Code's chat attaches by itself) comes once, as the file (read in
 * full, and recorded as read), not a second time as memory. */
/** Lines of grep's note of escapes named (more are counted), as the server's. */
const ESCAPES_LISTED = 20;

/** The note naming the matches shown with escapes, as the server's grep note does
 * (server/search/shown.py `escapes_note`): a file's own `\r` or `\x5b` looks just like
 * an escape, so only the lines named here hold one. */
function escapesNote(result: GrepResult): string | undefined {
  const held = (result.matches ?? [])
    .filter((m) => fileText(marks(m.text)) !== m.text)
    .map((m) => `${name(m.file_path)}:${m.line}`);
  if (!held.length) return undefined;
  const more = held.length > ESCAPES_LISTED ? ` and ${held.length - ESCAPES_LISTED} more` : "";
  return (
    `Lines ${held.slice(0, ESCAPES_LISTED).join(", ")}${more} hold text shown escaped: line breaks other ` +
    "than LF (a lone CR, U+2028, ...) as \\r, \\u2028, ..., and a '[' opening " +
    "cut-marker words as \\x5b; in any other line such text is the file's own. An " +
    "edit's old_string may give them as shown."
  );
}

/** A search as grep prints it (`path:line:text`, context lines with `-`), names quoted
 * when odd so no file name can forge a match, then where it stopped and the call for
 * the rest. */
export function renderGrep(result: GrepResult): Part[] {
  let out: string[];
  if (result.files) {
    out = result.files.map((file) => name(file));
  } else if (result.counts) {
    out = result.counts.map((c) => `${name(c.file_path)}:${c.count}`);
  } else {
    out = (result.matches ?? []).map((m) => {
      const mark = m.context ? "-" : ":";
      // The line as the file holds it: a `[line cut:` of its own is never readkeeper's.
      return `${name(m.file_path)}${mark}${m.line}${mark}${fileText(marks(m.text))}`;
    });
  }
  const note = [escapesNote(result), result.note].filter(Boolean).join(" ");
  if (note) out.push(`(${note})`);
  if (result.next) out.push(`next: ${jsonText(result.next)}`);
  return [text(out.length ? out.join("\n") : "(nothing found)")];
}

export function withoutDuplicates(result: AttachmentsResult): AttachmentsResult {
  const files = new Set(
    result.attachments.filter((a) => a.type === "file" && a.source).map((a) => a.source),
  );
  const kept = result.attachments.filter((a) => !(a.type === "memory" && a.source && files.has(a.source)));
  if (kept.length === result.attachments.length) return result;
  const removed = result.attachments.filter((a) => !kept.includes(a));
  const saved = removed.reduce((sum, a) => sum + (a.tokens ?? 0), 0);
  return { ...result, attachments: kept, used_tokens: Math.max(0, result.used_tokens - saved) };
}

export function renderAttachments(raw: AttachmentsResult): Part[] {
  const result = withoutDuplicates(raw);
  // The content holds files' text: fenced, so no line of it closes the <attachment>.
  const blocks = result.attachments.map(
    (a) =>
      `<attachment type=${jsonText(a.type)}` +
      `${(a.type === "file" || a.type === "memory") && a.source ? ` source=${jsonText(a.source)}` : ""}` +
      ` priority=${a.priority} tokens=${a.tokens}` +
      `${a.truncated ? " truncated" : ""}>\n` +
      `${fence(typeof a.content === "string" ? a.content : jsonText(a.content))}\n</attachment>`,
  );
  const dropped = result.dropped.map((d) => (typeof d === "string" ? fileText(d) : jsonText(d)));
  const summary =
    `[${count(result.attachments.length, "attachment")}, ${result.used_tokens} of ${count(result.budget_tokens, "token")}` +
    (dropped.length ? `; dropped: ${dropped.join("; ")}` : "") +
    "]";
  return [text(blocks.length ? `${blocks.join("\n")}\n${summary}` : `No context to attach. ${summary}`)];
}

/** The message the model sees for a failed call: the server's own message (written for
 * the agent: what happened and the next call that will work), plus suggestions. */
export function errorMessage(error: unknown, method: string): string {
  if (isRpcError(error)) {
    if (error.code === METHOD_NOT_FOUND) {
      return `This readkeeper server does not support ${method}; update readkeeper.`;
    }
    const kind = error.data?.kind ? `${error.data.kind}: ` : "";
    const lines = [`${kind}${fileText(error.message)}`];
    const suggestions = error.data?.suggestions ?? [];
    if (suggestions.length && !suggestions.some((s) => error.message.includes(name(s)))) {
      lines.push(`Did you mean: ${suggestions.map(name).join(", ")}`);
    }
    const diff = error.data?.diff;
    if (typeof diff === "string" && diff && !error.message.includes(diff)) {
      lines.push(fileText(diff));
    }
    return lines.join("\n");
  }
  return error instanceof Error ? error.message : String(error);
}

// --- for the user -------------------------------------------------------------------------

/** What `readkeeper/forget` did, for the command's message and the chat. ("As a first
 * read would", not "in full": a big source file read whole answers with its outline.) */
export function forgetSentence(result: ForgetResult | undefined, session: string): string {
  const forgotten = result?.forgotten ?? 0;
  if (forgotten === 0) {
    return `readkeeper had nothing to forget in session "${session}" (no read of those files).`;
  }
  return (
    `readkeeper forgot ${count(forgotten, "file")} read in session "${session}": ` +
    'the next read of each answers as a first read would, not with an "unchanged" stub.'
  );
}

/** `readkeeper/changes` for the chat: each file (where a moved one went), its diff and
 * note, then how many the token cap held back for the next call. */
export function changesMarkdown(result: ChangesResult): string {
  const more = result.remaining
    ? `${count(result.remaining, "more changed file")}: ask again (\`@readkeeper /changes\`) to see them.`
    : "";
  if (result.changes.length === 0) {
    return more || "No file the agent read has changed since it read it.";
  }
  const blocks = result.changes.map((c) => {
    const where = c.new_path ? ` → ${code(name(c.new_path))}` : "";
    const note = c.note ? `\nNote: ${fileText(c.note)}` : "";
    const diff = c.diff ? `\n${fence(c.diff, "diff")}` : "";
    const cut = c.truncated ? "\n_(diff cut; read the file to see all of it)_" : "";
    return `- ${code(name(c.file_path))}${where}: **${cell(c.kind)}**${note}${diff}${cut}`;
  });
  const changed = count(result.changes.length, "file");
  const list = `${changed} changed since the agent read them:\n\n${blocks.join("\n")}`;
  return more ? `${list}\n\n${more}` : list;
}

function humanKey(key: string): string {
  return key.replace(/_/g, " ");
}

type Counters = Record<string, unknown> | undefined;

function isGroup(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Words in Markdown: its own characters and line breaks cannot change the text around
 * them (a table's cells, a list's items). */
function cell(value: unknown): string {
  return String(value ?? "–").replace(/[|\\`*_[\]<>]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, " ");
}

/** A name as a table's cell: a code span (`code`) whose pipes are escaped, as a table
 * needs even inside a span. */
function nameCell(value: string): string {
  return code(name(value)).replace(/\|/g, "\\|");
}

/** One table: a row per key of either session's counters (`label` names the keys). */
function statsTable(mine: Counters, total: Counters, label: (key: string) => string, keys: string[]): string[] {
  const lines = ["| | this chat session | all sessions |", "|---|---:|---:|"];
  for (const key of keys) {
    lines.push(`| ${label(key)} | ${cell(mine?.[key])} | ${cell(total?.[key])} |`);
  }
  return lines;
}

/** Stats as Markdown (the hover and the "show stats" command): the counters in one
 * table, and each group of them (tokens by file: a file's path a row) in a table of its
 * own under its name. */
export function statsMarkdown(stats: Stats, session: string): string {
  const total: Counters = stats.total;
  const mine: Counters = stats.session;
  const keys = [...new Set([...Object.keys(total ?? {}), ...Object.keys(mine ?? {})])];
  const groups = keys.filter((k) => isGroup(total?.[k]) || isGroup(mine?.[k]));
  const counters = keys.filter((k) => !groups.includes(k));
  const lines = statsTable(mine, total, (k) => cell(humanKey(k)), counters);
  if (stats.files_in_read_state !== undefined) {
    lines.push(`| files in read-state | | ${stats.files_in_read_state} |`);
  }
  for (const group of groups) {
    const ours = isGroup(mine?.[group]) ? (mine?.[group] as Record<string, unknown>) : undefined;
    const all = isGroup(total?.[group]) ? (total?.[group] as Record<string, unknown>) : undefined;
    const rows = [...new Set([...Object.keys(ours ?? {}), ...Object.keys(all ?? {})])];
    lines.push("", `**${humanKey(group)}**`, "");
    lines.push(...statsTable(ours, all, nameCell, rows));
  }
  return `**readkeeper** (session ${code(name(session))})\n\n${lines.join("\n")}`;
}

/** `readkeeper/didChangeReadFiles` params, summarized for the log and the status bar. */
export function changeNoticeSummary(params: DidChangeReadFilesParams): { count: number; lines: string[] } {
  const lines = params.changes.map(
    (c) => `${name(c.file_path)}${c.new_path ? ` -> ${name(c.new_path)}` : ""} (${c.kind})`,
  );
  return { count: params.changes.length, lines };
}
