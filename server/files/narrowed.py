"""A workspace narrowed to some folders of another: what the core resolves and opens
for an agent attached with `readkeeper mcp --root WS/sub` to the editor's server of WS.

Checking that a path lies in WS/sub and then opening it beneath WS leaves a gap: a link
in sub swapped between the two leads the open to WS/secret.env, inside WS. So the core
serves such a call through a `Narrowed` workspace (`Readkeeper.serving`) whose roots
are the connection's: every path is permitted, and opened, beneath the open descriptor
of WS/sub, itself opened beneath the editor's root with no symlink followed. Nothing
of the editor's wider roots, `allowed_paths` or grants is reachable from it; only the
folder of pages readkeeper rendered for the session is added, as the connection's
scope allows it.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass, field

from .beneath import Anchor
from .paths import Workspace, is_within
from .reach import Reach


def _no_pages(session: str) -> str | None:
    return None


@dataclass
class Narrowed(Workspace):
    """The roots of one attached connection (real paths within `outer`'s roots)."""

    outer: Workspace = field(default_factory=Workspace)
    # A session's folder of rendered pages, if it has one (`OutputFolders.existing`).
    pages: Callable[[str], str | None] = _no_pages

    @classmethod
    def within(
        cls, outer: Workspace, roots: list[str], pages: Callable[[str], str | None]
    ) -> Narrowed:
        narrowed = cls(outer=outer, pages=pages)
        narrowed.set_roots(roots)
        return narrowed

    def _open_anchor(self, folder: str) -> Anchor:
        for root in self.outer.roots:
            if is_within(folder, root):
                return Anchor.beneath(self.outer._anchor(root), folder)
        if any(is_within(folder, root) for root in self.roots):
            # The editor no longer serves the folder holding this root.
            raise FileNotFoundError(errno.ENOENT, "outside the editor's roots now", folder)
        # Only a session's pages lie beyond the editor's roots: readkeeper's own folder.
        return Anchor.open(folder)

    def _permitting(
        self, real_path: str, session: str, *, grants: bool, use_up: bool = True
    ) -> str | None:
        found = super()._permitting(real_path, session, grants=grants, use_up=use_up)
        if found is None and grants:
            pages = self.pages(session)
            if pages is not None and is_within(real_path, pages):
                return pages
        return found

    def reaches(self, session: str = "", *, grants: bool = False) -> list[Reach]:
        found = super().reaches(session, grants=grants)
        pages = self.pages(session) if grants else None
        return found if pages is None else [*found, Reach(pages, pages)]

    def forgettable(self, real_paths: list[str], session: str) -> list[str]:
        """Only what this connection may reach: a name swapped after the scope's check
        must not drop the session's state of a file beyond its roots."""
        pages = self.pages(session)
        return [
            p
            for p in real_paths
            if self._permitting(p, session, grants=False) is not None
            or (pages is not None and is_within(p, pages))
        ]


__all__ = ["Narrowed"]
