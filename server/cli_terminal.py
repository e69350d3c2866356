"""Every line the CLI writes of its own goes through terminal_text.show: to a terminal with
its controls and unseen characters escaped, to a pipe or file exact. That holds for the
lines readkeeper prints itself and for those Python and argparse print for it: argparse's
usage, errors and help (an "unrecognized arguments" error echoes the command line, and
`readkeeper read *` puts a repository's file names there), log records on stderr, a
Python warning and an uncaught exception's traceback."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import traceback
import warnings
from types import TracebackType
from typing import IO, Any, TextIO, cast

from .log_lines import LogLines
from .terminal_text import write


class Parser(argparse.ArgumentParser):
    """argparse's parser whose messages (usage, errors, help, --version) are written as
    terminal_text.write writes them; its subcommands' parsers are of this class too."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            # As argparse's own: a closed stream says nothing.
            with contextlib.suppress(AttributeError, OSError):
                write(message, cast(TextIO, file or sys.stderr))


class _EscapedHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log records on stderr, each escaped as terminal_text.write does."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            write(self.format(record) + self.terminator, self.stream)
            self.flush()
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)


def stderr_log_handler() -> logging.Handler:
    """The handler of the CLI's logging: each record one line of readkeeper's
    (log_lines.py), after its time, level and logger."""
    handler = _EscapedHandler(sys.stderr)
    handler.setFormatter(LogLines("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    return handler


def _warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: IO[str] | None = None,
    line: str | None = None,
) -> None:
    said = warnings.formatwarning(message, category, filename, lineno, line).rstrip()
    if file is None and logging.getLogger().handlers:  # one line of readkeeper's log
        logging.getLogger("py.warnings").warning("%s", said)  # (round 44: two raw lines)
        return
    with contextlib.suppress(OSError):
        write(said + "\n", cast(TextIO, file or sys.stderr))


def _uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    write("".join(traceback.format_exception(kind, exc, tb)), sys.stderr)


def terminal_output() -> None:
    """Route Python's own stderr lines (warnings, an uncaught exception) through
    terminal_text.write for the rest of the process."""
    warnings.showwarning = _warning
    sys.excepthook = _uncaught


__all__ = ["Parser", "stderr_log_handler", "terminal_output"]
