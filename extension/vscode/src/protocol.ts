// GENERATED from server/protocol/ by scripts/gen_protocol.py: do not edit by hand.
// After a change to server/protocol/, regenerate (from the repository's root):
//   .venv/bin/python extension/vscode/scripts/gen_protocol.py
// tests/editors/test_vscode_extension.py fails while this file differs from what it generates.
// What the server sends that protocol/ does not type yet is in src/agent/contract.ts.

/** `readkeeper/read`: a file, and which part of it to read how. */
export interface ReadParams {
  file_path: string;
  /** 1-based first line (0 is refused: bad_params) */
  offset?: number;
  /** lines; the default limit when absent */
  limit?: number;
  /** PDF pages: "3", "1-5", "2,4-6" */
  pages?: string;
  session?: string;
  force?: boolean;
  /** PDF pages as PNG images (a `parts` result) instead of text */
  render?: boolean;
  /** notebook image outputs inline instead of placeholders */
  include_images?: boolean;
  /** "Class.method", "function": that symbol's lines (outline.py) */
  symbol?: string;
  /** only what the read would cost (tokens, lines), no content */
  estimate?: boolean;
  /**
   * How text lines are shown: "cat-n" (the number, a tab, the line) or "anchors" (the
   * number and a short hash of the line, for anchor_edits); default: the setting.
   */
  line_format?: "cat-n" | "anchors";
}

/** `readkeeper/forget`: the session, and the paths it no longer holds (all if none). */
export interface ForgetParams {
  session?: string;
  paths?: string[];
}

/**
 * `readkeeper/stats`: the session whose counters to report beside the total, and whether
 * to send the journal too (each call: what, when, at what cost).
 */
export interface StatsParams {
  session?: string;
  /**
   * With the journal (`history`): the newest calls of every session, each {at_ms, session,
   * kind, path, tokens, saved, ms, error?}, with its cap and how many older calls were
   * dropped.
   */
  history?: boolean;
}

/** Numbered lines of a text file, and what was left out of them. */
export interface TextFile {
  file_path: string;
  content: string;
  start_line: number;
  num_lines: number;
  /** None when a ranged read of a huge file stopped before EOF */
  total_lines: number | null;
  tokens: number;
  encoding: string;
  line_ending: string;
  partial: boolean;
  next_offset?: number;
  note?: string;
  unsaved?: boolean;
  buffer_version?: number;
  truncated_lines?: number;
  /**
   * How many of the lines shown hold a line break other than the LF that ends them (a lone
   * CR, VT, FF, U+001C-001E, NEL, U+2028, U+2029): each is shown escaped as its Python
   * spelling (`\r`, `\x0c`, `\u2028`), so the line stays one numbered line for any
   * consumer; an edit's `old_string` may give it as shown or as the character.
   */
  escaped_lines?: number;
  /**
   * Never sent since issue 34 (every count is exact, before the token table loads too);
   * kept for clients of older servers, where True meant `tokens` was an upper bound (the
   * text's UTF-8 bytes), a read made before the table had loaded.
   */
  tokens_upper_bound?: boolean;
}

/** `readkeeper/read` of a text file. */
export interface TextResult {
  file: TextFile;
  type: "text";
}

/**
 * The stub a re-read of an unchanged range gets instead of the content: what the agent
 * holds (the range, the file's lines, how and when it got them), and what changed around
 * it.
 */
export interface UnchangedFile {
  file_path: string;
  /** what the agent holds, in words (read/unchanged.py) */
  note?: string;
  /** the held lines as numbered now (None: not lines) */
  start_line?: number;
  num_lines?: number;
  /** the file's lines now */
  total_lines: number | null;
  /** How the agent got it: "read", "outline", "symbol", or its own "write" or "edit". */
  obtained_by: "read" | "outline" | "symbol" | "write" | "edit";
  /** when the session wrote or edited it, ISO 8601 UTC */
  obtained_at?: string;
  /**
   * The file changed outside the held lines: "before", "after", "before and after", or
   * "outside" (somewhere else, not known where).
   */
  changed_outside?: string;
  /** where the held lines were, when they moved */
  previous_start_line?: number;
  /** for a symbol read: the symbol */
  symbol?: string;
  /** where the lines after the held ones start */
  next_offset?: number;
  /** the editor buffer's, when that is what it holds */
  buffer_version?: number;
  /**
   * For an image, PDF or notebook, what the agent holds in the file's terms (None for
   * lines): the answer the stub stands for ("pdf" page text, "parts" rendered pages,
   * "image", "notebook") and what that answer cost.
   */
  held_type?: "image" | "pdf" | "parts" | "notebook";
  tokens?: number;
  /** the PDF's pages held, e.g. "1-5" or "2,4-6" */
  shown_pages?: string;
  page_count?: number;
  /** the pages after them, for a view cut short */
  next_pages?: string;
  /** the notebook's cells held, numbered from 1 (offset) */
  first_cell?: number;
  num_cells?: number;
  total_cells?: number;
  /** whether the cells' output images were sent */
  include_images?: boolean;
  /** the image as sent */
  display_width?: number;
  display_height?: number;
  /** the image file's own size */
  original_width?: number;
  original_height?: number;
}

