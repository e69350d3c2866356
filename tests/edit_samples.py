"""An edit-robustness corpus from real code, and the runner that scores readkeeper on
it (bench/bench_edits.py runs all of it; tests/edit/test_edit_corpus.py a fast subset).

Each base edit is a plausible change to a real file (the standard library's Python,
C headers, installed JavaScript): a run of 1-4 lines found once in the file, replaced by
the same lines with one identifier renamed, a line inserted (indented as its
neighbour) or a line deleted. Chosen by a seeded `random.Random`, over files in sorted
order: the same corpus on the same machine every time.

From each base edit come the variants models produce. Plain `old_string` edits: exact;
`cat -n` prefixes copied into old_string and new_string; anchor prefixes copied into
old_string; indentation off by the lines' common indent; tabs for spaces (or spaces for
tabs); trailing spaces; CRLF; typographic quotes. Anchored edits: exact; a wrong hash;
a line number off by one. Both forms: stale versions (another program changed the file
after the read: elsewhere, on the same lines, or by inserting lines above, which moves
them).

Outcomes: `correct` (the file is exactly what was meant, with any other program's
change kept), `refused` (an error, the file untouched) and whether the refusal was
useful (it shows the lines, a diff or the places), and `wrong` (anything else: the
only unacceptable outcome).
"""

from __future__ import annotations

import json
import random
import re
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.read.anchors import anchor, short_hash

MAX_LINES = 1500
MAX_BYTES = 60_000
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
PLAIN_VARIANTS = (
    "exact",
    "cat_n_prefixes",
    "anchor_prefixes",
    "indent_off",
    "tabs_spaces",
    "trailing_ws",
    "crlf",
    "typographic_quotes",
    "stale_elsewhere",
    "stale_same_lines",
    "stale_moved",
)
ANCHORED_VARIANTS = (
    "exact",
    "wrong_hash",
    "number_off_by_one",
    "stale_elsewhere",
    "stale_same_lines",
    "stale_moved",
)
# Variants whose right answer is a refusal: applying them in any way is wrong.
MUST_REFUSE = frozenset({"stale_same_lines", "wrong_hash"})


@dataclass(frozen=True)
class BaseEdit:
    """Lines first..last (0-based, inclusive) of `lines` become `new`."""

    name: str  # the file's name in the scratch workspace (its suffix kept)
    source: str  # where it came from
    lines: tuple[str, ...]
    first: int
    last: int
    new: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def result(self, lines: tuple[str, ...] | None = None, shift: int = 0) -> str:
        lines = self.lines if lines is None else lines
        first, last = self.first + shift, self.last + shift
        return "\n".join((*lines[:first], *self.new, *lines[last + 1 :])) + "\n"


