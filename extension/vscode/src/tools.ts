// readkeeper's read, edit, write and attachments as Language Model Tools for the chat
// panel's agent mode. The conversions (tool input -> request params, result -> parts,
// JSON-RPC error -> message for the model) are plain functions, tested without VS Code.

import * as vscode from "vscode";
import {
  type ActiveEditor,
  type AttachmentsParams,
  type AttachmentsResult,
  type EditParams,
  type EditResult,
  isRpcError,
  METHOD_NOT_FOUND,
  Methods,
  type NotebookFile,
  type ReadParams,
  type ReadResult,
  type RequestSender,
  type WriteParams,
  type WriteResult,
} from "./protocol";
import * as vscodeapi from "./vscodeapi";

/** A part of a tool result, before it becomes a vscode.LanguageModel*Part. */
export type Part = { kind: "text"; text: string } | { kind: "image"; base64: string; mimeType: string };

const text = (value: string): Part => ({ kind: "text", text: value });

// --- tool inputs -> params ---------------------------------------------------------------

export interface ReadInput {
  file_path: string;
  offset?: number | string;
  limit?: number | string;
  pages?: string;
  force?: boolean;
}

export interface EditInput {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export interface WriteInput {
  file_path: string;
  content: string;
}

export interface AttachmentsInput {
  budget_tokens?: number | string;
  types?: string[];
  mentions?: string[];
}

function requirePath(input: { file_path?: unknown }): string {
  if (typeof input?.file_path !== "string" || input.file_path.trim() === "") {
    throw new Error("file_path is required: give an absolute path or one relative to the workspace.");
  }
  return input.file_path;
}

/** Drops absent (undefined or null) fields; an empty string is a value (an edit that
 * deletes). Numbers given as strings are passed on: the server coerces them. */
function defined<T extends object>(params: T): T {
  return Object.fromEntries(
    Object.entries(params).filter(([, v]) => v !== undefined && v !== null),
  ) as T;
}

export function readParams(input: ReadInput, session: string): ReadParams {
  return defined({
    file_path: requirePath(input),
    offset: input.offset as number | undefined,
    limit: input.limit as number | undefined,
    pages: input.pages || undefined,
    force: input.force,
    session,
  });
}

export function editParams(input: EditInput, session: string): EditParams {
  return defined({
    file_path: requirePath(input),
    old_string: input.old_string,
    new_string: input.new_string,
    replace_all: input.replace_all,
    session,
  });
}

export function writeParams(input: WriteInput, session: string): WriteParams {
  return { file_path: requirePath(input), content: input.content, session };
}

export function attachmentsParams(
  input: AttachmentsInput | undefined,
  session: string,
  activeEditor: ActiveEditor | undefined,
): AttachmentsParams {
  return defined({
    session,
    budget_tokens: input?.budget_tokens as number | undefined,
    types: input?.types?.length ? input.types : undefined,
    mentions: input?.mentions?.length ? input.mentions : undefined,
    active_editor: activeEditor,
  });
}

// --- results -> parts --------------------------------------------------------------------

export const UNCHANGED_NOTE =
  "File unchanged since you last read it in this conversation; that earlier read is still " +
  "current. If it is no longer in your context, read again with force: true.";

function notes(...lines: (string | undefined | false)[]): string {
  const kept = lines.filter((l): l is string => typeof l === "string" && l.length > 0);
  return kept.length ? "\n\n" + kept.map((l) => `[${l}]`).join("\n") : "";
}

function renderNotebook(file: NotebookFile): Part[] {
  const parts: Part[] = [];
  const chunks: string[] = [];
  for (const cell of file.cells) {
    const count = cell.execution_count != null ? ` execution_count=${cell.execution_count}` : "";
    chunks.push(`<cell id="${cell.cell_id}" index=${cell.index} type=${cell.cell_type}${count}>`);
    chunks.push(cell.source);
    for (const out of cell.outputs ?? []) {
      const body =
        out.output_type === "error"
          ? [out.ename, out.evalue, out.traceback].filter(Boolean).join(": ")
          : (out.text ?? "");
      chunks.push(`<output type=${out.output_type}${out.name ? ` name=${out.name}` : ""}>`);
      if (body) chunks.push(body);
      for (const image of out.images ?? []) {
        if (image.base64) {
          parts.push(text(chunks.splice(0).join("\n")));
          parts.push({ kind: "image", base64: image.base64, mimeType: image.media_type });
        } else {
          chunks.push(`[image ${image.media_type} ${image.width ?? "?"}x${image.height ?? "?"}]`);
        }
      }
      if (out.note) chunks.push(`[${out.note}]`);
      chunks.push("</output>");
    }
    if (cell.note) chunks.push(`[${cell.note}]`);
    chunks.push("</cell>");
  }
  const tail = notes(
    file.unsaved && "Unsaved editor buffer",
    file.partial && file.next_offset != null
      ? `Showing ${file.cells.length} of ${file.total_cells} cells; continue with offset: ${file.next_offset}`
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
          (f.content || "(empty file)") +
            notes(
              f.unsaved && `Unsaved editor buffer (version ${f.buffer_version ?? "?"}), not the file on disk`,
              f.partial &&
                (f.note ??
                  `Showing lines ${f.start_line}-${end}${of}; continue with offset: ${f.next_offset}`),
              !f.partial && f.note,
              f.truncated_lines ? `${f.truncated_lines} long line(s) were cut` : undefined,
            ),
        ),
      ];
    }
    case "file_unchanged":
      return [text(`${UNCHANGED_NOTE}\n(${result.file.file_path})`)];
    case "image": {
      const f = result.file;
      const d = f.dimensions;
      return [
        { kind: "image", base64: f.base64, mimeType: f.media_type },
        text(
          `Image ${f.file_path}: ${d.original_width}x${d.original_height}, shown at ` +
            `${d.display_width}x${d.display_height} (${f.tokens} tokens)` +
            notes(f.note),
        ),
      ];
    }
    case "pdf": {
      const f = result.file;
      return [
        text(
          f.content +
            notes(
              `PDF ${f.file_path}: pages ${f.pages} of ${f.page_count}`,
              f.partial && f.next_pages ? `Continue with pages: "${f.next_pages}"` : undefined,
              f.note,
            ),
        ),
      ];
    }
    case "parts": {
      const f = result.file;
      const list = f.pages.map((p, i) => `page ${f.page_numbers[i] ?? i + 1}: ${p}`).join("\n");
      return [
        text(
          `Rendered ${f.count} page(s) of ${f.file_path} (${f.page_count} pages) to PNG; ` +
            `read each image to see it:\n${list}` +
            notes(f.partial && f.next_pages ? `Continue with pages: "${f.next_pages}"` : undefined, f.note),
        ),
      ];
    }
    case "notebook":
      return renderNotebook(result.file);
    default: {
      const unknown = result as { type?: string };
      return [text(`Unrecognized read result type ${String(unknown.type)}:\n${JSON.stringify(result)}`)];
    }
  }
}