/** `readkeeper/read` of a range the session holds and that has not changed. */
export interface UnchangedResult {
  file: UnchangedFile;
  type: "file_unchanged";
}

/** `estimate: true`: what a read with the same parameters would send, no content. */
export interface EstimateFile {
  file_path: string;
  tokens: number;
  num_lines: number;
  total_lines: number | null;
  partial: boolean;
  note: string;
}

/** `readkeeper/read` with `estimate`: what a read would cost, without the content. */
export interface EstimateResult {
  file: EstimateFile;
  type: "estimate";
}

/** A re-read of a file the agent holds whole that changed since: the diff only. */
export interface ChangedFile {
  file_path: string;
  /** unified, from the content the agent holds to the current one */
  diff: string;
  total_lines: number;
  tokens: number;
  note: string;
}

/** `readkeeper/read` of a file the session holds whole that changed: the diff. */
export interface ChangedResult {
  file: ChangedFile;
  type: "file_changed";
}

/** A whole read of a source file too big to send whole: its symbols and first lines. */
export interface OutlineFile {
  file_path: string;
  language: string;
  /**
   * One line per symbol, "12-40 class Reader", nested symbols indented two spaces; "(+N
   * inside)" marks a symbol whose nested ones were left out to keep it small.
   */
  outline: string;
  /** symbols in the file, at most MAX_OUTLINE_SYMBOLS (the walk stops there) */
  symbols: number;
  shown_symbols: number;
  /** the first lines, numbered as in a `text` result */
  content: string;
  num_lines: number;
  total_lines: number;
  /** of this result */
  tokens: number;
  /** about what the file's lines cost read whole */
  file_tokens: number;
  encoding: string;
  line_ending: string;
  partial: boolean;
  /** the symbol or ranged read that gets any part */
  note?: string;
  unsaved?: boolean;
  buffer_version?: number;
}

/** `readkeeper/read` of a source file too big to send whole: its outline. */
export interface OutlineResult {
  file: OutlineFile;
  type: "outline";
}

/**
 * Sizes as displayed (after EXIF rotation): multiply display coordinates by original_width
 * / display_width to map them back onto the original.
 */
export interface ImageDimensions {
  original_width: number;
  original_height: number;
  display_width: number;
  display_height: number;
}

/** An image as sent: its bytes (base64), type and sizes. */
export interface ImageFile {
  file_path: string;
  base64: string;
  /** of the payload, which may be re-encoded: see `note` */
  media_type: string;
  /** bytes of the file */
  original_size: number;
  dimensions: ImageDimensions;
  /** display_width * display_height / 750, rounded up */
  tokens: number;
  /** the file's own format, e.g. "PNG" */
  format: string;
  /** for animated images: frames in the file (the first is shown) */
  frames?: number;
  note?: string;
}

/** `readkeeper/read` of an image. */
export interface ImageResult {
  file: ImageFile;
  type: "image";
}

/** A PDF's text, page by page, and where to go on when pages were left out. */
export interface PdfFile {
  file_path: string;
  /** one block per page, each headed by "--- page N ---" */
  content: string;
  page_count: number;
  /** e.g. "1-5" */
  shown_pages: string;
  tokens: number;
  original_size: number;
  partial: boolean;
  /** where to continue when `partial` */
  next_pages?: string;
  note?: string;
  /** the PDF itself, when the `pdf_inline` setting is on */
  base64?: string;
  media_type?: string;
}

/** `readkeeper/read` of a PDF as text. */
export interface PdfResult {
  file: PdfFile;
  type: "pdf";
}

/** PDF pages rendered to PNG files; read each one (an `image` result) to see it. */
export interface PartsFile {
  file_path: string;
  count: number;
  output_dir: string;
  /** PNG paths, one per page, in page order */
  pages: string[];
  page_numbers: number[];
  page_count: number;
  /** of this result; reading the images costs `image_tokens` more */
  tokens: number;
  image_tokens: number;
  original_size: number;
  partial: boolean;
  next_pages?: string;
  note?: string;
}

/** `readkeeper/read` of PDF pages rendered as images. */
export interface PartsResult {
  file: PartsFile;
  type: "parts";
}