def source_files() -> list[Path]:
    """Real files of several languages, in sorted order."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    found: list[Path] = []
    for root, pattern in (
        (lib, "*.py"),
        (Path("/usr/include"), "*.h"),
        (Path("/usr/lib/node_modules"), "*.js"),
    ):
        if root.is_dir():
            found += sorted(
                p
                for p in root.rglob(pattern)
                if "site-packages" not in p.parts
                and "test" not in p.parts
                and p.is_file()
                and 200 < p.stat().st_size <= MAX_BYTES
            )
    return found


def corpus(count: int, seed: int = 33) -> list[BaseEdit]:
    """`count` base edits, spread over the languages."""
    rng = random.Random(seed)
    files = source_files()
    by_suffix: dict[str, list[Path]] = {}
    for path in files:
        by_suffix.setdefault(path.suffix, []).append(path)
    pools = [sorted(paths) for _, paths in sorted(by_suffix.items())]
    edits: list[BaseEdit] = []
    attempts = 0
    while len(edits) < count and attempts < count * 20 and pools:
        attempts += 1
        pool = pools[attempts % len(pools)]
        path = pool[rng.randrange(len(pool))]
        made = _base_edit(path, rng, len(edits))
        if made is not None:
            edits.append(made)
    return edits


def _base_edit(path: Path, rng: random.Random, index: int) -> BaseEdit | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "\r" in text or not text.endswith("\n") or "\t" in text.replace("\n\t", ""):
        return None
    lines = tuple(text[:-1].split("\n"))
    if not 20 <= len(lines) <= MAX_LINES:
        return None
    width = rng.randint(1, 4)
    first = rng.randrange(len(lines) - width)
    last = first + width - 1
    block = list(lines[first : last + 1])
    if not any(_WORD.search(line) for line in block) or any(len(ln) > 200 for ln in block):
        return None
    old = "\n".join(block) + "\n"
    if text.count(old) != 1 or not (text.startswith(old) or f"\n{old}" in text):
        return None
    kind = rng.choice(("rename", "rename", "insert", "delete"))
    new = list(block)
    if kind == "delete" and width >= 2:
        del new[rng.randrange(width)]
    elif kind == "insert":
        at = rng.randrange(width)
        indent = re.match(r"[ \t]*", block[at]).group(0)  # type: ignore[union-attr]
        new.insert(at + 1, f"{indent}inserted_by_edit({index})")
    else:
        rows = [i for i, line in enumerate(block) if _WORD.search(line)]
        at = rng.choice(rows)
        word = rng.choice(_WORD.findall(block[at]))
        new[at] = re.sub(rf"\b{word}\b", f"{word}_v2", block[at], count=1)
    if new == block:
        return None
    return BaseEdit(f"f{index}{path.suffix}", str(path), lines, first, last, tuple(new))


# --- the variants ----------------------------------------------------------------------


def _block(edit: BaseEdit) -> list[str]:
    return list(edit.lines[edit.first : edit.last + 1])


def _joined(lines: list[str], eol: str = "\n") -> str:
    return eol.join(lines) + eol if lines else ""


def plain_call(edit: BaseEdit, variant: str) -> dict[str, Any] | None:
    """The old_string/new_string a model sends for `variant`, or None when it does not
    apply to this edit."""
    old, new = _block(edit), list(edit.new)
    if variant == "cat_n_prefixes":
        old = [f"{edit.first + i + 1:>6}\t{ln}" for i, ln in enumerate(old)]
        new = [f"{edit.first + i + 1:>6}\t{ln}" for i, ln in enumerate(new)]
    elif variant == "anchor_prefixes":
        old = [f"{anchor(edit.first + i + 1, ln)}\t{ln}" for i, ln in enumerate(old)]
    elif variant == "indent_off":
        indents = [len(ln) - len(ln.lstrip(" ")) for ln in old if ln.strip()]
        cut = min(indents) if indents else 0
        if cut == 0 or any(ln.strip() and len(ln) - len(ln.lstrip(" ")) < cut for ln in new):
            return None
        old = [ln[cut:] for ln in old]
        new = [ln[cut:] for ln in new]
    elif variant == "tabs_spaces":
        swap = (
            (lambda ln: _retab(ln, "    ", "\t"))
            if any(ln.startswith("    ") for ln in old)
            else (lambda ln: _retab(ln, "\t", "    "))
        )
        old2, new2 = [swap(ln) for ln in old], [swap(ln) for ln in new]
        if old2 == old:
            return None
        old, new = old2, new2
    elif variant == "trailing_ws":
        old = [ln + "  " for ln in old]
        new = (
            [ln + "  " if ln in old_set else ln for ln in new]
            if (old_set := set(_block(edit)))
            else new
        )
    elif variant == "typographic_quotes":
        if '"' not in "".join(old):
            return None
        old, new = [_curly(ln) for ln in old], [_curly(ln) for ln in new]
    eol = "\r\n" if variant == "crlf" else "\n"
    return {
        "file_path": edit.name,
        "old_string": _joined(old, eol),
        "new_string": _joined(new, eol),
    }


def _retab(line: str, unit: str, into: str) -> str:
    count = 0
    while line.startswith(unit * (count + 1)):
        count += 1
    return into * count + line[len(unit) * count :]


def _curly(line: str) -> str:
    out, opening = [], True
    for char in line:
        if char == '"':
            out.append("\u201c" if opening else "\u201d")
            opening = not opening
        else:
            out.append(char)
    return "".join(out)


def anchored_call(edit: BaseEdit, variant: str) -> dict[str, Any] | None:
    start = anchor(edit.first + 1, edit.lines[edit.first])
    end = anchor(edit.last + 1, edit.lines[edit.last])
    if variant == "wrong_hash":
        start = start[:-2] + ("aa" if start[-2:] != "aa" else "bb")
    elif variant == "number_off_by_one":
        if edit.first + 1 > edit.last and edit.first + 1 >= len(edit.lines):
            return None
        if short_hash(edit.lines[edit.first + 1]) == short_hash(edit.lines[edit.first]):
            return None  # the slip names another line validly: no slip to catch
        start = f"{edit.first + 2}{start[len(str(edit.first + 1)) :]}"
    one: dict[str, Any] = {"op": "replace" if edit.new else "delete", "start": start}
    if edit.last != edit.first:
        one["end"] = end
    if edit.new:
        one["lines"] = list(edit.new)
    return {"file_path": edit.name, "anchor_edits": [one]}


def stale_change(edit: BaseEdit, variant: str) -> tuple[tuple[str, ...], int] | None:
    """The file as another program leaves it after the read, and how far it moved the
    edited lines; None when the variant is no stale one (or does not fit)."""
    lines = list(edit.lines)
    if variant == "stale_elsewhere":
        far = len(lines) - 1 if edit.last < len(lines) - 10 else 0
        if abs(far - edit.first) < 10:
            return None
        lines[far] += " CHANGED_ELSEWHERE"
        return tuple(lines), 0
    if variant == "stale_same_lines":
        lines[edit.first] += " CHANGED_HERE"
        return tuple(lines), 0
    if variant == "stale_moved":
        return tuple(["MOVED_DOWN"] * 5 + lines), 5
    return None


# --- running them ----------------------------------------------------------------------


@dataclass
class Outcome:
    form: str
    variant: str
    result: str  # correct, refused, wrong
    useful: bool = False
    kind: str | None = None
    tokens: int = 0
    source: str = ""


def cases(edits: list[BaseEdit]) -> Iterator[tuple[BaseEdit, str, str, dict[str, Any]]]:
    for edit in edits:
        for variant in PLAIN_VARIANTS:
            call = plain_call(edit, variant if not variant.startswith("stale") else "exact")
            if call is not None:
                yield edit, "plain", variant, call
        for variant in ANCHORED_VARIANTS:
            call = anchored_call(edit, variant if not variant.startswith("stale") else "exact")
            if call is not None:
                yield edit, "anchored", variant, call


def run(core: Readkeeper, root: Path, edits: list[BaseEdit]) -> list[Outcome]:
    """Every case of `edits` against `core` (its workspace `root`), each in its own
    session."""
    outcomes: list[Outcome] = []
    for number, (edit, form, variant, call) in enumerate(cases(edits)):
        outcome = run_case(core, root, edit, form, variant, call, f"case{number}")
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def run_case(
    core: Readkeeper,
    root: Path,
    edit: BaseEdit,
    form: str,
    variant: str,
    call: dict[str, Any],
    session: str,
) -> Outcome | None:
    stale = stale_change(edit, variant)
    if variant.startswith("stale") and stale is None:
        return None
    path = root / edit.name
    path.write_text(edit.text, encoding="utf-8")
    fmt = "anchors" if form == "anchored" else "cat-n"
    read = calls.call(
        core, "read", {"file_path": edit.name, "line_format": fmt, "session": session}
    )
    if read.get("type") != "text" or read["file"].get("partial"):
        return None
    before = edit.text
    expected = edit.result()
    if stale is not None:
        lines, shift = stale
        before = "\n".join(lines) + "\n"
        path.write_text(before, encoding="utf-8")
        expected = edit.result(lines, shift)
    outcome = Outcome(form, variant, "wrong", source=edit.source)
    outcome.tokens = core.tokens.count(json.dumps(call, ensure_ascii=False))
    try:
        calls.call(core, "edit", {**call, "session": session})
    except ReadkeeperError as exc:
        now = path.read_bytes().decode("utf-8")
        outcome.kind = exc.kind
        if now == before:
            outcome.result = "refused"
            outcome.useful = _useful(exc)
        return _forget(core, session, outcome)
    now = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    if now == expected and variant not in MUST_REFUSE:
        outcome.result = "correct"
    return _forget(core, session, outcome)


def _forget(core: Readkeeper, session: str, outcome: Outcome) -> Outcome:
    calls.call(core, "forget", {"session": session})
    return outcome


def _useful(exc: ReadkeeperError) -> bool:
    """A refusal that lets the agent retry without a blind full read: it shows the
    closest lines, a diff, the places, or the current lines with their anchors."""
    data = exc.data
    shown = any(k in data for k in ("closest", "diff", "lines", "current", "stale"))
    return shown or "\t" in exc.message or "read" in exc.message.lower()


def tally(outcomes: list[Outcome]) -> dict[str, Any]:
    """Per form and variant: counts of each outcome, useful refusals, mean tokens."""
    table: dict[str, Any] = {}
    for outcome in outcomes:
        row = table.setdefault(outcome.form, {}).setdefault(
            outcome.variant, {"cases": 0, "correct": 0, "refused": 0, "useful": 0, "wrong": 0}
        )
        row["cases"] += 1
        row[outcome.result] += 1
        row["useful"] += int(outcome.useful)
    return table


__all__ = ["BaseEdit", "Outcome", "corpus", "replace", "run", "tally"]