/** What the model should know beyond "done": a merge with someone else's change, an
 * edit applied to the editor buffer, diagnostics for the edited file. */
function editExtras(result: EditResult | WriteResult): string {
  const lines: string[] = [];
  if (result.applied_to === "buffer") {
    lines.push("Applied to the open editor buffer (not yet saved).");
  }
  const external = result.external_change as { diff?: string; truncated?: boolean } | undefined;
  if (result.merged || external) {
    lines.push("The file had changed since your read, away from your edit; both changes are kept.");
    if (external?.diff) lines.push(`What had changed:\n${external.diff}`);
  }
  const diagnostics = result.diagnostics;
  if (typeof diagnostics === "string") {
    lines.push(`Diagnostics: ${diagnostics}`);
  } else if (diagnostics !== undefined && diagnostics !== null) {
    lines.push(`Diagnostics: ${JSON.stringify(diagnostics)}`);
  }
  return lines.length ? "\n" + lines.join("\n") : "";
}

export function renderEditResult(result: EditResult): Part[] {
  const n = result.replacements;
  return [
    text(
      `Edited ${result.file_path}: ${n} replacement${n === 1 ? "" : "s"}.` +
        (result.snippet ? `\n${result.snippet}` : "") +
        editExtras(result) +
        notes(result.note),
    ),
  ];
}

