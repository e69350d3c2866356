"""The next call an error names, in the words of the front end that shows it.

The core writes a next step once, as the LSP method and its params:
`readkeeper/list {"path": "/w/src"}` (the params optional, as one JSON object). The LSP
front end shows that as written; the MCP one names its tool and arguments (`the list
tool with {"path": "/w/src"}`); the CLI gives the command and flags (`readkeeper ls
/w/src`). So an agent is never told to run a shell command (`ls`, `grep`) its front end
does not offer, nor a method its front end does not have.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .errors import MAX_CALL_NAME_CHARS, cut_name
from .quoting import has_marks, json_text, marks

# What a message holds that is not readkeeper's sentence: a next call as the core writes
# it (`readkeeper/METHOD`, its params after it as one JSON object, read by a JSON decoder
# so a name holding a brace stays in it), never inside a name (a bare name's characters
# before it), and a JSON string (a name quoting.name quoted, kept as it is).
_TOKEN = re.compile(r'(?<![\w\\./\-+@,=~])readkeeper/([A-Za-z]+)|"(?:[^"\\\n]|\\.)*"')
_DECODER = json.JSONDecoder()
Word = Callable[[str, dict[str, Any] | None], str | None]
# A front end's words for a run of options `again` wrote, given as a dict.
Options = Callable[[dict[str, Any]], str]
# The options a way on may change (`again`): the params of read, grep, glob and list.
OPTIONS = ["offset", "limit", "symbol", "pages", "render", "force", "include_images"]
OPTIONS += ["line_format", "estimate", "max_matches", "depth"]
# Where a run of them begins (never inside a name: a bare name's characters before it),
# as a token of its own beside _TOKEN's, and how each next one of the run begins.
_RUN = re.compile(rf"(?<![\w\\./\-+@,=~])({'|'.join(OPTIONS)})=|{_TOKEN.pattern}")
_NEXT = re.compile(rf", ({'|'.join(OPTIONS)})=")
# What may follow a run: its sentence's punctuation, then a space or the end.
_RUN_END = re.compile(r"[.,;:)\]]*(?:\s|$)")


def call(method: str, **params: Any) -> str:
    """The next step naming `method` with `params`, as the core writes it."""
    shown = {k: _param(v) if isinstance(v, str) else v for k, v in params.items() if v is not None}
    return f"readkeeper/{method} {json_text(shown)}" if shown else (f"readkeeper/{method}")


def again(**params: Any) -> str:
    """The way on that is the call just answered, sent again with `params` changed, as
    the core writes it: `offset=501, limit=200`, `force=true`, `pages="2", render=true`
    (each value as JSON). Only here does readkeeper's text name an option with its value
    (tests/test_ways_on.py): every front end finds these runs by one rule and says them
    in its own words (the CLI's whole command with `--offset 501`, the drop-in's
    `head=200`); a way on that names another call (another method, another file) is a
    `call`."""
    unknown = set(params) - set(OPTIONS)
    if unknown:
        raise ValueError(f"hints.again: {sorted(unknown)} are no options a way on changes")
    shown = {k: _param(v) if isinstance(v, str) else v for k, v in params.items() if v is not None}
    return ", ".join(f"{name}={json_text(value)}" for name, value in shown.items())


def _param(value: str) -> str:
    """A text param as a next call shows it: a name too long to show whole cut as every
    name is (errors.cut_name); a whole one as it is, its cut-marker words written as
    JSON's escapes in the call's JSON (quoting.json_text: a missing `x … [9 characters
    cut].txt` was named raw in the glob call of its refusal, where readkeeper's own mark
    could be read; then as `\x5b`, which named another path, round 34). Whole up to
    errors.MAX_CALL_NAME_CHARS: a call is sent as written."""
    return cut_name(value, MAX_CALL_NAME_CHARS)


def rewrite(
    message: str,
    word: Word,
    keep: Iterable[str] = (),
    prose: Callable[[str], str] | None = None,
    options: Options | None = None,
) -> str:
    """`message` with each next call as `word(method, params)` says it (None: as
    written), each run of options `again` wrote as `options(params)` says it (None: left
    in the prose) and its other words as `prose` says them. A front end's words apply to
    readkeeper's own only: every text in `keep` (a file's text the message shows, as the
    error's data holds it: errors.shown_content) and every JSON string (a quoted name) is
    left as it is; `prose` never sees a call's params nor a run's, nor their new words."""
    held: list[str] = []  # what the words leave as it is, in order
    mark = _mark(message)
    if mark is None:  # a message holding every private-use character: left as written
        return message
    masked: list[str] = []
    at = 0
    for start, end in [*_spans(message, keep), (len(message), len(message))]:
        masked.append(_calls(message[at:start], word, mark, held, options))
        if end > start:
            masked.append(mark)
            held.append(message[start:end])
        at = end
    said = "".join(masked)
    if prose is not None:
        said = prose(said)
    back = iter(held)
    return re.sub(re.escape(mark), lambda _: next(back), said)


def _mark(message: str) -> str | None:
    """A private-use character `message` does not hold, standing for each span kept as
    it is; None when it holds them all (a hostile file's text can hold the BMP's 6,400)."""
    private = itertools.chain(range(0xE000, 0xF900), range(0xF0000, 0xFFFFE))
    return next((chr(c) for c in private if chr(c) not in message), None)


def _spans(message: str, keep: Iterable[str]) -> list[tuple[int, int]]:
    """Where each text of `keep` stands in `message`, longest first, none overlapping."""
    spans: list[tuple[int, int]] = []
    for text in sorted({k for k in keep if k}, key=len, reverse=True):
        start = message.find(text)
        while start >= 0:
            end = start + len(text)
            if all(end <= a or start >= b for a, b in spans):
                spans.append((start, end))
            start = message.find(text, end)
    return sorted(spans)


def _calls(text: str, word: Word, mark: str, held: list[str], options: Options | None) -> str:
    """`text` (readkeeper's words, no kept span in it) with each call, each run of
    options (when `options` says them) and each JSON string set aside in `held` (a call
    as `word` says it, a run as `options` does), `mark` in its place."""
    out: list[str] = []
    at = 0
    tokens = _TOKEN if options is None else _RUN
    for found in tokens.finditer(text):
        if found.start() < at:
            continue  # inside the params of the call (or the run) before it
        option, method = (None, found.group(1)) if options is None else found.group(1, 2)
        if option is not None and options is not None:
            run = _run(text, found.end(), option)
            if run is not None:  # else no value `again` writes: its words left as they are
                out += [text[at : found.start()], mark]
                held.append(options(run[0]))
                at = run[1]
            continue
        out.append(text[at : found.start()])
        at = found.end()
        params: dict[str, Any] | None = None
        written = found.group()
        said: str | None = None
        if method is None:  # a JSON string: a quoted name, as it is
            said = written
        elif text.startswith(" {", at):
            try:
                loaded, end = _DECODER.raw_decode(text, at + 1)
            except ValueError:
                loaded, end = None, at  # not a call's params: the call left as written
            if isinstance(loaded, dict):
                params, written, at = loaded, text[found.start() : end], end
                said = word(method, params)
        else:
            said = word(method, None)
        held.append(written if said is None else said)
        out.append(mark)
    out.append(text[at:])
    return "".join(out)


def _run(text: str, at: int, name: str) -> tuple[dict[str, Any], int] | None:
    """The run of options `again` wrote whose first value starts at `at` (`name` its
    option), and where it ends; None when no value there is one `again` writes (a
    number, true, a JSON string) followed by its sentence's punctuation or a space."""
    params: dict[str, Any] = {}
    ended = at
    while True:
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            value, end = None, at
        if not isinstance(value, int | str) or not _RUN_END.match(text, end):
            break  # the run ends before this option
        params[name], ended = value, end
        following = _NEXT.match(text, end)
        if following is None:
            break
        name, at = following.group(1), following.end()
    return (params, ended) if params else None


def stand_in(method: str, params: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The call that does what `method` would, for a front end that lacks it: `stat`
    (LSP only) as the listing of the folder its path is in, which shows each entry's
    kind and size. None: no call stands in for it."""
    path = (params or {}).get("path")
    if method == "stat" and isinstance(path, str) and path:
        return "list", {"path": os.path.dirname(path.rstrip("/")) or "/"}
    return None


def _lacking(method: str, front_end: str, where: str) -> str:
    """A method `front_end` lacks, named so that the agent knows it cannot call it, and
    `where` it is offered."""
    return f"readkeeper's {method} ({where}; {front_end} does not offer it)"


# The call a front end just answered, as its method and params (each front end's own
# words for a run of options `again` wrote are that whole call with them changed).
Answering = tuple[str, Mapping[str, Any]]
# Which runs a front end leaves as written (a stub's `force=true`: `runs_as_calls`).
Kept = Callable[[dict[str, Any]], bool]


def runs_as_calls(
    word: Word, answering: Answering | None, kept: Kept | None = None
) -> Options | None:
    """A front end's words for a run of options `again` wrote: the call `answering`
    (None: not known, the run left in the prose) with them changed (`changed`), as
    `word` says that call; a run `kept` says is left as written."""
    if answering is None:
        return None
    method, params = answering
    # The caller's own values, whole: a pattern or path cut in the middle named another
    # search, or no file (round 33), and a session cut named another session. What the
    # caller sends is bounded where its pages repeat it (search/priced.py).
    asked = {k: v for k, v in params.items() if v is not None}

    def said(run: dict[str, Any]) -> str:
        written = ", ".join(f"{name}={json_text(value)}" for name, value in run.items())
        if kept is not None and kept(run):
            return written
        return word(method, changed(asked, run)) or written

    return said


def for_mcp(
    message: str,
    tools: Mapping[str, str],
    keep: Iterable[str] = (),
    answering: Answering | None = None,
    kept: Kept | None = None,
) -> str:
    """`message` with each next call as the MCP tool that serves it (`tools`: each
    method's tool name; `keep`: a file's text it shows, as `rewrite` keeps it). A method
    no tool serves is said as the tool that stands in for it (`stand_in`), or as a
    method this server does not offer. A run of options `again` wrote is said as the
    call `answering` (the tool's method and arguments) with them changed (round 31: a
    token_limit refusal said "Read fewer lines: offset=1, limit=511.", the caller's
    line_format kept only implicitly); `kept` runs, and every run when the call is not
    known, are left as written. Every tool takes a session: a call of another tool is
    said in the session the answered call named (a not_read edit's "Read it" named the
    read alone, which read into the default session, and the edit was refused again)."""
    session = answering[1].get("session") if answering is not None else None

    def word(method: str, params: dict[str, Any] | None) -> str | None:
        tool = tools.get(method)
        if tool is None:
            instead = stand_in(method, params)
            if instead is None or instead[0] not in tools:
                return _lacking(method, "this MCP server", "a method of its language server")
            return f"{word(*instead)}, its folder's entries with their kinds and sizes"
        if params and isinstance(session, str) and session and "session" not in params:
            params = {**params, "session": session}  # a tool named alone is no call
        if not params:
            return f"the {tool} tool"
        return f"the {tool} tool with {json_text(params)}"

    return rewrite(message, word, keep, options=runs_as_calls(word, answering, kept))


# The CLI's command per method, its positional params and the flags of the others.
_CLI: dict[str, tuple[str, tuple[str, ...]]] = {
    "read": ("read", ("file_path",)),
    "grep": ("grep", ("pattern", "path")),
    "glob": ("glob", ("pattern", "path")),
    "list": ("ls", ("path",)),
}


def _shell(name: str, value: Any) -> str:
    """A value as one shell word nothing expands (single quotes); one that cannot stand
    on one line (a line break in a file's name) is named by its parameter instead."""
    text = str(value)
    if not text.isprintable():
        return name.upper()
    if has_marks(text) or "`" in text:  # bash's $'...': `\x5b` is `[`, `\x60` a backtick
        quoted = text.replace("\\", "\\\\").replace("'", "\\'")
        # A raw backtick would end the span the command is set in (round 35, C2).
        return "$'" + marks(quoted).replace("`", "\\x60") + "'"
    return shlex.quote(text)


def render_folder(file_path: str) -> str:
    """The folder a CLI next step names for the pages of `file_path` (`--out`): the first
    of `NAME-pages`, `NAME-pages-2`, ... not there (from the current folder, as `--out`
    is read), since `--out` gets new files only (cli_media.py)."""
    base = (os.path.splitext(os.path.basename(file_path))[0] or "pdf") + "-pages"
    folder, n = base, 1
    while os.path.lexists(folder):
        n += 1
        folder = f"{base}-{n}"
    return folder


# The workspace root the running command was given with `--root`, absolute, when it is
# not the current folder (cli.main sets it: `given_root`): every command a next step names
# repeats it, so it works on the same workspace when run from the same folder.
_given_root: list[str] = []


@contextlib.contextmanager
def given_root(root: str | None) -> Iterator[None]:
    """Within it, the CLI's next steps name `--root ROOT` (`root`: the command's own
    `--root`; None or the current folder: named by none)."""
    absolute = None if root is None else os.path.abspath(root)
    if absolute is not None:
        with contextlib.suppress(OSError):  # no current folder: the root is named
            if os.path.realpath(absolute) == os.path.realpath(os.getcwd()):
                absolute = None
    _given_root.append(absolute or "")
    try:
        yield
    finally:
        _given_root.pop()


# The call the running command makes, as its method and params (cli.py sets it:
# `answering`): a run of options `again` wrote is then said as that whole command with
# them changed, never as flags alone to append (round 29: `the rest: --offset 100` after a
# command ending in `--` was refused by the parser).
_answering: list[tuple[str, dict[str, Any]]] = []


@contextlib.contextmanager
def answering(method: str, params: Mapping[str, Any]) -> Iterator[None]:
    """Within it, the CLI's words for the call `method` with `params` just made."""
    _answering.append((method, dict(params)))
    try:
        yield
    finally:
        _answering.pop()


def for_cli(message: str, keep: Iterable[str] = ()) -> str:
    """`message` with each next call as the `readkeeper` command that does it (a method
    the CLI lacks is left as the method; `keep` as `rewrite` keeps it)."""

    def word(method: str, params: dict[str, Any] | None) -> str | None:
        if method not in _CLI:
            instead = stand_in(method, params)
            if instead is None:
                return _lacking(
                    method, "the command line", "a call of `readkeeper mcp` and the editor"
                )
            return f"{word(*instead)}, its folder's entries with their kinds and sizes"
        command, positional = _CLI[method]
        params = _cli_params(method, dict(params or {}))
        if method == "read" and params.get("render") is True and "out" not in params:
            # The CLI keeps rendered pages only where --out says (cli_media.py).
            params["out"] = render_folder(str(params.get("file_path", "")))
        values = [(name, params.pop(name)) for name in positional if name in params]
        # A positional that looks like an option (`-evil.pdf`) comes after `--`, which
        # ends the options; every flag before it. Told by the value, not its shell word
        # (`'-q$x.txt'` begins with a quote: round 30).
        dashed = any(str(value).startswith("-") for _, value in values)
        given = [_shell(name, value) for name, value in values]
        flags = _flags(params)
        if _given_root and _given_root[-1]:
            flags += ["--root", _shell("root", _given_root[-1])]
        words = [*flags, "--", *given] if dashed else [*given, *flags]
        return "`" + " ".join(["readkeeper", command, *words]) + "`"

    def again_said(run: dict[str, Any]) -> str:
        method, params = _answering[-1] if _answering else ("", {})
        return (word(method, changed(params, run)) if method else None) or " ".join(_flags(run))

    return rewrite(message, word, keep, _named_flags, again_said)


def changed(params: Mapping[str, Any], run: Mapping[str, Any]) -> dict[str, Any]:
    """The call `params` with the options of `run` (`again`) changed, its others kept: a
    symbol read takes no range, nor a range a symbol, so a run naming one drops the
    other (a symbol read's way on to its next lines was `--symbol X --offset N`,
    refused)."""
    kept = dict(params)
    if {"offset", "limit"} & set(run):
        kept.pop("symbol", None)
    if "symbol" in run:
        kept.pop("offset", None)
        kept.pop("limit", None)
    return {**kept, **run}


def _cli_params(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A call's params as the CLI's command takes them: grep's case and output as its
    switches (`--ignore-case`, `--files`, `--count`), its defaults left out."""
    if method != "grep":
        return params
    if params.pop("case_sensitive", True) is False:
        params["ignore_case"] = True
    output = params.pop("output", "matches")
    if output in ("files", "counts"):
        params["files" if output == "files" else "count"] = True
    if params.get("context") == 0:
        del params["context"]
    return params


def _flags(params: dict[str, Any]) -> list[str]:
    """A run of options `again` wrote (`offset=501, limit=200`, `symbol="x"`,
    `include_images=true`) as the CLI's flags, word by word (`--offset`, `501`), each
    value one shell word nothing expands. `render=true` stands for `--render` alone only in
    what names no file: a PDF's pages are drawn with `--out` (cli_media.py)."""
    words: list[str] = []
    for name, value in params.items():
        shown = _shell(name, value)
        if value is True:
            words.append(_flag(name))
        elif str(value).startswith("-"):  # a value that looks like an option: `--out=-x`
            words.append(f"{_flag(name)}={shown}")
        elif value is not False:
            words += [_flag(name), shown]
    return words


def _flag(option: str) -> str:
    return "--" + option.replace("_", "-")


# An option named as a word of a sentence ("max_matches sets up to 2,000"): one with
# "_" in it is a param's name, never an English word, said as its flag.
_NAMED = re.compile(r"(?<![\w\-/.])(max_matches|line_format|include_images)(?![\w/\-=])")


def _named_flags(text: str) -> str:
    return _NAMED.sub(lambda m: _flag(m.group(1)), text)
