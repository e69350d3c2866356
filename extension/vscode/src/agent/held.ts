// What a file_unchanged stub says the agent holds, in words: the server's own note
// (read/unchanged.py words it once for every front end), or the same said from the
// stub's fields when a note is missing. Kept apart from render.ts's escaping.

import type { ReadStateInfo, UnchangedFile } from "../protocol";
import { lines as fileText, name } from "./quoting";

/** The prefix every stub's text starts with. */
export const UNCHANGED_NOTE = "File unchanged";

/** The stub as the model reads it: the path, then what it holds and what changed around it. */
export function heldWords(file: UnchangedFile): string {
  return `${UNCHANGED_NOTE}: ${name(file.file_path)}: ${fileText(file.note ?? fromFields(file))}`;
}

/** An image, PDF or notebook stub's fields in words: the pages, cells or image held. */
function documentWords(f: UnchangedFile): string | undefined {
  let held: string | undefined;
  let rest = "";
  if ((f.held_type === "pdf" || f.held_type === "parts") && f.shown_pages != null) {
    const as = f.held_type === "parts" ? "rendered as PNG images" : "as text";
    held = `pages ${f.shown_pages} of ${f.page_count ?? "?"} ${as}`;
    if (f.next_pages != null) rest = `; the rest: pages "${f.next_pages}"${f.held_type === "parts" ? ", render: true" : ""}`;
  } else if (f.held_type === "notebook" && f.first_cell != null && f.num_cells != null) {
    const images = f.include_images ? "and images" : "(images as placeholders)";
    held = `cells ${f.first_cell}-${f.first_cell + f.num_cells - 1} of ${f.total_cells ?? "?"}, with outputs ${images}`;
    if (f.next_offset != null) rest = `; the rest starts at offset ${f.next_offset}`;
  } else if (f.held_type === "image" && f.display_width != null) {
    held = `the image as sent to you (${f.display_width}x${f.display_height}, from ${f.original_width}x${f.original_height}, ${f.tokens} tokens)`;
  }
  return held && `${held}, unchanged since your read${rest}. Your copy is current (force: true resends).`;
}

function fromFields(f: UnchangedFile): string {
  const document = documentWords(f);
  if (document) return document;
  if (f.start_line == null || f.num_lines == null) {
    return "unchanged since your read; your copy is current (force: true resends).";
  }
  const end = f.start_line + f.num_lines - 1;
  const of = f.total_lines != null ? ` of ${f.total_lines}` : "";
  let lines = `lines ${f.start_line}-${end}${of}`;
  if (f.symbol) lines = `${name(f.symbol)} (${lines})`;
  const at = f.obtained_at ? ` at ${f.obtained_at}` : "";
  let said =
    f.obtained_by === "write"
      ? `${lines}: exactly what you wrote${at}`
      : f.obtained_by === "edit"
        ? `${lines}: what your edit${at} left`
        : `${lines} unchanged since your ${f.obtained_by === "outline" ? "outline read" : "read"}`;
  if (f.previous_start_line != null) {
    said += ` (you hold them as lines ${f.previous_start_line}-${f.previous_start_line + f.num_lines - 1})`;
  }
  if (f.changed_outside) said += `; the file changed ${f.changed_outside === "outside" ? "elsewhere" : `${f.changed_outside} them`}`;
  if (f.next_offset != null) said += `; the rest starts at offset ${f.next_offset}`;
  return `${said}. Your copy is current (force: true resends).`;
}

/** What the next read of a file returns after the session's edit or write (its
 * read_state.next_read), said as render.py says it. */
export function nextReadWords(state: ReadStateInfo | undefined): string | undefined {
  if (state?.next_read === "stub") {
    return "You hold all of it now: your next read of it is a stub";
  }
  if (state?.next_read === "full") {
    return "Your next read of it sends its lines";
  }
  return undefined;
}
