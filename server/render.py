"""Results as text a person or an agent reads: one rendering for every front end.

The MCP tools send these as text content (images go along as image content), and
`readkeeper read` prints them. Each takes the protocol's JSON result, so what a front
end shows is what the protocol says, in fewer tokens than the JSON. Everything from a
file or a file name is shown as quoting.py says: names quoted when odd, a file's lines
breaking at LF only, notebook cells and attachments fenced, so no file can write a line
in readkeeper's name. The settings table (`readkeeper settings`, the docs' settings page) is
rendered here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import quoting
from .errors import shown_name
from .hints import again
from .protocol.reads import MAX_OUTLINE_SYMBOLS
from .quoting import lines as _text
from .quoting import name as _name
from .settings import SETTINGS
from .words import compress, count


def read(result: dict[str, Any], steps: Steps | None = None) -> str:
    """A read result of any type as text (an image's facts; its bytes are not text);
    `steps`: a front end's words for the next steps this rendering writes (`_said`)."""
    kind = result.get("type")
    file = result.get("file") or {}
    path = _name(file.get("file_path", ""))
    shown = body(result, steps)
    tokens = count(file.get("tokens"), "token")
    if kind == "text":
        return text_file(file, steps)
    if kind == "file_unchanged":
        return unchanged(file)
    if kind == "file_changed":
        return _with_note(f"file_changed: {path}, {tokens}\n{shown}", file)
    if kind == "estimate":
        return _with_note(f"estimate: {path}, {tokens}", file)
    if kind == "outline":
        symbols = file.get("symbols")
        cut = isinstance(symbols, int) and symbols >= MAX_OUTLINE_SYMBOLS  # the walk stopped
        head = (
            f"{path}: outline of {count(file.get('total_lines'), 'line')} "
            f"({_name(file.get('language'))}), {file.get('shown_symbols')} of "
            f"{'at least ' if cut else ''}{count(symbols, 'symbol', grouped=cut)}, {tokens}"
        )
        return _with_note(f"{head}\n{shown}", file)
    if kind == "image":
        dims = file.get("dimensions") or {}
        facts = (
            f"{path}: {_name(file.get('format', 'image'))} image, "
            f"{dims.get('original_width')}x{dims.get('original_height')} shown at "
            f"{dims.get('display_width')}x{dims.get('display_height')}, {tokens}"
        )
        return _with_note(facts, file)
    if kind == "pdf":
        head = f"{path}: PDF, pages {file.get('shown_pages')} of {file.get('page_count')}, {tokens}"
        if file.get("partial") and file.get("next_pages"):
            pages = again(pages=str(file["next_pages"]))  # as every note says it
            head += _said(f"; continue with {pages}", steps)
        return _with_note(f"{head}\n{shown}", file)
    if kind == "parts":
        head = (
            f"{path}: pages {compress(file.get('page_numbers') or [])} of {file.get('page_count')} "
            "rendered "
            f"to PNG in {_name(file.get('output_dir'))}"
        )
        if file.get("partial") and file.get("next_pages"):
            pages = again(pages=str(file["next_pages"]), render=True)
            head += _said(f"; continue with {pages}", steps)
        return _with_note(f"{head}\n{shown}", file)
    if kind == "notebook":
        return notebook(file, steps)
    return quoting.json_text(without_payloads(result), indent=1)


def body(result: dict[str, Any], steps: Steps | None = None) -> str | None:
    """The text of a read result's file as `read` shows it, below its header line and
    above its note: what a front end that sends this rendering counts as the result's
    `tokens` (rendered_tokens.py). None for a result whose `tokens` is no count of text
    (a stub, an estimate, an image's pixels)."""
    kind = result.get("type")
    file = result.get("file") or {}
    if kind in ("text", "pdf"):
        return _text(file.get("content", ""))
    if kind == "file_changed":
        return _text(file.get("diff", ""))
    parts = body_parts(result)
    if parts is not None:
        texts, separator = parts
        return separator.join(texts)
    if kind == "parts":
        return "\n".join(map(_name, file.get("pages") or []))
    if kind == "notebook":
        return notebook_cells(file.get("cells") or [], steps)
    return None


def body_parts(result: dict[str, Any]) -> tuple[list[str], str] | None:
    """`body` of an outline as the texts it joins and what joins them (its count is made
    of theirs: read/joined.py); None for any other result."""
    if result.get("type") != "outline":
        return None
    file = result.get("file") or {}
    return [_text(file.get("outline", "")), _text(file.get("content", ""))], "\n\n"


def text_file(file: dict[str, Any], steps: Steps | None = None) -> str:
    """Numbered lines under a line saying which, of how many, and how to go on (`steps`:
    a front end's words for it)."""
    start, shown = file.get("start_line", 1), file.get("num_lines", 0)
    total = file.get("total_lines")
    head = f"{_name(file.get('file_path'))}: lines {start}-{start + shown - 1} of {total or '?'}"
    at_most = "≤ " if file.get("tokens_upper_bound") else ""  # not counted yet: a bound
    head += f", {at_most}{count(file.get('tokens'), 'token')}"
    if file.get("unsaved"):
        head += f"; UNSAVED editor buffer (version {file.get('buffer_version')})"
    # The rest of a cut read; and of a range of a file too large to count ("of ?": only
    # this says more follows, round 33).
    if file.get("next_offset") and (file.get("partial") or total is None):
        rest = again(offset=file["next_offset"])
        head += _said(f"; the rest: {rest}", steps)
    return _with_note(f"{head}\n{body({'type': 'text', 'file': file})}", file)


def unchanged(file: dict[str, Any]) -> str:
    """A stub: what the agent holds of the file, in the words the core put in its note
    (read/unchanged.py), which name the lines, how they were got and what changed
    around them."""
    held = file.get("note") or (
        f"Unchanged since your read; the content you hold is current ({again(force=True)} resends)."
    )
    return f"file_unchanged: {_name(file.get('file_path', ''))}: {_note(held)}"


def notebook(file: dict[str, Any], steps: Steps | None = None) -> str:
    """A notebook: a line saying which cells, then the cells (`notebook_cells`)."""
    cells, total = file.get("cells") or [], file.get("total_cells")
    # A view of some of the cells says which (as offset counts them): ids are not numbers.
    shows = count(total, "cell")
    if cells and len(cells) != total:
        first, last = int(cells[0].get("index", 0)) + 1, int(cells[-1].get("index", 0)) + 1
        shows = f"cell {first} of {total}" if first == last else f"cells {first}-{last} of {total}"
    head = f"{_name(file.get('file_path'))}: notebook, {shows}"
    if file.get("tokens") is not None:
        head += f", {count(file['tokens'], 'token')}"
    if file.get("unsaved"):
        head += f"; UNSAVED editor buffer (version {file.get('buffer_version')})"
    if file.get("partial") and file.get("next_offset"):
        images = True if file.get("include_images") else None
        more = again(offset=file["next_offset"], include_images=images)
        head += _said(f"; the rest: {more}", steps)
    shown = notebook_cells(cells, steps)
    return _with_note(f"{head}\n{shown}" if shown else head, file)


def notebook_cells(cells: list[dict[str, Any]], steps: Steps | None = None) -> str:
    """Each cell headed by its id and type, its source and each output in a fence of
    their own (quoting.fence: no cell's text can close it or open another)."""
    parts: list[str] = []
    for cell in cells:
        run = cell.get("execution_count")
        label = f" [{run}]" if run is not None else ""
        cell_type = _name(cell.get("cell_type"))
        parts.append(f"--- cell {_name(cell.get('cell_id'))} ({cell_type}){label} ---")
        # The source as the file holds it, a cut marker's `[` of its own escaped (outputs
        # come escaped from the reader, which adds its own markers: quoting.marks).
        parts.append(quoting.fence(quoting.marks(cell.get("source", ""))))
        for output in cell.get("outputs") or []:
            text = output.get("text") or output.get("traceback") or output.get("evalue") or ""
            # An error's name, as the output's type is shown: quoted when odd (quoting.name).
            ename = output.get("ename")
            named = f" {_name(ename)}" if isinstance(ename, str) and ename else ""
            parts.append(f">>> {_name(output.get('output_type'))}{named}:")
            if text:
                parts.append(quoting.fence(text))
            parts.extend(_image(image, steps) for image in output.get("images") or [])
            if output.get("note"):
                parts.append(f"note: {_note(_said(output['note'], steps))}")
        if cell.get("note"):
            parts.append(f"note: {_note(_said(cell['note'], steps))}")
    return "\n".join(parts)


def _image(image: dict[str, Any], steps: Steps | None) -> str:
    """A notebook output's image, named at its place with its form and size: sent as an
    image after the text, a size placeholder, or not sent and why."""
    width, height = image.get("width"), image.get("height")
    size = f"{width}x{height}, " if width and height else ""
    facts = f"image: {_name(image.get('media_type'))}, {size}{count(image.get('bytes'), 'byte')}"
    if image.get("base64") or image.get("display_width"):
        shown = f"{image.get('display_width')}x{image.get('display_height')}"
        tokens = count(image.get("tokens"), "token")
        return f"{facts}: sent as an image after the text (at {shown}, {tokens})."
    if image.get("note"):
        return f"{facts}: not sent. {_note(_said(image['note'], steps))}"
    return f"{facts}: " + _said(
        f"a size placeholder; {again(include_images=True)} shows it.", steps
    )


def change(method: str, result: dict[str, Any]) -> str:
    """An edit or write: what changed, where, and what the agent should know."""
    path = _name(result.get("file_path"))
    if method == "write":
        verb = "Created" if result.get("created") else "Wrote" if result.get("changed") else "Kept"
        lines = count(result.get("total_lines"), "line")
        line = f"{verb} {path} ({lines}) on {result.get('applied_to')}"
    elif "cell_id" in result:
        line = f"{result.get('edit_mode')} of cell {_name(result.get('cell_id'))} in {path}"
    elif isinstance(result.get("files"), list):  # a multi-file edit: where, file by file
        line = f"Edited {count(len(result['files']), 'file')}:" + "".join(
            f"\n  {_name(one.get('file_path'))}: {_replaced(one)} on {one.get('applied_to')}"
            for one in result["files"]
        )
    else:
        line = f"Edited {path}: {_replaced(result)} on {result.get('applied_to')}"
    if result.get("merged"):
        line += "; the file had changed elsewhere since your read, and your edit was merged"
    parts = [line + next_read(result)]
    if result.get("snippet"):
        parts.append(_text(result["snippet"]))
    if result.get("diagnostics") is not None:
        parts.append("diagnostics: " + quoting.json_text(result["diagnostics"]))
    body = _with_note("\n".join(parts), result)
    unseen = [unseen_change(one) for one in [result, *(result.get("files") or [])]]
    return "\n".join([body, *filter(None, unseen)])


def unseen_change(result: Any) -> str:
    """The other program's change a merged edit was applied over, as the text answer
    says it (every front end's, never only a structured field a client may not show):
    the agent has not seen it, and its read-state does not count it as seen."""
    external = result.get("external_change") if isinstance(result, dict) else None
    if not isinstance(external, dict) or not external.get("diff"):
        return ""
    cut = " (cut: read the file for the rest)" if external.get("truncated") else ""
    head = (
        f"The change to {_name(result.get('file_path'))} since your read, which you had not "
        f"seen (it is not counted as read: read the file before writing it whole){cut}:"
    )
    return f"{head}\n{quoting.fence(str(external['diff']), 'diff')}"


def _replaced(result: dict[str, Any]) -> str:
    """How many replacements an edit made of a file, and at which lines."""
    replacements = result.get("replacements")
    lines = _lines(result.get("lines"), replacements)
    return f"{count(replacements, 'replacement', grouped=True)} at {lines}"


# The most line numbers a sentence names (an edit's data carries more).
_LINES_SAID = 20


def _lines(numbers: Any, replacements: Any = None) -> str:
    """The first lines of an edit's replacements, as a sentence says them: the first
    `_LINES_SAID`, then how many more (`replacements` counts them all)."""
    if not isinstance(numbers, list) or not numbers:
        return "no line"
    if len(numbers) == 1:
        return f"line {numbers[0]}"
    total = replacements if isinstance(replacements, int) else len(numbers)
    more = max(total, len(numbers)) - _LINES_SAID
    said = ", ".join(map(str, numbers[:_LINES_SAID]))
    return f"lines {said}" + (f" and {more:,} more" if more > 0 else "")


def next_read(result: dict[str, Any]) -> str:
    """What the next read of the file returns after this edit or write (its
    `read_state.next_read`), as the sentence that ends the change's first line."""
    state = result.get("read_state") or {}
    if state.get("next_read") == "stub":
        return "; you hold all of it now: your next read of it is a stub"
    if state.get("next_read") == "full":
        return "; your next read of it sends its lines"
    return ""


def attachments(result: dict[str, Any]) -> str:
    """Each attachment under a header, its content fenced (it holds files' text), then
    what was dropped."""
    parts = [f"{result.get('used_tokens')} of {count(result.get('budget_tokens'), 'token')}"]
    for item in result.get("attachments") or []:
        header = attachment_header(item.get("type"), item.get("source"), item.get("truncated"))
        content = item.get("content", "")
        if not isinstance(content, str):  # a notebook's, a PDF's, an image's facts
            content = quoting.json_text(without_payloads(content), indent=1)
        parts.append(f"{header}\n{quoting.fence(content)}")
    if result.get("dropped"):
        parts.append("dropped: " + quoting.json_text(result["dropped"]))
    return "\n".join(parts)


def attachment_header(kind: Any, source: Any, truncated: Any) -> str:
    """An attachment's header line: its type, its source named once (cut when long,
    errors.shown_name), whether it was cut. The budget counts it with the content
    (attachments/budget.py: `frame`)."""
    cut = " (truncated)" if truncated else ""
    where = f" from {shown_name(source)}" if source else ""
    return f"=== {_name(kind)}{where}{cut} ==="


def changes(result: dict[str, Any]) -> str:
    """Each changed file with its diff."""
    found = result.get("changes") or []
    # The watcher's note first: an empty list may not mean that nothing changed.
    parts = [f"note: {_note(result['note'])}"] if result.get("note") else []
    if not found and result.get("session_dropped"):  # its note says why none is known
        return "\n".join(parts)
    if not found:
        return "\n".join([*parts, "No changes to the files you read."])
    for item in found:
        parts.extend(change_lines(item))
    if result.get("remaining"):
        parts.append(f"{result['remaining']} more: call changes again.")
    return "\n".join(parts)


def change_lines(item: dict[str, Any]) -> list[str]:
    """One changed file as `changes` shows it: its kind and name, its note, its diff
    indented; what the changes' total cap counts of it (watch/changes.py)."""
    where = f" -> {_name(item['new_path'])}" if item.get("new_path") else ""
    # `truncated` with no diff: none was made (its note says why), so none was cut.
    truncated, cut = item.get("truncated"), ""
    if truncated and item.get("diff"):
        cut = " (diff truncated: re-read the file)"
    elif truncated and not item.get("note"):
        cut = " (no diff: re-read the file)"
    parts = [f"{_name(item.get('kind'))}: {_name(item.get('file_path'))}{where}{cut}"]
    if item.get("note"):
        parts.append(f"note: {_note(item['note'])}")
    if item.get("diff"):
        # Every diff line indented: none can pose as the next file's header.
        parts.extend("  " + row for row in _text(item["diff"]).split("\n"))
    return parts


def without_payloads(value: Any) -> Any:
    """`value` without base64 payloads (a person wants the facts; MCP sends images as
    image content)."""
    if isinstance(value, dict):
        return {k: without_payloads(v) for k, v in value.items() if k != "base64"}
    if isinstance(value, list):
        return [without_payloads(v) for v in value]
    return value


# A front end's words for readkeeper's own sentences naming a next step (hints.for_cli).
Steps = Callable[[str], str]


def _said(text: str, steps: Steps | None) -> str:
    """`text`, a sentence of readkeeper's own naming a next step, in a front end's words."""
    return text if steps is None else steps(text)


def _with_note(body: str, file: dict[str, Any]) -> str:
    return f"{body}\nnote: {_note(file['note'])}" if file.get("note") else body


def _note(text: str) -> str:
    """Readkeeper's note, on its one line: the core quotes every name it puts in one
    (quoting.name), and should a file's words get in raw regardless, an LF among them is
    shown escaped too, so a note never starts a line of its own."""
    return quoting.line(text).replace("\n", "\\n")


def _shown_default(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ", ".join(f"`{v}`" for v in value) if value else "none"
    if isinstance(value, str):
        return f"`{value}`"
    return str(value)


def settings_table() -> str:
    """The settings table of `readkeeper settings` and docs/reference/settings.md,
    generated from `SETTINGS` (a test keeps them equal)."""
    rows = [
        "| setting | environment variable | default | meaning |",
        "|---|---|---|---|",
    ]
    for spec in SETTINGS:
        # The range every source is held to (settings.py), said where the value is.
        held = "" if spec.maximum is None else f" ({spec.minimum:,} to {spec.maximum:,})"
        rows.append(
            f"| `{spec.name}` | `{spec.env_var}` | {_shown_default(spec.default)}{held} "
            f"| {spec.description} |"
        )
    return "\n".join(rows)
