"""An `old_string` that is not in the file as written, but is a copy of exactly one
place of it with a slip models make: what readkeeper forgives, and why each is safe.

The decision, per class of slip (docs/design/editing.md has the table):

- CRLF vs LF: always matched (matching.py sees CRLF as LF); the file keeps its endings.
- Line-number prefixes copied from a read (`cat -n`: "    12<tab>", or an anchored
  read: "12ab<tab>"): forgiven when every line of `old_string` carries one and the
  numbers are the lines where the rest matches (for anchors, the hashes too): the
  prefixes then prove which lines the agent copied. Prefixes on `new_string` lines are
  dropped the same way. Numbers that do not agree: refused (`no_match`, the closest
  lines shown).
- Indentation off by a consistent amount, tabs for spaces or spaces for tabs, trailing
  whitespace, typographic quotes (curly quotes for plain ones): forgiven when the lines of
  `old_string`, compared with their leading and trailing whitespace set aside and
  their quotes made plain, match exactly one run of whole lines of the file, and each
  indentation of `old_string` stands for one indentation of the file (a consistent
  mapping). The new lines are indented through the same mapping (or, for an
  indentation `old_string` never used, the same shift or tab width the mapping
  shows); a new line whose indentation cannot be told is refused. Lines `new_string`
  leaves as they were keep the file's exact bytes. Typographic quotes in the changed
  lines are made plain only when the file has none of its own.

Never forgiven: a slip that leaves two places possible (`ambiguous_match`, both named),
text inside a line that differs (other than quotes), or a line outside the matched
run: the edit changes exactly the lines `old_string` named, and the answer says what
was normalised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import words
from ..errors import ReadkeeperError
from ..read.anchors import NO_ANCHOR, short_hash
from ..read.diffs import Bounded, TooCostly, common_line_ends
from .search_budget import SearchBudget

# A read's prefix: `cat -n` (padded number, tab) or an anchor (number, two letters, tab).
_PREFIX = re.compile(r"^ *(\d+)(?:([a-z]{2})|" + re.escape(NO_ANCHOR) + r")?\t")
_QUOTES = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'", "\u201a": "'"}
)
MAX_SCAN_LINES = 200_000  # lines of a file compared (a file to edit is within the read caps)
MAX_STARTS = 20  # places named when a slipped copy matches several


@dataclass(frozen=True)
class Forgiven:
    """The edit as the agent meant it: the file's own text for `old`, the new text, and
    what was normalised to find it."""

    old: str
    new: str
    normalised: list[str]


def meant(
    text: str, old: str, new: str, path: str, budget: SearchBudget | None = None
) -> Forgiven | None:
    """The edit as the agent meant it when `old` is not in `text` as written but a
    slipped copy of one place (`forgive`), or when it is, once, only as the tail of an
    indented line and `new` adds lines after its first: the agent left out that line's
    indentation, and its new lines must get it too (written as given, they would land
    unindented)."""
    at = text.find(old)
    if at == -1:
        return forgive(text, old, new, path, budget)
    if not old.endswith("\n") or old[:1] in " \t" or text.find(old, at + 1) != -1:
        return None
    if not any(line.strip() for line in new.split("\n")[1:]):
        return None  # no new line to indent: written as given, it lands as meant
    line_start = text.rfind("\n", 0, at) + 1
    if at == line_start or text[line_start:at].strip(" \t"):
        return None  # at a line's start, or after text: a real partial match
    try:
        return forgive(text, old, new, path, budget)
    except ReadkeeperError:
        return None  # whole lines alike elsewhere: the exact match stands


def said_forgiven(forgiven: Forgiven) -> str:
    """What the answer says of an edit whose `old_string` was forgiven."""
    return (
        "old_string was not in the file as written; it matched one place once these were "
        f"set aside: {', '.join(forgiven.normalised)}. The edit was applied there, and new "
        "lines were written in the file's own indentation (see the snippet)."
    )


def _key(line: str) -> str:
    return line.strip().translate(_QUOTES)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


Prefix = tuple[int, str | None] | None  # a line's number and hash, as its prefix gave


def _strip_prefixes(lines: list[str]) -> tuple[list[str], list[Prefix]] | None:
    """The lines without a read's prefixes, and the number (and hash) each gave; None
    unless every non-blank line has one."""
    found = [_PREFIX.match(line) for line in lines]
    if not any(found) or any(
        m is None and line.strip() for m, line in zip(found, lines, strict=True)
    ):
        return None
    stripped = [line[m.end() :] if m else line for m, line in zip(found, lines, strict=True)]
    return stripped, [(words.whole(m.group(1)), m.group(2)) if m else None for m in found]


def forgive(
    text: str, old: str, new: str, path: str, budget: SearchBudget | None = None
) -> Forgiven | None:
    """`old`/`new` as the agent meant them when `old` is a slipped copy of exactly one
    run of lines of `text` (LF-normalised); None when it is not (the caller says
    `no_match`); `ambiguous_match` when it is a slipped copy of several."""
    if not old.strip():
        return None
    ends = old.endswith("\n")
    old_lines = (old[:-1] if ends else old).split("\n")
    new_ends = new.endswith("\n")
    new_lines = (new[:-1] if new_ends else new).split("\n") if new else []
    normalised: list[str] = []
    numbers: list[Prefix] | None = None
    prefixed = _strip_prefixes(old_lines)
    if prefixed is not None:
        old_lines, numbers = prefixed
        normalised.append("line-number prefixes copied from a read")
        new_prefixed = _strip_prefixes(new_lines)
        if new_prefixed is not None:
            new_lines = new_prefixed[0]
    lines = text.split("\n")[:MAX_SCAN_LINES]
    want = [_key(line) for line in old_lines]
    width = len(want)
    starts, more = _starts(lines, want, numbers, budget or SearchBudget())
    if not starts:
        return None
    if len(starts) > 1:
        shown = ", ".join(str(i + 1) for i in starts[:20])
        count = f"more than {len(starts)}" if more else str(len(starts))
        raise ReadkeeperError(
            "ambiguous_match",
            f"old_string is not in {path} as written; with whitespace and quotes set aside "
            f"it would match {count} places (starting on lines {shown}), so readkeeper "
            "will not guess. Copy old_string exactly from the file, with a line that occurs "
            "in only one of these places.",
            file_path=path,
            lines=[i + 1 for i in starts],
        )
    first = starts[0]
    found = lines[first : first + width]
    mapping = _indent_map(old_lines, found)
    if mapping is None:
        return None  # indentation that does not map one to one: not a slip we can undo
    new_text = _new_lines(old_lines, new_lines, found, mapping, text)
    if new_text is None:
        return None
    normalised += _what_differed(old_lines, found, mapping)
    if any(line.translate(_QUOTES) != line for line in new_text) and _plain_quotes(text):
        new_text = [line.translate(_QUOTES) for line in new_text]
    actual_old = "\n".join(found) + ("\n" if ends else "")
    actual_new = "\n".join(new_text) + ("\n" if new_ends and new_text else "")
    if not normalised or actual_old == actual_new:
        return None
    return Forgiven(actual_old, actual_new, normalised)


def _starts(
    lines: list[str], want: list[str], numbers: list[Prefix] | None, budget: SearchBudget
) -> tuple[list[int], bool]:
    """Where the run of keys `want` starts among `lines` (at most MAX_STARTS, and whether
    there were more); none when the budget runs out first. The keys are joined and
    searched as one text, a linear scan per place found, not a comparison of every
    line at every start."""
    if not budget.spend(sum(map(len, lines)) + len(lines)):  # the keys' making
        return [], False
    keys = "\n" + "\n".join(_key(line) for line in lines) + "\n"
    needle = "\n" + "\n".join(want) + "\n"
    if numbers is not None:  # the prefixes name the lines: only where they say
        first = next(((n[0] - 1 - j) for j, n in enumerate(numbers) if n is not None), None)
        at = -1 if first is None or first < 0 else _line_offset(keys, first)
        if (
            at < 0
            or not keys.startswith(needle, at)
            or not _numbers_agree(lines, first or 0, numbers)
        ):
            return [], False
        return [first or 0], False
    found: list[int] = []
    at = 0
    while len(found) <= MAX_STARTS:
        if not budget.spend(len(keys) - at + len(needle)):
            return [], False
        at = keys.find(needle, at)
        if at < 0:
            return found, False
        found.append(keys.count("\n", 0, at))
        at += 1
    return found[:MAX_STARTS], True


def _line_offset(keys: str, index: int) -> int:
    """Where line `index` starts in `keys` (at its leading line break), or -1."""
    at = 0
    for _ in range(index):
        at = keys.find("\n", at + 1)
        if at < 0:
            return -1
    return at


def _numbers_agree(lines: list[str], start: int, numbers: list[Prefix]) -> bool:
    """Whether the prefixes named exactly the lines from `start` (and their hashes)."""
    for j, given in enumerate(numbers):
        if given is None:
            continue
        number, hashed = given
        if number != start + j + 1:
            return False
        if hashed is not None and short_hash(lines[start + j]) != hashed:
            return False
    return True


def _indent_map(old_lines: list[str], found: list[str]) -> dict[str, str] | None:
    mapping: dict[str, str] = {}
    for given, real in zip(old_lines, found, strict=True):
        if not real.strip():
            continue
        have = mapping.setdefault(_indent(given), _indent(real))
        if have != _indent(real):
            return None
    if len(set(mapping.values())) != len(mapping):
        return None
    return mapping


def _reindent(indent: str, mapping: dict[str, str]) -> str | None:
    """The file's indentation for a new line indented `indent` by the agent."""
    if indent in mapping:
        return mapping[indent]
    pairs = list(mapping.items())
    # A constant shift: the file's indent is the agent's with a prefix added or removed.
    added = {real.removesuffix(given) for given, real in pairs if real.endswith(given)}
    if len(added) == 1 and all(real.endswith(given) for given, real in pairs):
        return added.pop() + indent
    cut = {given.removesuffix(real) for given, real in pairs if given.endswith(real)}
    if len(cut) == 1 and all(given.endswith(real) for given, real in pairs):
        prefix = cut.pop()
        return indent[len(prefix) :] if indent.startswith(prefix) else None
    # Tabs for spaces: every known indentation is n tabs for n * width spaces.
    if indent.strip(" ") == "" and all(
        g.strip(" ") == "" and r.strip("\t") == "" for g, r in pairs
    ):
        widths = {len(g) // len(r) for g, r in pairs if r and len(g) % len(r) == 0}
        if len(widths) == 1 and len(indent) % (w := widths.pop()) == 0:
            return "\t" * (len(indent) // w)
    if indent.strip("\t") == "" and all(
        g.strip("\t") == "" and r.strip(" ") == "" for g, r in pairs
    ):
        widths = {len(r) // len(g) for g, r in pairs if g and len(r) % len(g) == 0}
        if len(widths) == 1:
            return " " * (len(indent) * widths.pop())
    return None


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """How `b` differs from `a`, line by line: what they share at their ends equal, the
    middle between compared within diffs.Bounded's budget, or replaced whole past it."""
    head, tail = common_line_ends(a, b)
    ops = [("equal", 0, head, 0, head)] if head else []
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    try:
        ops += [
            (op, head + a0, head + a1, head + b0, head + b1)
            for op, a0, a1, b0, b1 in Bounded(middle_a, middle_b).get_opcodes()
        ]
    except TooCostly:
        ops.append(("replace", head, len(a) - tail, head, len(b) - tail))
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return ops


def _new_lines(
    old_lines: list[str], new_lines: list[str], found: list[str], mapping: dict[str, str], text: str
) -> list[str] | None:
    """`new_lines` in the file's terms: lines kept from `old_lines` are the file's own,
    changed ones re-indented (None when one cannot be)."""
    out: list[str] = []
    for op, a0, a1, b0, b1 in _opcodes(old_lines, new_lines):
        if op == "equal":
            out += found[a0:a1]
            continue
        for line in new_lines[b0:b1]:
            if not line.strip():
                out.append("")
                continue
            indent = _reindent(_indent(line), mapping)
            if indent is None:
                return None
            out.append(indent + line.lstrip(" \t").rstrip(" \t"))
    return out


def _what_differed(old_lines: list[str], found: list[str], mapping: dict[str, str]) -> list[str]:
    said = []
    if any(g != r for g, r in mapping.items()):
        tabs = any("\t" in r for r in mapping.values()) != any("\t" in g for g in mapping)
        said.append("tabs vs spaces in indentation" if tabs else "indentation")
    pairs = list(zip(old_lines, found, strict=True))
    if any(_tail(g) != _tail(r) for g, r in pairs):
        said.append("trailing whitespace")
    if any(g.translate(_QUOTES) != g for g, _ in pairs):
        said.append("typographic quotes")
    return said


def _tail(line: str) -> str:
    return line[len(line.rstrip(" \t")) :]


def _plain_quotes(text: str) -> bool:
    return text.translate(_QUOTES) == text
