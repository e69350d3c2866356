"""Results as MCP content: what the agent reads, rendered compactly from the protocol's
JSON result (which also goes along as `structuredContent`, base64 payloads left out).

Text, notebooks and PDFs become text (the numbered lines and the facts that matter:
where the view stopped and how to go on, unsaved buffers, notes); images become image
content; an error becomes the same message the LSP front end gives, with its `kind`.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from ..errors import ReadkeeperError

Content = types.TextContent | types.ImageContent


def tool_result(method: str, result: Any, images: list[types.ImageContent]) -> types.CallToolResult:
    """The MCP result of a successful call (`images`: rendered pages, read for it)."""
    content: list[Content] = []
    if method == "read" and isinstance(result, dict):
        content = render_read(result)
    elif method in ("edit", "write") and isinstance(result, dict):
        content = [text(render_change(method, result))]
    elif method == "attachments" and isinstance(result, dict):
        content = [text(render_attachments(result))]
    elif method == "changes" and isinstance(result, dict):
        content = [text(render_changes(result))]
    else:
        content = [text(json.dumps(result, ensure_ascii=False, indent=1))]
    content.extend(images)
    structured = without_payloads(result)
    return types.CallToolResult(
        content=list(content),
        structured_content=structured if isinstance(structured, dict) else None,
    )


def error_result(exc: ReadkeeperError) -> types.CallToolResult:
    """A refusal as a tool error: the LSP message, then its kind and data."""
    data = exc.to_data()
    details = {k: v for k, v in data.items() if k != "kind"}
    lines = [exc.message, f"kind: {exc.kind}"]
    if details:
        lines.append(json.dumps(details, ensure_ascii=False, default=str)[:4000])
    return types.CallToolResult(
        content=[text("\n".join(lines))],
        structured_content={"error": {"message": exc.message, "data": data}},
        is_error=True,
    )


def text(value: str) -> types.TextContent:
    """Text content."""
    return types.TextContent(text=value)


def render_read(result: dict[str, Any]) -> list[Content]:
    """A read result as content blocks."""
    kind = result.get("type")
    file = result.get("file") or {}
    path = file.get("file_path", "")
    if kind == "text":
        return [text(_text_file(file))]
    if kind == "file_unchanged":
        return [
            text(
                f"file_unchanged: {path} has not changed since your last read of this range, "
                "so the content you hold is current. Read again with force=true only if "
                "that content is no longer in your context."
            )
        ]
    if kind == "image":
        dims = file.get("dimensions") or {}
        facts = (
            f"{path}: {file.get('format', 'image')} image, "
            f"{dims.get('original_width')}x{dims.get('original_height')} shown at "
            f"{dims.get('display_width')}x{dims.get('display_height')}, "
            f"{file.get('tokens')} tokens"
        )
        blocks: list[Content] = [text(_with_note(facts, file))]
        blocks.append(types.ImageContent(data=file["base64"], mime_type=file["media_type"]))
        return blocks
    if kind == "pdf":
        head = (
            f"{path}: PDF, pages {file.get('shown_pages')} of {file.get('page_count')}, "
            f"{file.get('tokens')} tokens"
        )
        if file.get("partial") and file.get("next_pages"):
            head += f"; continue with pages={file['next_pages']!r}"
        return [text(_with_note(f"{head}\n{file.get('content', '')}", file))]
    if kind == "parts":
        head = (
            f"{path}: pages {file.get('page_numbers')} of {file.get('page_count')} rendered "
            f"to PNG in {file.get('output_dir')} (their images follow)"
        )
        if file.get("partial") and file.get("next_pages"):
            head += f"; continue with pages={file['next_pages']!r}, render=true"
        return [text(_with_note(head, file))]
    if kind == "notebook":
        return render_notebook(file)
    return [text(json.dumps(result, ensure_ascii=False, indent=1))]


def _text_file(file: dict[str, Any]) -> str:
    start, count = file.get("start_line", 1), file.get("num_lines", 0)
    total = file.get("total_lines")
    head = f"{file.get('file_path')}: lines {start}-{start + count - 1} of {total or '?'}"
    head += f", {file.get('tokens')} tokens"
    if file.get("unsaved"):
        head += f"; UNSAVED editor buffer (version {file.get('buffer_version')})"
    if file.get("partial") and file.get("next_offset"):
        head += f"; more: read with offset={file['next_offset']}"
    return _with_note(f"{head}\n{file.get('content', '')}", file)


def render_notebook(file: dict[str, Any]) -> list[Content]:
    """A notebook: each cell headed by its id and type, its outputs below it."""
    head = f"{file.get('file_path')}: notebook, {file.get('total_cells')} cells"
    if file.get("unsaved"):
        head += f"; UNSAVED editor buffer (version {file.get('buffer_version')})"
    if file.get("partial") and file.get("next_offset"):
        head += f"; more: read with offset={file['next_offset']}"
    parts = [head]
    images: list[Content] = []
    for cell in file.get("cells") or []:
        count = cell.get("execution_count")
        label = f" [{count}]" if count is not None else ""
        parts.append(f"--- cell {cell.get('cell_id')} ({cell.get('cell_type')}){label} ---")
        parts.append(cell.get("source", ""))
        for output in cell.get("outputs") or []:
            body = output.get("text") or output.get("traceback") or output.get("evalue") or ""
            parts.append(f">>> {output.get('output_type')}: {body}".rstrip())
            for image in output.get("images") or []:
                if image.get("base64"):
                    images.append(
                        types.ImageContent(data=image["base64"], mime_type=image["media_type"])
                    )
    return [text(_with_note("\n".join(parts), file)), *images]


def render_change(method: str, result: dict[str, Any]) -> str:
    """An edit or write: what changed, where, and what the agent should know."""
    path = result.get("file_path")
    if method == "write":
        verb = "Created" if result.get("created") else "Wrote" if result.get("changed") else "Kept"
        line = f"{verb} {path} ({result.get('total_lines')} lines) on {result.get('applied_to')}"
    elif "cell_id" in result:
        line = f"{result.get('edit_mode')} of cell {result.get('cell_id')} in {path}"
    else:
        line = (
            f"Edited {path}: {result.get('replacements')} replacement(s) at lines "
            f"{result.get('lines')} on {result.get('applied_to')}"
        )
    if result.get("merged"):
        line += "; the file had changed elsewhere since your read, and your edit was merged"
    parts = [line]
    if result.get("snippet"):
        parts.append(result["snippet"])
    if result.get("diagnostics") is not None:
        parts.append("diagnostics: " + json.dumps(result["diagnostics"], ensure_ascii=False))
    return _with_note("\n".join(parts), result)


def render_attachments(result: dict[str, Any]) -> str:
    """Each attachment under a header, then what was dropped."""
    parts = [f"{result.get('used_tokens')} of {result.get('budget_tokens')} tokens"]
    for item in result.get("attachments") or []:
        cut = " (truncated)" if item.get("truncated") else ""
        parts.append(f"=== {item.get('type')}{cut} ===\n{item.get('content', '')}")
    if result.get("dropped"):
        parts.append("dropped: " + json.dumps(result["dropped"], ensure_ascii=False))
    return "\n".join(parts)


def render_changes(result: dict[str, Any]) -> str:
    """Each changed file with its diff."""
    changes = result.get("changes") or []
    if not changes:
        return "No changes to the files you read."
    parts = []
    for change in changes:
        where = f" -> {change['new_path']}" if change.get("new_path") else ""
        cut = " (diff truncated: re-read the file)" if change.get("truncated") else ""
        parts.append(f"{change.get('kind')}: {change.get('file_path')}{where}{cut}")
        if change.get("diff"):
            parts.append(change["diff"])
    if result.get("remaining"):
        parts.append(f"{result['remaining']} more: call changes again.")
    return "\n".join(parts)


def _with_note(body: str, file: dict[str, Any]) -> str:
    return f"{body}\nnote: {file['note']}" if file.get("note") else body


def without_payloads(value: Any) -> Any:
    """`value` without base64 payloads (they travel as image content)."""
    if isinstance(value, dict):
        return {k: without_payloads(v) for k, v in value.items() if k != "base64"}
    if isinstance(value, list):
        return [without_payloads(v) for v in value]
    return value


__all__ = ["error_result", "tool_result"]
