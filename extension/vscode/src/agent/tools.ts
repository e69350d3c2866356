// readkeeper's read, edit, write, attachments and grep as Language Model Tools for the chat
// panel's agent mode. The conversions (tool input -> request params, parts -> tool
// result) are plain functions, tested without VS Code; render.ts words the results.

import * as vscode from "vscode";
import * as vscodeapi from "../common/vscodeapi";
import type {
  ActiveEditor,
  AttachmentsParams,
  EditBatchParams,
  EditParams,
  FileEdit,
  ReadParams,
  WriteParams,
} from "../protocol";
import { AGENT_TOOLS, Methods, type RequestSender } from "./contract";
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

// One file's edit, as the protocol names it: a replacement, several in one call (`edits`,
// all or none), or lines named by the anchors a read with line_format "anchors" shows.
export type EditInput = FileEdit;

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

/** A call's params: the named fields of the input, as given (numbers given as strings
 * too: the server coerces them), and the session. An absent field (undefined or null) is
 * dropped, and so is an empty one (a string or a list) where it is `blankIsAbsent` (an
 * empty path or filter means none); elsewhere an empty string is a value (an edit that
 * deletes). A field not named is not sent. */
function paramsOf<I extends object>(
  input: I,
  session: string,
  fields: readonly (keyof I & string)[],
  blankIsAbsent: readonly (keyof I & string)[] = [],
): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const field of fields) {
    const value: unknown = input[field];
    const blank = value === "" || (Array.isArray(value) && value.length === 0);
    if (value !== undefined && value !== null && !(blank && blankIsAbsent.includes(field))) {
      params[field] = value;
    }
  }
  params.session = session;
  return params;
}

export function readParams(input: ReadInput, session: string): ReadParams {
  const fields = [
    "offset", "limit", "pages", "symbol", "line_format", "force", "render", "include_images", "estimate",
  ] as const;
  const params = paramsOf(input, session, fields, ["pages", "symbol"]);
  return { file_path: requirePath(input), ...params } as ReadParams;
}

/** The edit's params: every field the agent gave is passed on, so a call mixing the
 * forms reaches the server, which refuses it saying which call works. */
export function editParams(input: EditInput, session: string): EditParams | EditBatchParams {
  const fields = ["old_string", "new_string", "replace_all", "edits", "anchor_edits"] as const;
  const params = paramsOf(input, session, fields);
  return { file_path: requirePath(input), ...params } as EditParams | EditBatchParams;
}

export function writeParams(input: WriteInput, session: string): WriteParams {
  return { file_path: requirePath(input), content: input.content, session };
}

export function grepParams(input: GrepInput, session: string): Record<string, unknown> {
  if (typeof input?.pattern !== "string" || input.pattern === "") {
    throw new Error("pattern is required: give a regular expression to search for.");
  }
  const fields = [
    "pattern", "path", "glob", "context", "case_sensitive", "multiline", "output", "max_matches", "offset",
  ] as const;
  return paramsOf(input, session, fields, ["path", "glob", "output"]);
}

export function attachmentsParams(
  input: AttachmentsInput | undefined,
  session: string,
  activeEditor: ActiveEditor | undefined,
): AttachmentsParams {
  const given = { ...input, active_editor: activeEditor };
  const fields = ["budget_tokens", "types", "mentions", "diagnostics_offset", "active_editor"] as const;
  return paramsOf(given, session, fields, ["types", "mentions"]) as AttachmentsParams;
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

/** A tool: its invocation message (and the user's confirmation, for a change), then
 * the call its input makes and the result's rendering. */
function tool<I, R>(
  context: ToolContext,
  prepare: (input: I) => vscode.PreparedToolInvocation,
  method: string,
  params: (input: I, session: string) => unknown,
  render: (result: R) => Part[],
): vscode.LanguageModelTool<I> {
  return {
    prepareInvocation: (options) => prepare(options.input),
    async invoke(options, token) {
      const result = await call<R>(context, method, params(options.input, context.session()), token);
      return toToolResult(render(result));
    },
  };
}

function confirmed(
  invocationMessage: string,
  confirmation: { title: string; message: string },
): vscode.PreparedToolInvocation {
  const { title, message } = confirmation;
  return { invocationMessage, confirmationMessages: { title, message: new vscode.MarkdownString(message) } };
}

export function readTool(context: ToolContext): vscode.LanguageModelTool<ReadInput> {
  const prepare = (input: ReadInput) => ({ invocationMessage: `Reading ${name(input.file_path)}` });
  return tool(context, prepare, Methods.read, readParams, renderReadResult);
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
  const prepare = (input: EditInput) => confirmed(`Editing ${name(input.file_path)}`, editConfirmation(input));
  return tool(context, prepare, Methods.edit, editParams, renderEditResult);
}

export function writeTool(context: ToolContext): vscode.LanguageModelTool<WriteInput> {
  const prepare = (input: WriteInput) => confirmed(`Writing ${name(input.file_path)}`, writeConfirmation(input));
  return tool(context, prepare, Methods.write, writeParams, renderWriteResult);
}

export function attachmentsTool(context: ToolContext): vscode.LanguageModelTool<AttachmentsInput> {
  const prepare = () => ({ invocationMessage: "Collecting context" });
  const params = (input: AttachmentsInput, session: string) =>
    attachmentsParams(input, session, context.activeEditor());
  return tool(context, prepare, Methods.attachments, params, renderAttachments);
}

// Search, because its lines count as read: readkeeper_edit may then change them without
// a read of the whole file, and a stale check covers them. VS Code's own search tools
// cannot tell readkeeper what the model saw. Finding files by name and listing folders
// show no content, so VS Code's own tools for those lose nothing: none is offered here.
export function grepTool(context: ToolContext): vscode.LanguageModelTool<GrepInput> {
  const prepare = (input: GrepInput) => ({ invocationMessage: `Searching for ${name(input.pattern)}` });
  return tool(context, prepare, Methods.grep, grepParams, renderGrep);
}

export const TOOL_NAMES = AGENT_TOOLS;

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
