// The readkeeper protocol as the extension uses it (the contract is DESIGN.md /
// README.md "Protocol"). Fields the extension does not read are left as `unknown`.

export const Methods = {
  read: "readkeeper/read",
  edit: "readkeeper/edit",
  write: "readkeeper/write",
  attachments: "readkeeper/attachments",
  changes: "readkeeper/changes",
  forget: "readkeeper/forget",
  stats: "readkeeper/stats",
  didChangeDiagnostics: "readkeeper/didChangeDiagnostics",
  didChangeReadFiles: "readkeeper/didChangeReadFiles",
} as const;

/** What the tools need from a connection: vscode-languageclient's LanguageClient and a
 * plain vscode-jsonrpc MessageConnection both fit. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: unknown): Promise<R>;
}

export interface NotificationSender {
  sendNotification(method: string, params: unknown): Promise<void> | void;
}

export interface ReadParams {
  file_path: string;
  offset?: number;
  limit?: number;
  pages?: string;
  session?: string;
  force?: boolean;
}

export interface EditParams {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
  session?: string;
}

export interface WriteParams {
  file_path: string;
  content: string;
  session?: string;
}

export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** The editor the user is looking at, sent with attachment requests. The server takes
 * the text from the synced buffer; `text` is only for documents it cannot see. */
export interface ActiveEditor {
  file_path: string;
  selection?: LspRange;
  text?: string;
}

export interface AttachmentsParams {
  session?: string;
  budget_tokens?: number;
  types?: string[];
  mentions?: string[];
  active_editor?: ActiveEditor;
}

export interface TextFile {
  file_path: string;
  content: string;
  start_line: number;
  num_lines: number;
  total_lines: number | null;
  tokens: number;
  partial?: boolean;
  next_offset?: number;
  note?: string;
  unsaved?: boolean;
  buffer_version?: number;
  truncated_lines?: number;
}

export interface ImageFile {
  file_path: string;
  base64: string;
  media_type: string;
  original_size: number;
  dimensions: {
    original_width: number;
    original_height: number;
    display_width: number;
    display_height: number;
  };
  tokens: number;
  note?: string;
}

export interface PdfFile {
  file_path: string;
  content: string;
  page_count: number;
  pages: string;
  tokens: number;
  partial?: boolean;
  next_pages?: string;
  note?: string;
}

export interface PartsFile {
  file_path: string;
  count: number;
  output_dir: string;
  pages: string[];
  page_numbers: number[];
  page_count: number;
  partial?: boolean;
  next_pages?: string;
  note?: string;
}

export interface NotebookOutput {
  output_type: string;
  name?: string;
  text?: string;
  execution_count?: number;
  ename?: string;
  evalue?: string;
  traceback?: string;
  images?: { media_type: string; width?: number; height?: number; base64?: string }[];
  note?: string;
}

export interface NotebookFile {
  file_path: string;
  cells: {
    cell_id: string;
    index: number;
    cell_type: string;
    source: string;
    execution_count?: number;
    outputs?: NotebookOutput[];
    note?: string;
  }[];
  total_cells: number;
  language?: string;
  partial?: boolean;
  next_offset?: number;
  note?: string;
  unsaved?: boolean;
}

export type ReadResult =
  | { type: "text"; file: TextFile }
  | { type: "file_unchanged"; file: { file_path: string } }
  | { type: "image"; file: ImageFile }
  | { type: "pdf"; file: PdfFile }
  | { type: "parts"; file: PartsFile }
  | { type: "notebook"; file: NotebookFile };

export interface EditResult {
  file_path: string;
  replacements: number;
  snippet?: string;
  applied_to?: "disk" | "buffer";
  merged?: boolean;
  external_change?: { diff: string; truncated: boolean; lines: number[] };
  diagnostics?: unknown;
  note?: string;
  [extra: string]: unknown;
}

export interface WriteResult {
  file_path: string;
  created: boolean;
  changed?: boolean;
  applied_to?: "disk" | "buffer";
  total_lines?: number;
  external_change?: undefined;
  merged?: undefined;
  diagnostics?: unknown;
  note?: string;
  [extra: string]: unknown;
}

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

export interface Change {
  file_path: string;
  kind: string;
  diff?: string;
  truncated?: boolean;
}

export interface ChangesResult {
  changes: Change[];
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

export interface DidChangeDiagnosticsParams {
  items: DiagnosticsItem[];
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
