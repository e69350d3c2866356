"""The CLI's whole-number flags, held to the protocol's own rule for a whole number.

A flag's number goes where a request's does (an offset, a limit, a depth, a count), so
it is structured by the same converter (protocol/convert.py): LSP's integer range, and
the same words when it is out of it. `int` alone took 2**63, which failed deep in the
read as an OverflowError traceback, and 2**31, which MCP and LSP refuse.
"""

from __future__ import annotations

import argparse


def whole_number(value: str) -> int:
    """An argparse `type`: the flag's number, or a usage error saying the range."""
    from .protocol.convert import converter  # here: `--help` needs no cattrs

    try:
        number: int = converter.structure(value, int)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return number
