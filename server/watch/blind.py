"""What an answer about changed files says when the watcher cannot hear every change.

`readkeeper/changes` (and MCP's `changes`, and the change notices among attachments)
lists what the watcher heard. When it hears nothing (the `watch` setting is off, its
worker failed, it was stopped, a root's folder is gone) an empty list would read as
"nothing changed" where readkeeper cannot know; when a root is polled, a change may be
heard late. So the answer carries a `note`, from the watcher's own status (the one
`readkeeper/stats` shows), saying which and what to do; only a watcher that watches
every root, set up, gives none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..errors import shown_name
from ..protocol import ChangesResult

# Which paths a caller may be told of (an attached agent: those beneath its roots).
Where = Callable[[str], bool] | None

_RE_READ = "Re-read files before relying on them: a forced read shows each as it is now."


def note(status: dict[str, Any], poll_interval_ms: int) -> str | None:
    """Why the changes listed may not be all of them, from the watcher's `status`
    (watch/control.py); None when it watches every root."""
    state = status.get("state")
    blind = {
        "off": "readkeeper is not watching files (the `watch` setting is off, or no "
        "watcher was started)",
        "stopped": "readkeeper's watcher was stopped",
        "failed": f"readkeeper's watcher failed ({status.get('failure') or 'no reason given'})",
        "starting": "readkeeper's watcher is still being set up; changes made meanwhile "
        "are not heard",
        "root_missing": "readkeeper watches no root: " + _missing(status),
    }.get(str(state))
    if blind is not None:
        return (
            f"{blind}, so it cannot know which files changed: an empty list does not "
            f"mean nothing changed. {_RE_READ}"
        )
    said = []
    if status.get("missing_roots"):
        said.append(f"some roots are not watched ({_missing(status)}): changes there are not heard")
    polled = status.get("polled_roots") or {}
    if polled:
        said.append(
            f"changes under {_named(polled)} are found by looking every {poll_interval_ms} ms, so "
            "one may be listed late"
        )
    if not said and state in ("watching", "partial", "polling"):
        return None
    if not said:  # a state this module does not know: never claim to have heard all
        said.append(f"readkeeper's watcher is in the state {state!r}")
    return "; ".join(said) + f". {_RE_READ}"


def noted(result: ChangesResult, status: dict[str, Any], poll_interval_ms: int) -> ChangesResult:
    """`result` with the note `status` calls for, if any."""
    why = note(status, poll_interval_ms)
    if why is None:
        return result
    return attrs.evolve(result, note=f"{result.note} {why}" if result.note else why)


# Roots a note names at most (the rest counted): each may be as long as a path.
_NAMED_ROOTS = 5


def _missing(status: dict[str, Any]) -> str:
    return _named(status.get("missing_roots") or {}) or "none is set up"


def _named(roots: dict[str, str]) -> str:
    """`roots` (each with why) as a note names them: the first few, the rest counted."""
    pairs = list(roots.items())
    named = [f"{shown_name(root)} ({why})" for root, why in pairs[:_NAMED_ROOTS]]
    if len(pairs) > _NAMED_ROOTS:
        named.append(f"and {len(pairs) - _NAMED_ROOTS:,} more")
    return "; ".join(named)


__all__ = ["Where", "note", "noted"]
