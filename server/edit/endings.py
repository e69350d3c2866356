"""Line endings of edited text: matching sees CRLF as LF, and what an edit or write puts
in takes the file's dominant ending (or the setting's, for a new or one-line file)."""

from __future__ import annotations

import os

from ..settings import Settings


def lf(text: str) -> str:
    """`text` with every CRLF seen as LF."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def eol_setting(settings: Settings) -> str:
    """The line ending the `new_file_line_ending` setting asks for."""
    choice = settings.new_file_line_ending
    if choice == "crlf" or (choice == "native" and os.linesep == "\r\n"):
        return "\r\n"
    return "\n"


def with_eol(text: str, eol: str) -> str:
    """`text` with every line ending made `eol`."""
    text = lf(text)
    return text.replace("\n", eol) if eol != "\n" else text


def dominant_eol(text: str, settings: Settings) -> str:
    """The line ending most lines of `text` use (the setting's, when it has none)."""
    if "\r" not in text:  # found at memory speed; counting a file's lines is not
        return "\n" if "\n" in text else eol_setting(settings)
    crlf = text.count("\r\n")
    lf_only = text.count("\n") - crlf
    if crlf > lf_only:
        return "\r\n"
    if lf_only:
        return "\n"
    return eol_setting(settings)
