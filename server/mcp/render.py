"""Results as MCP content: what the agent reads, rendered compactly from the protocol's
JSON result (which also goes along as `structuredContent`, base64 payloads left out).

Text, notebooks and PDFs become text (the numbered lines and the facts that matter:
where the view stopped and how to go on, unsaved buffers, notes); images become image
content; an error becomes the same message the LSP front end gives, with its `kind`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types

from .. import hints, quoting, render, render_many
from ..errors import ReadkeeperError, shown_content
from ..hint_walks import notes
from ..rendered_tokens import recounted
from ..search import shown
from . import facts
from .tools import METHOD_TOOLS, TOOL_METHODS

Content = types.TextContent | types.ImageContent


def tool_result(
    method: str,
    result: Any,
    images: list[types.ImageContent],
    notice: str | None = None,
    offset: Any = None,
    budget: int | None = None,
    args: dict[str, Any] | None = None,
    served: dict[str, Any] | None = None,
) -> types.CallToolResult:
    """The MCP result of a successful call (`images`: rendered pages, read for it;
    `notice`: what the agent must know about how it is served, shown first; `offset`:
    the call's, for a listing's structured page; `budget`: the call's, facts.budget;
    `args`: its arguments, whose runs of options are said as the call, changed;
    `served`: the arguments the core was asked with, the connection's session added
    when the agent named none: a read_many's entries name the read of their file with
    them, as the core's notes and its count of the budget do).
    Its structured result is the facts of it, within the budget (facts.py)."""
    content: list[Content] = []
    answering = asked(method, args)
    result = _notes_for_mcp(result, answering)
    if method == "read" and isinstance(result, dict):
        result, content = _read_as_sent(result, answering)
    elif method in ("edit", "write") and isinstance(result, dict):
        content = [text(render.change(method, result))]
    elif method == "attachments" and isinstance(result, dict):
        content = [text(render.attachments(result))]
    elif method == "changes" and isinstance(result, dict):
        content = [text(render.changes(result))]
    elif method == "read_many" and isinstance(result, dict):
        content = many_content(result, served or args or {})
    elif method in ("grep", "glob", "list") and isinstance(result, dict):
        content = [text(shown.text(method, result))]
    else:
        content = [text(quoting.json_text(result, indent=1))]
    content.extend(images)
    structured = render.without_payloads(result)
    if method == "read" and isinstance(structured, dict):
        structured = _without_text(structured)
    if method == "read_many" and isinstance(structured, dict):
        structured = {
            **structured,
            "results": [
                {**item, "result": _without_text(item["result"])} if "result" in item else item
                for item in structured.get("results", [])
            ],
        }
    if isinstance(structured, dict):
        structured = facts.facts(method, structured)
        limit = (lambda: budget) if budget is not None else (lambda: _text_tokens(content))
        structured = facts.within(method, structured, limit, _count, _offset(offset))
    if notice is not None:
        content.insert(0, text(notice))
        if isinstance(structured, dict):
            structured = {**structured, "not_attached": notice}
    return types.CallToolResult(
        content=list(content),
        structured_content=structured if isinstance(structured, dict) else None,
    )


def read_text_tokens(result: dict[str, Any], args: dict[str, Any] | None) -> int:
    """The tokens of a read result's text as the read tool sends it (`tool_result`)."""
    answering = asked("read", args)
    return _text_tokens(_read_as_sent(_notes_for_mcp(result, answering), answering)[1])


def _read_as_sent(
    result: dict[str, Any], answering: hints.Answering | None
) -> tuple[dict[str, Any], list[Content]]:
    """A read result (its notes in MCP's words) recounted as sent, and its content."""
    steps = _steps(answering, result)
    result = _recounted(result, steps)
    return result, read_content(result, steps)


def _text_tokens(content: list[Content]) -> int:
    """The tokens of the text blocks, each as sent (valid Unicode)."""
    return sum(
        _count(quoting.valid_unicode(item.text, names=False))
        for item in content
        if isinstance(item, types.TextContent)
    )


def _offset(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_counter: list[Any] = []


def _count(value: str) -> int:
    """Tokens in the environment's encoding (the settings' token_encoding), as the
    core counts its own answers."""
    if not _counter:
        from ..read.tokens import TokenCounter
        from ..settings import resolve_settings

        _counter.append(TokenCounter(resolve_settings(None)[0].token_encoding))
    return int(_counter[0].count(value))


def asked(tool: str, args: dict[str, Any] | None) -> hints.Answering | None:
    """The call `tool` answers, as its method and the arguments the agent gave (None:
    not known, and its runs of options are left as written)."""
    if args is None:
        return None
    return TOOL_METHODS.get(tool, tool), args


def _stub_force(run: dict[str, Any]) -> bool:
    """A stub's `force=true` (resends), left as a run: every stub says it, and the whole
    read call would make a stub of 33 tokens about 55 (bench/bench_stub_words.py)."""
    return run == {"force": True}


def _stub(result: Any) -> bool:
    return isinstance(result, dict) and result.get("type") == "file_unchanged"


def _steps(answering: hints.Answering | None, result: Any) -> render.Steps:
    """The words for `result`'s next steps: each call as a tool, each run of options as
    the call `answering` changed (a stub's `force=true` left as it is)."""
    kept = _stub_force if _stub(result) else None
    return lambda message: hints.for_mcp(message, METHOD_TOOLS, (), answering, kept)


def _recounted(result: dict[str, Any], steps: render.Steps) -> dict[str, Any]:
    """A read whose text the words change (a notebook's cell notes and image
    placeholders) with its `tokens` the count of the text sent (rendered_tokens.py)."""
    if result.get("type") != "notebook" or render.body(result) == render.body(result, steps):
        return result
    return dict(recounted(result, _count, None, steps))


def _notes_for_mcp(result: Any, answering: hints.Answering | None = None) -> Any:
    """`result` with the notes readkeeper wrote in it naming each next call as a tool
    and each run of options as the call `answering` changed (hint_walks.notes); the
    file's own text is left as it is."""
    kept = _stub_force if _stub(result) else None
    return notes(
        result, lambda message, keep: hints.for_mcp(message, METHOD_TOOLS, keep, answering, kept)
    )


def error_result(
    exc: ReadkeeperError, tool: str = "", args: dict[str, Any] | None = None
) -> types.CallToolResult:
    """A refusal as a tool error: the LSP message, then its kind and data (`tool` and
    `args`: the call refused, whose runs of options are said as that call, changed)."""
    data = exc.to_data()
    details = {k: v for k, v in data.items() if k != "kind"}
    # The next call as a tool of ours; a file's text the message shows, as it is.
    message = hints.for_mcp(exc.message, METHOD_TOOLS, shown_content(data), asked(tool, args))
    lines = [message, f"kind: {exc.kind}"]
    if details:
        lines.append(quoting.cut_escaped(quoting.json_text(details, default=str), 4000))
    return types.CallToolResult(
        content=[text("\n".join(lines))],
        structured_content={"error": {"message": message, "data": data}},
        is_error=True,
    )


def valid_unicode(result: types.CallToolResult) -> types.CallToolResult:
    """`result` with every string valid Unicode (quoting.valid_unicode): the one rule for
    every tool's answer, whichever path built it."""
    for item in result.content:
        if isinstance(item, types.TextContent):
            item.text = quoting.valid_unicode(item.text, names=False)
    if result.structured_content is not None:
        result.structured_content = quoting.valid_unicode(result.structured_content)
    return result


def text(value: str) -> types.TextContent:
    """Text content."""
    return types.TextContent(text=value)


# A read's text fields, which its text block already carries: the structured result
# holds the facts about them (lines, tokens, where the read stopped) but not the text
# again, so a read travels once and a host that also shows the model the structured
# result does not pay for the lines twice. A notebook's cells too: its text shows each
# cell whole (a notebook of 3,000 one-line cells was 15,030 tokens of text and 30,851
# more of structured cells, over max_tokens however the text was bounded).
_TEXT_FIELDS = ("content", "outline", "diff", "cells")


def _without_text(result: dict[str, Any]) -> dict[str, Any]:
    file = result.get("file")
    if not isinstance(file, dict):
        return result
    return {**result, "file": {k: v for k, v in file.items() if k not in _TEXT_FIELDS}}


def many_content(result: dict[str, Any], args: Mapping[str, Any]) -> list[Content]:
    """A read_many result: its text as render_many.many shows it (each file as read shows
    it, or its refusal, with its kind, in the order asked, then the budget left; each
    header's way on the read of its file with the options of the call `args`); images
    after the text."""
    images: list[Content] = []
    for item in result.get("results", []):
        if isinstance(item, dict) and isinstance(item.get("result"), dict):
            blocks = read_content(item["result"])
            images.extend(b for b in blocks if isinstance(b, types.ImageContent))
    shared = render_many.shared_options(args)
    return [text(render_many.many(result, _tools_said, shared)), *images]


def with_left_as_sent(result: Any, args: Mapping[str, Any], count: Callable[[str], int]) -> Any:
    """A read_many result with `budget_tokens_left` the budget less the tokens of the
    text this front end sends of it (`many_content`, its calls named as tools), that line
    included: the core spent its own words of the same text (read/many.py). `args`: the
    call's, its budget and the options each file's read shares."""
    budget = args.get("budget_tokens")
    if not (isinstance(result, dict) and "budget_tokens_left" in result):
        return result
    if not isinstance(budget, int) or isinstance(budget, bool):
        return result
    shared = render_many.shared_options(args)
    return render_many.settled_left(
        _notes_for_mcp(result), result, budget, count, _tools_said, shared
    )


def _tools_said(text: str) -> str:
    """A readMany entry's header's next call as the tool that makes it."""
    return hints.for_mcp(text, METHOD_TOOLS)


def read_content(result: dict[str, Any], steps: render.Steps | None = None) -> list[Content]:
    """A read result as content blocks: its text (render.py, its next steps in the words
    `steps` gives them), then any images."""
    blocks: list[Content] = [text(render.read(result, steps))]
    file = result.get("file") or {}
    if result.get("type") == "image" and file.get("base64"):
        blocks.append(types.ImageContent(data=file["base64"], mime_type=file["media_type"]))
    if result.get("type") == "notebook":
        for cell in file.get("cells") or []:
            for output in cell.get("outputs") or []:
                for image in output.get("images") or []:
                    if image.get("base64"):
                        blocks.append(
                            types.ImageContent(data=image["base64"], mime_type=image["media_type"])
                        )
    return blocks


__all__ = ["error_result", "read_content", "tool_result"]