export function renderWriteResult(result: WriteResult): Part[] {
  const verb = result.created ? "Created" : result.changed === false ? "Unchanged (same content):" : "Wrote";
  const size = typeof result.total_lines === "number" ? ` (${result.total_lines} lines)` : "";
  return [text(`${verb} ${result.file_path}${size}.` + editExtras(result) + notes(result.note))];
}

/** One attachment per file: a file the user attached that is also a memory file
 * (AGENTS.md, which VS Code's chat attaches by itself) comes once, as the file (read in
 * full, and recorded as read), not a second time as memory. */
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
  const blocks = result.attachments.map(
    (a) =>
      `<attachment type="${a.type}"` +
      `${(a.type === "file" || a.type === "memory") && a.source ? ` source="${a.source}"` : ""}` +
      ` priority=${a.priority} tokens=${a.tokens}` +
      `${a.truncated ? " truncated" : ""}>\n${a.content}\n</attachment>`,
  );
  const dropped = result.dropped.map((d) => (typeof d === "string" ? d : JSON.stringify(d)));
  const summary =
    `[${result.attachments.length} attachment(s), ${result.used_tokens} of ${result.budget_tokens} tokens` +
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
    const lines = [`${kind}${error.message}`];
    const suggestions = error.data?.suggestions ?? [];
    if (suggestions.length && !suggestions.some((s) => error.message.includes(s))) {
      lines.push(`Did you mean: ${suggestions.join(", ")}`);
    }
    const diff = error.data?.diff;
    if (typeof diff === "string" && diff && !error.message.includes(diff)) {
      lines.push(diff);
    }
    return lines.join("\n");
  }
  return error instanceof Error ? error.message : String(error);
}

/** Parts -> the tool result VS Code hands to the model. */
export function toToolResult(parts: Part[]): vscode.LanguageModelToolResult {
  const converted: unknown[] = [];
  for (const part of parts) {
    if (part.kind === "text") {
      converted.push(new vscode.LanguageModelTextPart(part.text));
      continue;
    }
    const image = vscodeapi.imagePart(Buffer.from(part.base64, "base64"), part.mimeType);
    converted.push(
      image ??
        new vscode.LanguageModelTextPart(
          `[an image (${part.mimeType}) that this VS Code cannot pass to the model]`,
        ),
    );
  }
  return new vscode.LanguageModelToolResult(converted as vscode.LanguageModelTextPart[]);
}

// --- the tools ---------------------------------------------------------------------------

export interface ToolContext {
  /** The running server's connection, or undefined when it is not running. */
  client(): RequestSender | undefined;
  session(): string;
  activeEditor(): ActiveEditor | undefined;
  /** Called after each call (the status bar refreshes its stats). */
  afterCall?(method: string): void;
}

async function call<R>(
  context: ToolContext,
  method: string,
  params: unknown,
  token?: vscode.CancellationToken,
): Promise<R> {
  const client = context.client();
  if (!client) {
    throw new Error(
      "readkeeper is not running. Ask the user to run the command 'readkeeper: Restart Server' " +
        "(its log says why it stopped).",
    );
  }
  try {
    return await client.sendRequest<R>(method, params, token);
  } catch (error) {
    throw new Error(errorMessage(error, method));
  } finally {
    context.afterCall?.(method);
  }
}

