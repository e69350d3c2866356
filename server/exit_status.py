"""The CLI's exit statuses: one rule for every command, as grep and ripgrep have it.

0: done (something printed, or a server ran and was told to stop).
1: looked, and nothing matched (`grep`, `glob`, `ls` of an empty folder): not an error,
   so a script can tell "none" from "could not".
2: refused: a `ReadkeeperError` of any kind, a usage error (argparse's own, which exits
   2), a `--root` that is no folder, a server that cannot listen, no server to ask
   (`stats`), output that cannot be written.
`serve` over stdio ends as the LSP specification says (0 after `shutdown`, else 1), and
a reader that closes the pipe early gets 141, as a shell reports SIGPIPE.
"""

from __future__ import annotations

import os

from .quoting import name

DONE = 0
NOTHING_FOUND = 1
REFUSED = 2


def root_refusal(root: str | None) -> str | None:
    """What every command says (a usage error, exit status `REFUSED`) when `--root`
    names no folder, else None. A root the user typed that is not there is most likely a
    typo, so it is refused too (SECURITY.md), saying it does not exist: "is not a
    folder" is said of what is there (a file, a link to one or to nothing, a FIFO).
    Only the MCP client's roots and the editor's may name a folder not made yet."""
    if root is None or os.path.isdir(root):
        return None
    why = "is not a folder" if os.path.lexists(root) else "does not exist"
    return f"readkeeper: --root {name(root)} {why}; pass the project's folder."
