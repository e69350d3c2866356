"""Text the CLI writes: to a terminal with its controls and unseen characters escaped, so
no file's line or name moves the cursor, erases lines, retitles the window or reads
reversed; to a pipe or file exact, for the program reading it (cli_terminal.py routes
argparse's, logging's and Python's own lines through `write`)."""

from __future__ import annotations

import re
import unicodedata
from typing import TextIO

from .quoting import ESCAPES, unprintable

# On a terminal: every control but tab and newline (C0, DEL, C1), so no escape sequence
# (CSI, OSC, a lone ESC) reaches it.
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal(text: str) -> str:
    """`text` safe to print to a terminal: tab and newline kept, every other control
    (and so every escape sequence) shown as its escape, and every format character (a
    bidirectional override or isolate, a zero-width character), line or paragraph
    separator and lone surrogate too, so no name on screen reads reversed or as another."""
    if not text.isascii():
        hidden = {ord(c): unprintable(c) for c in set(text) if _hidden(c)}
        if hidden:
            text = text.translate(hidden)
    if _TERMINAL_CONTROL.search(text) is None:
        return text
    return _TERMINAL_CONTROL.sub(lambda m: _control_escape(m.group()), text)


def _hidden(char: str) -> bool:
    """Whether a terminal would show `char` as nothing, or let it reorder the line."""
    return not char.isascii() and unicodedata.category(char) in ("Cf", "Cs", "Zl", "Zp")


def show(text: str, stream: TextIO) -> None:
    """Print `text` to `stream`; to a terminal with its controls escaped (`terminal`),
    so a file's line or name cannot move the cursor, erase lines or retitle the window.
    To a pipe or file it goes as it is: the program reading it gets the exact text."""
    # print, not one write of text and break: a pipe closed early (`| head`) is
    # seen as BrokenPipeError by its second write, where one write may end short silently.
    print(terminal(text) if _is_terminal(stream) else text, file=stream)


def write(text: str, stream: TextIO) -> None:
    """`show` without the line break it adds: what argparse, logging and Python's own
    stderr lines go through in the CLI (cli_terminal.py)."""
    stream.write(terminal(text) if _is_terminal(stream) else text)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # not a file, or a closed one
        return False


def _control_escape(char: str) -> str:
    return ESCAPES.get(char) or f"\\x{ord(char):02x}"
