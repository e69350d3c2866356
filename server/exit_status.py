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

DONE = 0
NOTHING_FOUND = 1
REFUSED = 2
