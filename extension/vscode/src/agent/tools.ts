// readkeeper's read, edit, write, attachments and grep as Language Model Tools for the chat
// panel's agent mode. The conversions (tool input -> request params, parts -> tool
// result) are plain functions, tested without VS Code; render.ts words the results.

import * as vscode from "vscode";
import * as vscodeapi from "../common/vscodeapi";
import type {
  ActiveEditor,
  AnchorEdit,
  AttachmentsParams,
  EditBatchParams,
  EditParams,
  PlainEdit,
  ReadParams,
  ReadResult,
  WriteParams,
} from "../protocol";
import {
  type AttachmentsResult,
  type EditOutcome,
  type GrepResult,
  Methods,
  type RequestSender,
  type WriteOutcome,
} from "./contract";
import {
  errorMessage,
  type Part,
  renderAttachments,
  renderEditResult,
  renderGrep,
  renderReadResult,
  renderWriteResult,
} from "./render";
import { code, count, fence, name } from "./quoting";

// --- tool inputs -> params ---------------------------------------------------------------

export interface ReadInput {
  file_path: string;
  offset?: number | string;
  limit?: number | string;
  pages?: string;
  symbol?: string;
  force?: boolean;
  render?: boolean;
  include_images?: boolean;
  estimate?: boolean;
  line_format?: "cat-n" | "anchors";
}

export interface EditInput {
  file_path: string;
  old_string?: string;
  new_string?: string;
  replace_all?: boolean;
  // Several replacements in one call, all or none.
  edits?: PlainEdit[];
  // Lines named by the anchors a read with line_format "anchors" shows ("12ab").
  anchor_edits?: AnchorEdit[];
}

export interface WriteInput {
  file_path: string;
  content: string;
}

export interface AttachmentsInput {
  budget_tokens?: number | string;
  types?: string[];
  mentions?: string[];
  // A cut diagnostics list names this, to continue where it stopped.
  diagnostics_offset?: number | string;
}

export interface GrepInput {
  pattern: string;
  path?: string;
  glob?: string;
  context?: number | string;
  case_sensitive?: boolean;
  multiline?: boolean;
  output?: "matches" | "files" | "counts";
  max_matches?: number | string;
  offset?: number | string;
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
    symbol: input.symbol || undefined,
    force: input.force,
    render: input.render,
    include_images: input.include_images,
    estimate: input.estimate,
    line_format: input.line_format,
    session,
  });
}

/** The edit's params: every field the agent gave is passed on, so a call mixing the
 * forms reaches the server, which refuses it saying which call works. */
export function editParams(input: EditInput, session: string): EditParams | EditBatchParams {
  return defined({
    file_path: requirePath(input),
    old_string: input.old_string,
    new_string: input.new_string,
    replace_all: input.replace_all,
    edits: input.edits,
    anchor_edits: input.anchor_edits,
    session,
  }) as EditParams | EditBatchParams;
}

export function writeParams(input: WriteInput, session: string): WriteParams {
  return { file_path: requirePath(input), content: input.content, session };
}

export function grepParams(input: GrepInput, session: string): Record<string, unknown> {
  if (typeof input?.pattern !== "string" || input.pattern === "") {
    throw new Error("pattern is required: give a regular expression to search for.");
  }
  return defined({
    pattern: input.pattern,
    path: input.path || undefined,
    glob: input.glob || undefined,
    context: input.context,
    case_sensitive: input.case_sensitive,
    multiline: input.multiline,
    output: input.output || undefined,
    max_matches: input.max_matches,
    offset: input.offset,
    session,
  });
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
    diagnostics_offset: input?.diagnostics_offset as number | undefined,
    active_editor: activeEditor,
  });
}

// --- parts -> the tool result -----------------------------------------------------------

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
      return { invocationMessage: `Reading ${name(options.input.file_path)}` };
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

export function editConfirmation(input: EditInput): { title: string; message: string } {
  const all = input.replace_all ? " (every occurrence)" : "";
  const target = `readkeeper will edit ${code(name(input.file_path))}`;
  if (input.anchor_edits?.length) {
    const listed = input.anchor_edits
      .map((e) => code(`${e.op} ${e.start}${e.end ? `..${e.end}` : ""}`) + (e.lines?.length ? `:\n${fence(e.lines.join("\n"))}` : ""))
      .join("\n\n");
    return {
      title: "Edit file?",
      message: `${target} by ${count(input.anchor_edits.length, "anchored edit")}, all or none, only where the lines are still as the agent read them.\n\n${listed}`,
    };
  }
  if (input.edits?.length) {
    const listed = input.edits
      .map((e) => `Replace:\n\n${fence(e.old_string)}\n\nwith:\n\n${fence(e.new_string)}`)
      .join("\n\n");
    return {
      title: "Edit file?",
      message: `${target} in ${count(input.edits.length, "place")}, all or none, unless it changed since the agent read it.\n\n${listed}`,
    };
  }
  return {
    title: "Edit file?",
    message:
      `${target}${all}, unless it changed since the agent read it.\n\n` +
      `Replace:\n\n${fence(input.old_string ?? "")}\n\nwith:\n\n${fence(input.new_string ?? "")}`,
  };
}

export function writeConfirmation(input: WriteInput): { title: string; message: string } {
  const lines = input.content.split("\n").length;
  const preview = input.content.split("\n").slice(0, 20).join("\n");
  return {
    title: "Write file?",
    message:
      `readkeeper will write ${count(lines, "line")} to ${code(name(input.file_path))} (creating it, or replacing ` +
      `it if it is unchanged since the agent read it).\n\n${fence(preview)}` +
      (lines > 20 ? `\n(${lines - 20} more lines)` : ""),
  };
}

export function editTool(context: ToolContext): vscode.LanguageModelTool<EditInput> {
  return {
    prepareInvocation(options) {
      const { title, message } = editConfirmation(options.input);
      return {
        invocationMessage: `Editing ${name(options.input.file_path)}`,
        confirmationMessages: { title, message: new vscode.MarkdownString(message) },
      };
    },
    async invoke(options, token) {
      const result = await call<EditOutcome>(
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
        invocationMessage: `Writing ${name(options.input.file_path)}`,
        confirmationMessages: { title, message: new vscode.MarkdownString(message) },
      };
    },
    async invoke(options, token) {
      const result = await call<WriteOutcome>(
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

// Search, because its lines count as read: readkeeper_edit may then change them without
// a read of the whole file, and a stale check covers them. VS Code's own search tools
// cannot tell readkeeper what the model saw. Finding files by name and listing folders
// show no content, so VS Code's own tools for those lose nothing: none is offered here.
export function grepTool(context: ToolContext): vscode.LanguageModelTool<GrepInput> {
  return {
    prepareInvocation(options) {
      return { invocationMessage: `Searching for ${name(options.input.pattern)}` };
    },
    async invoke(options, token) {
      const result = await call<GrepResult>(
        context,
        Methods.grep,
        grepParams(options.input, context.session()),
        token,
      );
      return toToolResult(renderGrep(result));
    },
  };
}

export const TOOL_NAMES = {
  read: "readkeeper_read",
  edit: "readkeeper_edit",
  write: "readkeeper_write",
  attachments: "readkeeper_attachments",
  grep: "readkeeper_grep",
} as const;

export function registerTools(context: ToolContext): vscode.Disposable[] {
  return [
    vscodeapi.registerTool(TOOL_NAMES.read, readTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.edit, editTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.write, writeTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.attachments, attachmentsTool(context)),
    vscodeapi.registerTool(TOOL_NAMES.grep, grepTool(context)),
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
