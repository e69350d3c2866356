"""One rule for every log record readkeeper writes, on stderr and in the editor's log:
a record is one line of readkeeper's. Its message, whoever's words it carries (a
method name, a request id, a workspace folder's name, a setting's value, pygls' own
words about them), has every character `quoting.printable` escapes escaped (line
breaks, ESC and every other control, bidirectional and zero-width characters) and is
cut in its middle past `MOST_CHARS`; a traceback follows on lines that each begin
`  | `, so no line after the first can pass for a record of its own.

pygls logs the traceback of every message it cannot take (a notification of the wrong
shape: some sixty lines of cattrs' validation); below DEBUG only its last line is
kept, the exception's own words, which say what was wrong.
"""

from __future__ import annotations

import logging
import re
import traceback

from . import quoting
from .errors import cut_middle

# The most characters of one record's message, before its escapes (a request naming a
# method of 2,000,000 characters was echoed whole, round 40; a 10 MB line, round 41).
MOST_CHARS = 4096
# The most lines of one traceback.
MOST_TRACEBACK_LINES = 200
TRACEBACK_INDENT = "  | "


def cut(text: str) -> str:
    """`text` cut in its middle past `MOST_CHARS` (errors.cut_middle's mark)."""
    if len(text) <= MOST_CHARS:
        return text
    return cut_middle(text, MOST_CHARS // 2, MOST_CHARS // 2, part=lambda t: t)


def one_line(message: str) -> str:
    """A record's message as written: cut in its middle past `MOST_CHARS`, every
    character `quoting.printable` escapes escaped."""
    return quoting.printable(cut(message))


class LogLines(logging.Formatter):
    """`logging.Formatter` with its message one line (`one_line`) and a traceback's
    lines each indented `TRACEBACK_INDENT`, escaped alike."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if _terse(record) and TRACEBACK in message:  # pygls writes some into its message
            message = _first_words(message)
        record.message = one_line(message)
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        if record.exc_info:
            text += "\n" + self._traceback(record)
        return text

    def _traceback(self, record: logging.LogRecord) -> str:
        assert record.exc_info is not None
        kind, exc, tb = record.exc_info
        if _terse(record):
            rows = traceback.format_exception_only(kind, exc)[-1:]
        else:
            rows = traceback.format_exception(kind, exc, tb)
        lines = "".join(rows).splitlines()
        if len(lines) > MOST_TRACEBACK_LINES:
            half = MOST_TRACEBACK_LINES // 2
            cut = len(lines) - MOST_TRACEBACK_LINES
            lines = [*lines[:half], f"... [{cut:,} lines cut] ...", *lines[-half:]]
        return "\n".join(TRACEBACK_INDENT + one_line(line) for line in lines)


def _terse(record: logging.LogRecord) -> bool:
    """pygls' record, below DEBUG: its tracebacks cut to the exception's words."""
    return record.name.startswith("pygls") and not logging.getLogger().isEnabledFor(logging.DEBUG)


def _first_words(message: str) -> str:
    """A message holding a formatted traceback: its own first line and the first
    exception's words ("Unable to deserialize message: cattrs.errors....: While
    structuring ...")."""
    first = message.split("\n", 1)[0]
    found = _EXCEPTION_LINE.search(message)
    return f"{first}: {found.group(1)}" if found else first


TRACEBACK = "Traceback (most recent call last)"
# An exception's line in a traceback, among an exception group's `|` and `+` rules.
_EXCEPTION_LINE = re.compile(r"^[\s|+-]*((?:\w+\.)*\w*(?:Error|Exception|Group): .*)$", re.M)

__all__ = ["MOST_CHARS", "LogLines", "cut", "one_line"]
