// How bytes from files and file names are shown to the model: inside a structure
// readkeeper controls. The same rules as the server's server/quoting.py (read it for
// the why): a name is bare when plain (letters, digits, `._-/+@,=~`, shaped as no line
// readkeeper prints), else quoted with its controls escaped; a file's lines break at LF
// only, every other line break (CR, VT, FF, U+001C-001E, NEL, U+2028, U+2029) escaped
// inside the line; a block of a file's text is fenced with more backticks than any run
// inside it.

const BREAK = /[\r\v\f\x1c-\x1e\x85\u2028\u2029]/g;
const ESCAPES: Record<string, string> = {
  "\r": "\\r",
  "\v": "\\x0b",
  "\f": "\\x0c",
  "\x1c": "\\x1c",
  "\x1d": "\\x1d",
  "\x1e": "\\x1e",
  "\x85": "\\x85",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};
// A name is bare only when every character is a letter or digit of any script or one of
// `._-/+@,=~` (an allowlist: a space, `:`, `?`, `#`, a quote, a control or a character
// nobody thought of makes it quoted, so it cannot continue readkeeper's sentence), and
// none is a letter that looks like punctuation or a blank (the spacing modifier letters,
// the Hangul fillers).
const PLAIN_NAME = /^[\p{L}\p{N}._\-/+@,=~]+$/u;
const LOOKALIKES = /[\u02b0-\u02ff\u115f\u1160\u3164\uffa0]/;
// Nor does a bare name take the shape of a line readkeeper prints (server/quoting.py's
// LINE_SHAPES): grep's context line `path-N-text` (and a name ending `-N` before it), a
// listing's link mark `@` after a name, grep's `--` and the drop-in's `---` separators.
const LINE_SHAPES = /-\p{Nd}+(?:-|$)|@$|^-+$/u;
// Inside a quoted name: the quote and backslash quoting uses, and every character a
// reader would not see or would act on (what Python's str.isprintable rejects: controls,
// format characters such as the bidirectional overrides, separators but the space,
// unassigned code points, lone surrogates).
const NAME_ESCAPE = /["\\]|[\p{C}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

// What `printable` escapes: NAME_ESCAPE's characters but the quote and backslash.
const UNPRINTABLE = /[\p{C}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

/** `text` with every character a reader would not see or would act on escaped (a
 * bidirectional override, a zero-width character, a lone surrogate), the rest as it is:
 * for a renderer with its own quoting, such as HTML (server/quoting.py's `printable`). */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) =>
    c
      .split("")
      .map((unit) => "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0"))
      .join(""),
  );
}

/** Whether `text` may be shown bare (server/quoting.py's `is_plain`). */
export function isPlain(text: string): boolean {
  return PLAIN_NAME.test(text) && !LOOKALIKES.test(text) && !LINE_SHAPES.test(text);
}

/** A file's text as shown: lines end at its LFs only, every other line break escaped. */
export function lines(text: string): string {
  return text.replace(BREAK, (c) => ESCAPES[c] ?? c);
}

/** A count and its noun in words: "1 file", "2 files" (`plural` when not noun + "s"). */
export function count(n: number | undefined, noun: string, plural = `${noun}s`): string {
  return `${n ?? "?"} ${n === 1 ? noun : plural}`;
}

/** A path, symbol or label in readkeeper's words: bare when plain, else a quoted
 * string with its controls escaped. */
export function name(value: unknown): string {
  const text = String(value ?? "");
  if (isPlain(text)) return text;
  const inner = text.replace(NAME_ESCAPE, (c) => {
    if (c === '"' || c === "\\") return "\\" + c;
    const simple: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x7f": "\\x7f" };
    // An astral character (unassigned, private use) as its two UTF-16 halves, as JSON.
    const units = c.split("").map((unit) => "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0"));
    return simple[c] ?? units.join("");
  });
  return `"${inner}"`;
}

/** `value` as JSON text in which every character `name` escapes is JSON's escape of it
 * (server/quoting.py's `json_text`): JSON.stringify leaves NEL, U+2028, U+2029, the
 * bidirectional overrides and zero-width characters raw inside strings, and a notebook's
 * cell id or an attachment's source shown so read reversed or as another. */
export function jsonText(value: unknown): string {
  return printable(JSON.stringify(value) ?? "null");
}

/** `text` (a name from `name`, an agent's word) as an inline code span: between more
 * backticks than any run inside it, so no character of it ends the span early and
 * nothing in it is Markdown (CommonMark's code spans). A span that starts or ends with
 * a backtick gets a space inside each fence, which the renderer takes off again. Line
 * breaks become spaces, as the renderer would show them. */
export function code(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ") || " ";
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(longest + 1);
  const pad = /^`|`$/.test(flat) || /^ .*[^ ].* $/.test(flat) ? " " : "";
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/** `body` (a file's text) between backtick fences longer than any backtick run in it. */
export function fence(body: string, info = ""): string {
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  const shown = lines(body.endsWith("\n") ? body.slice(0, -1) : body);
  return shown ? `${ticks}${info}\n${shown}\n${ticks}` : `${ticks}${info}\n${ticks}`;
}

// readkeeper's cut markers inside a shown line (server/quoting.py's `marks`, the same
// pattern): the `[` (or its fullwidth form) that opens a cut marker's words, a read's
// `[line cut: N more characters]`, a snippet's `[line cut: N more]`, a notebook output's
// `[N characters cut]`, in any case, letters in their fullwidth forms too, with a short
// run of anything but letters and digits between letters and words. Each run is bounded
// (8 characters; a count 24), as the server bounds it: unbounded, a text of many `[`
// costs a search per `[` over all that follow.
const GAP = "[^\\p{L}\\p{N}]{0,8}";
const fullwidth = (c: string): string => String.fromCharCode(c.charCodeAt(0) + 0xfee0);
const word = (text: string): string =>
  [...text].map((c) => `[${c}${c.toUpperCase()}${fullwidth(c)}${fullwidth(c.toUpperCase())}]`).join(GAP);
const COUNT = `[\\p{Nd},.\\uff0c\\uff0e]{1,24}${GAP}${word("character")}${GAP}(?:${word("s")})?`;
const CUT_WORDS = `(?:${word("line")}${GAP}${word("cut")}|${COUNT}${GAP}${word("cut")})`;
const CUT_OPENING = new RegExp(`[\\[\\uff3b](?=${GAP}${CUT_WORDS})`, "gu");
const OPENING_SHOWN: Record<string, string> = { "[": "\\x5b", "\uff3b": "\\uff3b" };

/** A file's text with each `[` that opens a cut marker's words shown as `\x5b`
 * (server/quoting.py's `marks`): so a raw `[line cut: ...]` or `[N characters cut]` is
 * always readkeeper's. For a file's raw text the renderer shows (a grep match, a
 * notebook cell's source, an error's name); what the server sends as a view (a read's
 * numbered lines, a diff, an output) comes escaped already, its own markers raw. */
export function marks(text: string): string {
  if (!text.includes("[") && !text.includes("\uff3b")) return text;
  return text.replace(CUT_OPENING, (c) => OPENING_SHOWN[c] ?? c);
}
