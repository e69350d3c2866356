"""The digest a session's record keeps when what the agent knows of a file is not the
file: after an edit merged over another program's change (edit/unseen.py) or a read of
part of a file that changed outside the lines it showed (read/partial_seen.py)."""

from __future__ import annotations

from ..files.fileio import digest

# The digest recorded when the agent's knowledge cannot be computed: no file's digest
# (they are hex), so every later edit or write finds the file changed since.
UNKNOWN_PREFIX = "unseen-"


def known_digest(text: str | None, current_digest: str) -> str:
    """The digest the read-state records for the agent's knowledge `text` (as UTF-8, as
    a buffer's text is recorded), or one no file has when it is unknown."""
    if text is None:
        return f"{UNKNOWN_PREFIX}{current_digest}"
    return digest(text.encode("utf-8", "surrogatepass"))
