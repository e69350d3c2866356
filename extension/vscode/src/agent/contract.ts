// The rest of the readkeeper protocol as the extension uses it: the method names, the
// connection and error shapes, and the results server/protocol/ does not type yet
// (attachments, stats and forget answer plain dicts; edits and writes gain the
// editor's `diagnostics`). The typed requests and results are generated into
// ../protocol.ts; when server/protocol/ gets one of these, it moves there.

import type { EditResult, WriteResult } from "../protocol";

export const Methods = {
  read: "readkeeper/read",
  edit: "readkeeper/edit",
  write: "readkeeper/write",
  attachments: "readkeeper/attachments",
  changes: "readkeeper/changes",
  forget: "readkeeper/forget",
  stats: "readkeeper/stats",
  grep: "readkeeper/grep",
  didChangeDiagnostics: "readkeeper/didChangeDiagnostics",
  didChangeReadFiles: "readkeeper/didChangeReadFiles",
} as const;

/** The chat agent's tools (package.json's languageModelTools), by the readkeeper method
 * each calls. Sent at `initialize` as `agent_tools`: the server then names these tools in
 * the next steps its errors and notes give this client (`the readkeeper_read tool with
 * {...}`), never a method the agent has no tool for. */
export const AGENT_TOOLS = {
  read: "readkeeper_read",
  edit: "readkeeper_edit",
  write: "readkeeper_write",
  attachments: "readkeeper_attachments",
  grep: "readkeeper_grep",
} as const;

/** What the tools need from a connection: vscode-languageclient's LanguageClient and a
 * plain vscode-jsonrpc MessageConnection both fit. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: unknown): Promise<R>;
}

/** JSON-RPC error as vscode-jsonrpc's ResponseError carries it. */
export interface RpcErrorLike {
  code: number;
  message: string;
  data?: { kind?: string; suggestions?: string[]; [key: string]: unknown };
}

export const METHOD_NOT_FOUND = -32601;

export function isRpcError(error: unknown): error is RpcErrorLike {
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as RpcErrorLike).code === "number" &&
    typeof (error as RpcErrorLike).message === "string"
  );
}

/** An edit's result as it arrives: with the editor's diagnostics of the edited file,
 * when it had any (added by the server after the edit, as text or JSON). */
export type EditOutcome = EditResult & { diagnostics?: unknown };

export type WriteOutcome = WriteResult & { diagnostics?: unknown };

export interface Attachment {
  type: string;
  priority: number;
  tokens: number;
  content: string;
  truncated: boolean;
  source?: string;
}

export interface AttachmentsResult {
  attachments: Attachment[];
  dropped: unknown[];
  used_tokens: number;
  budget_tokens: number;
}

/** `readkeeper/grep`'s result (server/search/grep.py: one of matches, files, counts). */
export interface GrepMatch {
  file_path: string;
  line: number;
  text: string;
  context?: boolean;
}

export interface GrepResult {
  matches?: GrepMatch[];
  files?: string[];
  counts?: { file_path: string; count: number }[];
  partial?: boolean;
  note?: string;
  next?: Record<string, unknown>;
}

export interface Stats {
  total?: Record<string, unknown>;
  session?: Record<string, unknown>;
  files_in_read_state?: number;
  [key: string]: unknown;
}

export interface ForgetResult {
  session?: string;
  forgotten?: number;
}

/** An LSP range (`readkeeper/didChangeDiagnostics` carries LSP diagnostics). */
export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface LspDiagnostic {
  range: LspRange;
  severity?: number;
  code?: string | number;
  source?: string;
  message: string;
}

export interface DiagnosticsItem {
  uri: string;
  diagnostics: LspDiagnostic[];
  version?: number;
}

/** protocol.ts's DiagnosticsParams, with the items typed as the extension sends them. */
export interface DidChangeDiagnosticsParams {
  items: DiagnosticsItem[];
}