/** An image a notebook cell's output holds. */
export interface NotebookImage {
  media_type: string;
  width?: number;
  height?: number;
  /** of the image itself (decoded) */
  bytes: number;
  /** with `include_images`: fitted to the image budget */
  base64?: string;
  display_width?: number;
  display_height?: number;
  tokens?: number;
  /** why an image asked for (`include_images`) is not shown */
  note?: string;
}

/** One output of a notebook cell, as text, with its images apart. */
export interface NotebookOutput {
  /** stream, execute_result, display_data, error */
  output_type: string;
  /** stream: stdout or stderr */
  name?: string;
  /** stream text, or the text/plain (or markdown, latex) data */
  text?: string;
  execution_count?: number;
  ename?: string;
  evalue?: string;
  /** trimmed, without terminal colours */
  traceback?: string;
  images?: NotebookImage[];
  /** what was cut or left out (HTML, JavaScript, widgets) */
  note?: string;
}

/** One notebook cell: its id, type, source and outputs. */
export interface NotebookCell {
  /** its name: its own id, "cell-N" without one, "@N" (N = index) when shared */
  cell_id: string;
  /** 0-based position in the notebook */
  index: number;
  /** code, markdown or raw */
  cell_type: string;
  source: string;
  execution_count?: number;
  /** code cells only */
  outputs?: NotebookOutput[];
  note?: string;
}

/** A notebook as structured cells, and where to go on when cells were left out. */
export interface NotebookFile {
  file_path: string;
  cells: NotebookCell[];
  total_cells: number;
  /** as read, e.g. "4.5" or "3.0" (v3 is upgraded to v4 for the view) */
  nbformat: string;
  tokens: number;
  language?: string;
  partial: boolean;
  /** cells are numbered from 1 for offset/limit */
  next_offset?: number;
  note?: string;
  unsaved?: boolean;
  buffer_version?: number;
  /** true when the read asked for the output images */
  include_images?: boolean;
}

/** `readkeeper/read` of a notebook. */
export interface NotebookResult {
  file: NotebookFile;
  type: "notebook";
}

export type ReadResult =
  | TextResult
  | UnchangedResult
  | ChangedResult
  | EstimateResult
  | OutlineResult
  | ImageResult
  | PdfResult
  | PartsResult
  | NotebookResult;

/** A zero-based line and character in an editor's document. */
export interface Position {
  /** 0-based, as in LSP */
  line: number;
  character?: number;
}

/** A span of an editor's document, from `start` to `end`. */
export interface Range {
  start: Position;
  end: Position;
}

/** What the user is looking at, as the client sends it with an attachments request. */
export interface ActiveEditor {
  file_path: string;
  selection?: Range;
  /** the document text, when the client sends it */
  text?: string;
}

/** `readkeeper/attachments`: the session, its budget, and the editor's state. */
export interface AttachmentsParams {
  session?: string;
  budget_tokens?: number;
  types?: string[];
  /** paths the user attached or @-mentioned */
  mentions?: string[];
  active_editor?: ActiveEditor;
  /**
   * Skip this many diagnostics (new ones first, then the rest), to get what a cut left
   * out: the cut's note gives the number.
   */
  diagnostics_offset?: number;
}

/** `readkeeper/didChangeDiagnostics`: `{items: [{uri, diagnostics, version?}]}`. */
export interface DiagnosticsParams {
  items: Record<string, unknown>[];
}

/** `readkeeper/edit` of a text file: replace `old_string` with `new_string`. */
export interface EditParams {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
  session?: string;
}

/** One replacement of a batch (`edits`): `old_string` must occur once. */
export interface PlainEdit {
  old_string: string;
  new_string: string;
}

/**
 * One edit by anchors (`anchor_edits`), as an anchored read shows lines ("12ab": line 12,
 * whose content hashes to "ab"): replace or delete the lines `start`..`end` (`end`
 * defaults to `start`), or insert `lines` before or after `start`.
 */
export interface AnchorEdit {
  op: "replace" | "insert_after" | "insert_before" | "delete";
  start: string;
  end?: string;
  lines?: string[];
}

/**
 * `readkeeper/edit` of several places of one text file in one call, all or none: `edits`
 * (old_string/new_string pairs) or `anchor_edits` (lines named by anchors).
 */
export interface EditBatchParams {
  file_path: string;
  edits?: PlainEdit[];
  anchor_edits?: AnchorEdit[];
  session?: string;
}

/**
 * One file of a multi-file edit (`files`): one of `old_string`/`new_string`
 * (`replace_all?`), `edits` or `anchor_edits`, as `readkeeper/edit` takes them.
 */
export interface FileEdit {
  file_path: string;
  old_string?: string;
  new_string?: string;
  replace_all?: boolean;
  edits?: PlainEdit[];
  anchor_edits?: AnchorEdit[];
}

/**
 * `readkeeper/edit` of several files in one call (`files`): every file's edits land, or
 * none does; one `readkeeper/undo` takes them all back.
 */
