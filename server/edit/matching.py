"""Finding `old_string` in a file: matching with CRLF seen as LF, planning the
replacement so that only the part that really changes is touched, and, when nothing
matches, the near miss to show instead.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .. import quoting
from ..errors import ReadkeeperError
from ..hints import call
from ..protocol import EditParams
from ..read import numbering
from ..read.diffs import common_ends
from . import shown
from .services import TextChange
from .snippets import cut

LISTED_LINES = 20  # line numbers named in a message (data carries more: `listed`)
# The most line numbers an answer's data carries (an edit's replacements, a refusal's
# places): 130,000 replacements listed each made an answer of 929,043 characters, and
# its structured copy as many (round 38); `replacements` or `matches` counts them all.
MAX_DATA_LINES = 1000


def listed(lines: list[int]) -> list[int]:
    """The first `MAX_DATA_LINES` of `lines`."""
    return lines[:MAX_DATA_LINES]


# Lines of `old_string` compared when looking for a near miss.
NEAR_MISS_LINES = 20
NEAR_MISS_WINDOWS = 50_000
# The most characters of `old_string` a near miss is judged by, and of each window of the
# file a quarter more (a slip of indentation lengthens it): the fuzzy comparison costs
# their product (round 38: an old_string of 32,000 spaces against 120 lines of 2,000 took
# 117 s, every other call waiting behind it). Each window then costs at most about 5,000
# machine words, the search under half a second; a partial match (old_string within a
# line) only for needles of one word.
NEAR_MISS_CHARS = 512
_PARTIAL_MOST = 64

_CRLF = re.compile(r"\r\n")
# A line as readkeeper/read prints it, in either style of numbers: spaces (padded, as
# `cat -n` does), the number, a tab.
_LINE_NUMBER_PREFIX = re.compile(r"^ *\d+\t")


class Normalized:
    """A text with CRLF seen as LF, and the way back to offsets in the original."""

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text and "\r\n" in text:  # a CR is found at memory speed, a CRLF not
            self.norm = text.replace("\r\n", "\n")
            # The normalized offset of each LF that stands for a CRLF.
            self._crlf = [m.start() - i for i, m in enumerate(_CRLF.finditer(text))]
        else:
            self.norm = text
            self._crlf = []

    def original(self, offset: int) -> int:
        """The original offset of normalized `offset` (a CRLF's LF maps to its CR)."""
        return offset + bisect.bisect_left(self._crlf, offset)


def find_all(haystack: str, needle: str) -> list[int]:
    """Offsets of `needle`, left to right, not overlapping (as `str.replace` sees them)."""
    hits: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        hits.append(at)
        at = haystack.find(needle, at + len(needle))
    return hits


@dataclass(frozen=True)
class Planned:
    """An edit worked out on a text: the new text, and where it changes the old one and
    the new one."""

    text: str  # the whole new text
    changes: list[TextChange]  # in the base text's offsets, in order
    spans: list[tuple[int, int]]  # where each change's new text is, in the new text


def plan(base: Normalized, hits: Sequence[int], old: str, new: str, eol: str) -> Planned:
    """Replace `old` (LF-normalized) at each normalized offset in `hits` with `new`,
    changing only the part of `old` that differs from `new`."""
    keep_head, keep_tail = common_ends(old, new)
    inserted = new[keep_head : len(new) - keep_tail]
    if eol != "\n":
        inserted = inserted.replace("\n", eol)
    pieces: list[str] = []
    changes: list[TextChange] = []
    spans: list[tuple[int, int]] = []
    last = 0
    shift = 0
    for hit in hits:
        start = base.original(hit + keep_head)
        end = base.original(hit + len(old) - keep_tail)
        pieces += [base.text[last:start], inserted]
        changes.append(TextChange(start, end, inserted))
        spans.append((start + shift, start + shift + len(inserted)))
        shift += len(inserted) - (end - start)
        last = end
    pieces.append(base.text[last:])
    return Planned("".join(pieces), changes, spans)


def as_shown(
    text: str, old: str, new: str, path: str, replace_all: bool = False
) -> tuple[str, str, bool]:
    """`old` and `new` as the agent meant them, `old` copied from what readkeeper showed
    (edit/shown.py): every range of `text` whose shown form is `old`, or that is `old`
    as written. One text in all those ranges: that text, and `new` with what it keeps of
    `old` as the file has it (the rest with its escapes read as the characters they
    stand for); and whether it differs from `old`. Ranges of different texts (a file's
    literal `\\r` and an escaped CR are shown alike): `ambiguous_match` naming their
    lines, since either could be meant. A place a view shows `old` at only by cutting
    through an escape (`a \\` of `a \\x5bline cut`) is a place it may have been copied
    from too: with other places `ambiguous_match`, alone `no_match`, each saying to copy
    whole escapes (with `replace_all` too: it would leave the cut place as it is, which
    the agent saw `old` at). No range: `old` as given (find_hits says no_match)."""
    if "\\" not in old and not shown.may_cut(old):  # matched as written only (find_hits)
        return old, new, False
    views = shown.views(text, old)
    if not views:  # nothing in the file is shown escaped
        return old, new, False
    cuts: list[int] = []
    found = shown.ranges(text, old, views, cuts)
    if cuts:
        raise _cut(text, [start for start, _ in sorted(found)], cuts, path, replace_all)
    texts = {text[start:end] for start, end in found}
    if len(texts) > 1:
        raise _shown_alike(text, old, sorted(found), path)
    if not texts or old in texts:
        return old, new, False
    (start, end), where = next(iter(found.items()))
    assert where is not None  # a range not as written was found in a view
    view, at = where
    head, tail = common_ends(old, new)
    # What new keeps of old stays as the file has it; never part of an escape.
    keep_head, raw_head = view.edge(at + head, -1)
    keep_tail, raw_tail = view.edge(at + len(old) - tail, 1)
    middle = new[keep_head - at : len(new) - (at + len(old) - keep_tail)]
    return (
        text[start:end],
        text[start:raw_head] + quoting.unescape(middle) + text[raw_tail:end],
        True,
    )


def _cut(
    text: str, whole: list[int], cuts: list[int], path: str, replace_all: bool = False
) -> ReadkeeperError:
    """The refusal of an old_string a view shows somewhere only by cutting an escape."""
    cut_lines = sorted(set(line_numbers(text, cuts)))
    why = (
        "readkeeper shows one character there as an escape (`\\x5b` for a cut marker's "
        "`[`, `\\r` or `\\u2028` for a line break), and old_string begins or ends inside it"
    )
    if not whole:
        return ReadkeeperError(
            "no_match",
            f"old_string was not found in {quoting.name(path)}: a view shows it only by "
            f"cutting through an escape ({_said(cut_lines)}): {why}. Copy old_string "
            "again with each escape whole (or none of it), e.g. the whole shown line.",
            file_path=path,
            cut_lines=cut_lines,
        )
    whole_lines = sorted(set(line_numbers(text, whole)))
    way = (
        f"But replace_all cannot edit {_said(cut_lines)}, which holds no old_string: edit "
        "the other places and those lines apart, each old_string with its escapes whole"
        if replace_all
        else "Copy old_string again with each escape whole, adding surrounding text that "
        "occurs in only one place"
    )
    return ReadkeeperError(
        "ambiguous_match",
        f"old_string matches in {quoting.name(path)} the text on {_said(whole_lines)}, "
        f"and a view shows it on {_said(cut_lines)} by cutting through an escape "
        f"({why}): it may have been copied from either. {way}.",
        file_path=path,
        lines=sorted(set(whole_lines) | set(cut_lines)),
        cut_lines=cut_lines,
    )


def _said(lines: list[int]) -> str:
    """`line 3` or `lines 1, 2` (the first `LISTED_LINES`, then how many more)."""
    return (
        ("line " if len(lines) == 1 else "lines ")
        + ", ".join(map(str, lines[:LISTED_LINES]))
        + (f" and {len(lines) - LISTED_LINES} more" if len(lines) > LISTED_LINES else "")
    )


def _shown_alike(text: str, old: str, found: list[tuple[int, int]], path: str) -> ReadkeeperError:
    literal = line_numbers(text, [s for s, e in found if text[s:e] == old][:LISTED_LINES])
    escaped = line_numbers(text, [s for s, e in found if text[s:e] != old][:LISTED_LINES])
    lines = line_numbers(text, [s for s, _ in found])
    said = ", ".join(map(str, lines[:LISTED_LINES])) + (
        f" and {len(lines) - LISTED_LINES} more" if len(lines) > LISTED_LINES else ""
    )
    return ReadkeeperError(
        "ambiguous_match",
        f"old_string matches in {quoting.name(path)} places that hold different text but "
        f"are shown alike (starting on lines {said}): a file's literal backslash escape "
        "(`\\r`, `\\x5b`) and a character readkeeper shows escaped read the same. "
        "A read's note lists the lines that hold escaped text; add surrounding lines to "
        "old_string that occur in only one of these places.",
        file_path=path,
        lines=sorted(set(lines)),
        literal_lines=literal,
        escaped_lines=escaped,
    )


def find_hits(base: Normalized, old: str, params: EditParams, path: str, width: int) -> list[int]:
    """Where `old` (LF-normalized) is in `base`: once, or every place with `replace_all`;
    else `no_match` or `ambiguous_match`."""
    hits = find_all(base.norm, old)
    if not hits:
        raise no_match(base.norm, old, path, width)
    if len(hits) > 1 and not params.replace_all:
        lines = line_numbers(base.norm, hits)
        shown = ", ".join(map(str, lines[:LISTED_LINES])) + (
            f" and {len(lines) - LISTED_LINES} more" if len(lines) > LISTED_LINES else ""
        )
        raise ReadkeeperError(
            "ambiguous_match",
            f"old_string matches {len(hits)} places in {quoting.name(path)} "
            f"(starting on lines {shown}). "
            "Add surrounding lines to old_string so it matches one place, or change every "
            f"one: {_every(path, params)}.",
            file_path=path,
            lines=lines,
            matches=len(hits),
        )
    return hits


def _every(path: str, params: EditParams) -> str:
    """The edit of `params` on every place it matches in `path` (an edit's way on)."""
    old, new = params.old_string, params.new_string
    return call("edit", file_path=path, old_string=old, new_string=new, replace_all=True)


def line_numbers(text: str, offsets: Sequence[int]) -> list[int]:
    """The 1-based line of each offset in `text` (offsets in order)."""
    numbers: list[int] = []
    line, last = 1, 0
    for offset in offsets:
        line += text.count("\n", last, offset)
        last = offset
        numbers.append(line)
    return numbers


def no_match(text: str, old: str, path: str, width: int) -> ReadkeeperError:
    """The `no_match` refusal: line-number prefixes pointed out, or the near miss shown."""
    data: dict[str, object] = {"file_path": path}
    lines = old.split("\n")
    numbered = [ln for ln in lines if ln.strip()]
    if numbered and all(_LINE_NUMBER_PREFIX.match(ln) for ln in numbered):
        stripped = "\n".join(_LINE_NUMBER_PREFIX.sub("", ln) for ln in lines)
        hits = find_all(text, stripped)
        where = (
            f" Without them it matches once, at line {line_numbers(text, hits)[0]}."
            if len(hits) == 1
            else f" Without them it matches {len(hits)} places."
            if hits
            else ""
        )
        data["line_number_prefixes"] = True
        return ReadkeeperError(
            "no_match",
            f"old_string was not found in {quoting.name(path)}: "
            f"its lines start with line numbers as "
            f"a read shows them (e.g. {numbered[0].split(chr(9))[0].strip()!r} and a "
            f"tab), which are not in the file.{where} Drop the number and the tab from the "
            "start of each line of old_string and new_string.",
            **data,
        )
    miss = near_miss(text, old, width)
    if miss is None:
        return ReadkeeperError(
            "no_match",
            f"old_string was not found in {path}, and nothing in it comes close. Read the "
            "file again and copy old_string from what it says now.",
            **data,
        )
    first, last = miss.first, miss.last
    data.update(closest_lines=[first, last], closest=miss.excerpt)
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    return ReadkeeperError(
        "no_match",
        f"old_string was not found in {path}. The closest text is at {where}{miss.hint}:\n"
        f"{miss.excerpt}\nCopy old_string exactly from the file (if unsure, read those lines "
        f"again: {call('read', file_path=path, offset=first, limit=last - first + 1)}).",
        **data,
    )


@dataclass(frozen=True)
class NearMiss:
    """The lines of a text closest to an `old_string` that is not in it."""

    first: int  # 1-based, the first line of the closest text
    last: int  # and its last line
    excerpt: str  # those lines, numbered as readkeeper/read shows them
    hint: str  # how they differ, when it is a common slip (" (...)"), else ""


def near_miss(text: str, old: str, number_width: int = numbering.PADDED) -> NearMiss | None:
    """The lines of `text` closest to `old`, or None when nothing comes close."""
    from rapidfuzz import fuzz, process  # deferred: only needed on a miss

    lines = text.split("\n")
    wanted = old.strip("\n").split("\n")[:NEAR_MISS_LINES]
    width = len(wanted)
    needle = "\n".join(wanted)[:NEAR_MISS_CHARS]
    most = len(needle) + len(needle) // 4 + 16
    windows = [
        "\n".join(lines[i : i + width])[:most] for i in range(min(len(lines), NEAR_MISS_WINDOWS))
    ]
    partial = width == 1 and len(needle) <= _PARTIAL_MOST
    scorer = fuzz.partial_ratio if partial else fuzz.ratio
    best = process.extractOne(needle, windows, scorer=scorer, score_cutoff=60)
    if best is None:
        return None
    index = best[2]
    shown = lines[index : index + width]
    excerpt = "\n".join(numbering.numbered(map(cut, shown[:8]), index + 1, number_width)) + (
        "\n" + numbering.gap("…", number_width) if len(shown) > 8 else ""
    )
    # How they differ is said only of an old_string compared whole (round 39: the first
    # 20 lines of 41 were "only whitespace" apart, the 41st new content).
    whole = len(old.strip("\n").split("\n")) <= NEAR_MISS_LINES and len(needle) == len(
        "\n".join(wanted)
    )
    hint = _difference(wanted, shown) if whole else ""
    return NearMiss(index + 1, index + len(shown), excerpt, hint)


def _difference(wanted: list[str], found: list[str]) -> str:
    """A short hint at how `wanted` and `found` differ, when it is a common slip."""
    squeeze = re.compile(r"\s+")

    def flat(lines: list[str]) -> str:
        return squeeze.sub(" ", " ".join(lines)).strip()

    if flat(wanted) == flat(found):
        if any("\t" in ln[: len(ln) - len(ln.lstrip())] for ln in found) and not any(
            "\t" in ln for ln in wanted
        ):
            return " (it differs only in whitespace: the file indents with tabs)"
        return " (it differs only in whitespace: indentation or line breaks)"
    if flat(wanted).lower() == flat(found).lower():
        return " (it differs only in upper/lower case)"
    return ""
