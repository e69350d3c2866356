"""What a search says when ripgrep refuses the call itself: a pattern it cannot compile
(a syntax error, a line break outside a search across lines, a compiled program past
its size limit) or a glob it cannot parse. Each is `bad_params` naming the field at
fault, with ripgrep's reason and the call to make instead, never "could not read a
path": rg.py's `refusal` has made sure, by a run that reads nothing, that no path is
at fault.
"""

from __future__ import annotations

import re

from .. import quoting
from ..errors import ReadkeeperError, library_detail, library_words, with_library_words

_FIX = (
    "Fix it (escape special characters such as ( [ { . * + ? with a backslash for a literal "
    "search) and search again."
)


def pattern_error(pattern: str, stderr: str) -> ReadkeeperError:
    """The `bad_params` answer to a pattern ripgrep could not take (`stderr`: its words
    on a run that read nothing), with where when it says so."""
    lines = [line.removeprefix("rg: ") for line in stderr.splitlines() if line.strip()]
    if not any(line.startswith("regex parse error") for line in lines):
        return _not_compiled(pattern, lines)
    reason = next((line[7:] for line in lines if line.startswith("error: ")), "")
    position = None
    for index, line in enumerate(lines):
        if "^" in line and index > 0 and line.strip(" ^") == "":
            shown = lines[index - 1]
            start = line.index("^")
            # ripgrep shows the pattern wrapped in "(?:" ... ")".
            offset = 3 if shown.lstrip().startswith("(?:") else 0
            position = max(0, start - (len(shown) - len(shown.lstrip())) - offset)
            break
    try:  # Python's parser names the exact position where both refuse the pattern
        re.compile(pattern)
    except re.error as exc:
        if exc.pos is not None:
            position = exc.pos
    except RecursionError:  # nested past Python's parser too: ripgrep's words alone
        pass
    reason = library_detail(reason or lines[-1])
    said = library_words(reason)  # ripgrep's words echo the pattern: one JSON string
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2 == 1:
        # ripgrep wraps the pattern in "(?:...)": it calls this an unclosed group
        position, reason = len(pattern) - 1, "a trailing backslash escapes nothing"
        said = reason
    where = f" at position {position}" if position is not None else ""
    return ReadkeeperError(
        "bad_params",
        f"The pattern {_shown(pattern)} is not a valid regular expression{where}: {said}. " + _FIX,
        field="pattern",
        position=position,
        reason=reason,
    )


def _not_compiled(pattern: str, lines: list[str]) -> ReadkeeperError:
    """A pattern ripgrep parsed but would not build: too large once compiled, a line
    break outside multiline, or any other of its reasons (said as ripgrep says it)."""
    said = " ".join(lines)
    reason = library_detail(said) if said else "ripgrep refused it"
    quoted = library_words(reason)
    if "is not allowed in a regex" in said:
        words = (
            f"The pattern {_shown(pattern)} matches a line break, which only a search "
            "across lines finds: search again with multiline: true, or without it."
        )
    elif "exceeds size limit" in said:
        words = (
            f"The pattern {_shown(pattern)} is too large for ripgrep once compiled "
            f"({quoted}): search for a smaller one, with fewer or shorter repetitions "
            "(x{1000}) of narrower classes (\\w and \\p{L} each stand for thousands of "
            "characters), or for a distinctive part of the text."
        )
    else:
        words = f"ripgrep cannot take the pattern {_shown(pattern)}: {quoted}. " + _FIX
    return ReadkeeperError("bad_params", words, field="pattern", reason=reason)


def glob_error(pattern: str, field: str, stderr: str) -> ReadkeeperError:
    """The `bad_params` answer to a glob ripgrep could not take as a filter. Its words
    echo the glob: they are shown as a library's words are (errors.with_library_words:
    one JSON string), and the glob as a JSON string too, which no front end rewords, so
    a glob holding `readkeeper/read {...}` or a line break writes nothing of ours."""
    said = " ".join(line.removeprefix("rg: ") for line in stderr.splitlines() if line.strip())
    return ReadkeeperError(
        "bad_params",
        with_library_words(
            f"ripgrep cannot take the glob {_shown(pattern)}", said or "ripgrep refused it"
        )
        + ". Give one such as **/*.py or src/**/*.{ts,tsx}.",
        field=field,
        reason=library_detail(said) if said else "ripgrep refused it",
    )


def is_about_glob(stderr: str) -> bool:
    """Whether ripgrep's first word on a refused call is about a glob (a `--type-add`
    definition or a glob it could not parse), not the pattern."""
    first = stderr.lstrip().partition("\n")[0].removeprefix("rg: ")
    return first.startswith(("error parsing glob", "invalid definition"))


def _shown(pattern: str) -> str:
    """`pattern` as a message quotes it: its first 200 characters as one JSON string
    (which no front end rewords: as Python's repr, `'readkeeper/read {...}` read as a
    call), the cut marked after it."""
    shown = quoting.json_text(pattern[:200])
    return shown if len(pattern) <= 200 else f"{shown} … [{len(pattern) - 200:,} characters cut]"