export interface EditFilesParams {
  files: FileEdit[];
  session?: string;
}

/** An anchor whose line had moved (unambiguously, nearby) and was found there. */
export interface Relocation {
  anchor: string;
  /** where its line is now */
  line: number;
}

/** `readkeeper/write`: create a file, or replace all of one, with `content`. */
export interface WriteParams {
  file_path: string;
  content: string;
  session?: string;
}

/** The session's read-state after an edit or write: what the agent now knows. */
export interface ReadStateInfo {
  digest: string;
  total_lines: number;
  source: "disk" | "buffer";
  /** bytes on disk (None when only the editor buffer changed) */
  size?: number;
  mtime_ns?: number;
  /**
   * What a whole re-read will answer: "stub" (unchanged) or a diff once it changes, when
   * the agent holds all of this content (it wrote it, or edited what it held whole); else
   * "full", the file in full.
   */
  next_read: "full" | "stub";
}

/** What another program changed between the agent's read and its edit. */
export interface ExternalChange {
  /** unified diff, as read -> as found */
  diff: string;
  truncated: boolean;
  /** first and last changed line in the file as found ([] if none) */
  lines: number[];
}

/** What an edit did: how many replacements, where, and a numbered snippet of the first. */
export interface EditResult {
  file_path: string;
  replacements: number;
  /** numbered lines (as reads number them) around the first change */
  snippet: string;
  /** first line of the snippet */
  start_line: number;
  /** the first changed line of each replacement, in the new content */
  lines: number[];
  applied_to: "disk" | "buffer";
  encoding: string;
  line_ending: string;
  read_state: ReadStateInfo;
  /** the file had changed, disjointly, and the edit was merged */
  merged: boolean;
  external_change?: ExternalChange;
  note?: string;
  /** Anchor edits: anchors found where their line had moved to. */
  relocated?: Relocation[];
}

/**
 * What a write did: whether it created or changed the file, and its encoding and line
 * ending (an existing file keeps its own).
 */
export interface WriteResult {
  file_path: string;
  created: boolean;
  /** False when the content was already exactly this */
  changed: boolean;
  applied_to: "disk" | "buffer";
  total_lines: number;
  encoding: string;
  line_ending: string;
  read_state: ReadStateInfo;
  size?: number;
  note?: string;
}

/**
 * `readkeeper/edit` on a notebook cell: sent with `cell_id`/`new_source`/`edit_mode`
 * instead of `old_string`/`new_string`.
 */
export interface NotebookEditParams {
  file_path: string;
  /** the target; for "insert", the new cell goes after it */
  cell_id?: string;
  /** required for "replace" and "insert" */
  new_source?: string;
  edit_mode?: "replace" | "insert" | "delete";
  /** insert: default code */
  cell_type?: "code" | "markdown" | "raw";
  session?: string;
}

/** What a notebook cell edit did: which cell, where it is now, and how many there are. */
export interface NotebookEditResult {
  file_path: string;
  edit_mode: "replace" | "insert" | "delete";
  /** the cell edited, inserted or deleted */
  cell_id: string;
  /** its position (for delete: where it was) */
  index: number;
  total_cells: number;
  read_state: ReadStateInfo;
  cell_type?: string;
  /** the notebook had changed elsewhere, and the edit was merged */
  merged: boolean;
  external_change?: ExternalChange;
  note?: string;
}

/** `readkeeper/changes`: the session whose change notices to take. */
export interface ChangesParams {
  session?: string;
}

export type ChangeKind = "modified" | "created" | "deleted" | "moved";

/** A file this session read that changed since: what changed, never who changed it. */
export interface FileChange {
  file_path: string;
  /** "created": it had been reported deleted or moved, and is back */
  kind: ChangeKind;
  /** unified diff from what the session saw to what is there now ("" if none) */
  diff: string;
  /** the diff was cut, or could not be made: re-read to see the file */
  truncated: boolean;
  /** where a "moved" file went */
  new_path?: string;
  /** lines in the file now */
  total_lines: number | null;
  note?: string;
}

/** `readkeeper/changes`: the files the session read that changed since. */
export interface ChangesResult {
  changes: FileChange[];
  /** Changes left for the next call, when this one reached its token cap. */
  remaining?: number;
  /**
   * Why the list may not hold every change (the watcher is not watching, or polls a root,
   * or more read files lie where no watch hears than one call looks at), and what to do:
   * re-read before relying on a file. None: it hears them all.
   */
  note?: string;
}

/**
 * `readkeeper/didChangeReadFiles`, server to client: new changes to files a session read,
 * each sent once (the same changes stay available to `readkeeper/changes`, which is what
 * the agent reads).
 */
export interface DidChangeReadFilesParams {
  session: string;
  changes: FileChange[];
}