export function readTool(context: ToolContext): vscode.LanguageModelTool<ReadInput> {
  return {
    prepareInvocation(options) {
      return { invocationMessage: `Reading ${options.input.file_path}` };
    },
    async invoke(options, token) {
      const result = await call<ReadResult>(
        context,
        Methods.read,
        readParams(options.input, context.session()),
        token,
      );
      return toToolResult(renderReadResult(result));
    },
  };
}

function fence(body: string): string {
  const ticks = body.includes("```") ? "````" : "```";
  return `${ticks}\n${body}\n${ticks}`;
}

export function editConfirmation(input: EditInput): { title: string; message: string } {
  const all = input.replace_all ? " (every occurrence)" : "";
  return {
    title: "Edit file?",
    message:
      `readkeeper will edit \`${input.file_path}\`${all}, unless it changed since the agent read it.\n\n` +
      `Replace:\n\n${fence(input.old_string)}\n\nwith:\n\n${fence(input.new_string)}`,
  };
}

export function writeConfirmation(input: WriteInput): { title: string; message: string } {
  const lines = input.content.split("\n").length;
  const preview = input.content.split("\n").slice(0, 20).join("\n");
  return {
    title: "Write file?",
    message:
      `readkeeper will write ${lines} line(s) to \`${input.file_path}\` (creating it, or replacing ` +
      `it if it is unchanged since the agent read it).\n\n${fence(preview)}` +
      (lines > 20 ? `\n(${lines - 20} more lines)` : ""),
  };
}

export function editTool(context: ToolContext): vscode.LanguageModelTool<EditInput> {
  return {
    prepareInvocation(options) {
      const { title, message } = editConfirmation(options.input);
      return {
        invocationMessage: `Editing ${options.input.file_path}`,
        confirmationMessages: { title, message: new vscode.MarkdownString(message) },
      };
    },
    async invoke(options, token) {
      const result = await call<EditResult>(
        context,
        Methods.edit,
        editParams(options.input, context.session()),
        token,
      );
      return toToolResult(renderEditResult(result));
    },
  };
}

export function writeTool(context: ToolContext): vscode.LanguageModelTool<WriteInput> {
  return {
    prepareInvocation(options) {
      const { title, message } = writeConfirmation(options.input);
      return {
        invocationMessage: `Writing ${options.input.file_path}`,
        confirmationMessages: { title, message: new vscode.MarkdownString(message) },
      };
    },
    async invoke(options, token) {
      const result = await call<WriteResult>(
        context,
        Methods.write,
        writeParams(options.input, context.session()),
        token,
      );
      return toToolResult(renderWriteResult(result));
    },
  };
}

export function attachmentsTool(context: ToolContext): vscode.LanguageModelTool<AttachmentsInput> {
  return {
    prepareInvocation() {
      return { invocationMessage: "Collecting context" };
    },
    async invoke(options, token) {
      const result = await call<AttachmentsResult>(
        context,
        Methods.attachments,
        attachmentsParams(options.input, context.session(), context.activeEditor()),
        token,
      );
      return toToolResult(renderAttachments(result));
    },
  };
}

export const TOOL_NAMES = {
  read: "readkeeper_read",
  edit: "readkeeper_edit",
  write: "readkeeper_write",
  attachments: "readkeeper_attachments",
} as const;

export function registerTools(context: ToolContext): vscode.Disposable[] {
  return [
    vscodeapi.registerTool(TOOL_NAMES.read, readTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.edit, editTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.write, writeTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.attachments, attachmentsTool(context)),
  ];
}

/** The active editor and its selection (an LSP range, 0-based), as attachments take them. */
export function describeEditor(editor: vscode.TextEditor | undefined): ActiveEditor | undefined {
  if (!editor || editor.document.uri.scheme !== "file") {
    return undefined;
  }
  const active: ActiveEditor = { file_path: editor.document.uri.fsPath };
  const sel = editor.selection;
  if (sel && !sel.isEmpty) {
    active.selection = {
      start: { line: sel.start.line, character: sel.start.character },
      end: { line: sel.end.line, character: sel.end.character },
    };
  }
  return active;
}
