"""What one attached connection may reach: the roots its `readkeeper mcp` declared in
its hello, never the editor's wider ones.

The editor's core serves the whole editor workspace; an agent started with
`readkeeper mcp --root WS/sub` must reach exactly what the same agent reaches on its
own (standalone): files beneath its own roots, relative paths taken from its first
root, and the files readkeeper rendered for its session (PDF pages). The rule is held
here, on the server's side of the socket, so a client that lies or has a bug cannot
widen itself after the hello: every path a request carries is checked before the core
sees it, by its real path (a symlink in WS/sub pointing at WS/secret.env is outside),
the core then resolves and opens it again beneath the connection's own roots (its
`workspace`, files/narrowed.py: a link swapped after the check leads nowhere; one
entry of a batch beyond them is refused there, that entry alone, as standalone), and
what the core answers is cut to the connection's roots (change notices, did-you-mean
suggestions, attachments drawn from files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, cast

from .. import quoting
from ..attachments.model import Dropped, more_dropped
from ..errors import ErrorKind, ReadkeeperError, shown_name
from ..files.narrowed import Narrowed
from ..files.paths import MAX_ROOTS, Workspace, is_within, real_path, refused_root
from ..files.reach import LeadsOut, Reach, by_name, lexical, outside, remembering, walk
from ..protocol.convert import MAX_LIST_ITEMS, MAX_PATHS
from ..state.sessions import EDITOR, scoped

# Every method an attached connection may call, with the fields of its params that
# name a path (each resolved from the connection's first root and checked against its
# roots before the core sees it; the core then opens it beneath them). A method of
# `calls.METHODS` missing here is refused to attached connections: a new method needs
# a decision here first (tests/mcp/test_attach_methods.py holds the two tables equal).
# What each answer may name is cut in `Scope.result`.
PATH_FIELDS: dict[str, tuple[str, ...]] = {
    "read": ("file_path",),
    "readMany": ("file_paths",),
    "edit": ("file_path",),
    "write": ("file_path",),
    "forget": ("paths",),
    "attachments": ("mentions",),
    "grep": ("path",),
    "glob": ("path",),
    "list": ("path",),
    "changes": (),
    "stats": (),
    "stat": ("path",),
    "move": ("source", "destination"),
    "mkdir": ("path",),
    "patch": ("file_path",),
}

# Methods refused to attached connections, and why (a decision like those above).
REFUSED: dict[str, str] = {
    # The session's last change may be another session's (any session name can be
    # passed), in files beyond this agent's roots: undo through the editor's own chat.
    "undo": "an undo may take back a change beyond this agent's roots",
}
# What such an agent does instead.
INSTEAD: dict[str, str] = {
    "undo": "Make the reverse change with an edit, or ask the user to undo it in the editor.",
}


# An absolute path within free text (a watcher's reason).
_ABSOLUTE = re.compile(r"(?<![\w.])/[^\s'\"]+")

# Attachment types that list files of the whole editor workspace in one item.
_LISTINGS = frozenset({"diagnostics"})
_LISTING_REASON = (
    "it lists files of the editor's whole workspace, beyond this agent's roots; the "
    "diagnostics of a file come with its edit"
)


class Scope:
    """One connection's roots (real paths, each within the editor's)."""

    def __init__(
        self,
        roots: list[str],
        outputs: Callable[[str], str | None],
        narrower: bool = False,
        editor: Workspace | None = None,
        spelled: dict[str, str] | None = None,
    ) -> None:
        self.roots = roots
        self.spelled = spelled or {}  # a root's spelling in the hello, by real path
        self._outputs = outputs  # a session's folder of rendered pages, if it has one
        # Whose session names this connection's are (set by the listener): the
        # connection's own, and the one its call in hand is served for (state/sessions.py).
        self.owner = self.principal = EDITOR
        self.narrower = narrower  # the editor's roots reach beyond these
        # What the core resolves and opens this connection's calls beneath.
        self.workspace = Narrowed.within(editor or Workspace(), roots, outputs)

    @classmethod
    def declared(cls, asked: Any, editor: Workspace, outputs: Callable[[str], str | None]) -> Scope:
        """The scope for the roots a hello declared, or a refusal: each root must be an
        absolute folder within one of the editor's roots."""
        editor_roots = list(editor.roots)
        if not isinstance(asked, list) or not asked or not all(isinstance(r, str) for r in asked):
            raise ReadkeeperError(
                "bad_params",
                "hello must name the attaching agent's roots (a non-empty list of absolute "
                "folders): the editor's readkeeper serves an attached agent only within them.",
                field="roots",
            )
        asked = list(dict.fromkeys(asked))  # the same root twice is one
        if len(asked) > MAX_ROOTS:  # each is echoed, and every refusal walks them all
            raise ReadkeeperError(
                "bad_params",
                f"hello names {len(asked):,} roots; at most {MAX_ROOTS}, as an editor's "
                "workspace folders: name the folders that hold the others.",
                field="roots",
            )
        roots, spelled = [], {}
        # Resolved looking only inside the editor's roots (files/reach.py): a link out is
        # refused by its own text, never by where it leads or what is there (round 44:
        # the refusal named the target, and "not a folder" told its kind).
        reaches = [r for r in editor.reaches() if r.real in editor_roots]
        with remembering():  # nested roots share the folders they pass (round 46)
            for root in asked:
                real = _declared_root(root, reaches, editor_roots)
                roots.append(real)
                spelled[real] = os.path.normpath(root)
            narrower = not all(any(is_within(e, r) for r in roots) for e in editor_roots)
            return cls(roots, outputs, narrower, editor, spelled)  # its roots resolved too

    # --- requests ---

    def params(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`params` with every path made absolute from this connection's first root,
        or an `outside_workspace` error for a path beyond its roots. The walks of one
        request share the folders they passed (files/reach.py `remembering`: round 46,
        a forget of 1,000 paths 2,000 deep took 124 s here, 0.5 s on a core's door)."""
        with remembering():
            return self._params(method, params)

    def _params(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        fields = PATH_FIELDS.get(method)
        if fields is None:
            why = f" ({REFUSED[method]})" if method in REFUSED else ""
            instead = f" {INSTEAD[method]}" if method in INSTEAD else ""
            raise ReadkeeperError(  # no list of the core's methods: the agent has its tools
                "unsupported",
                f"{method} is not served to an attached agent{why}.{instead}",
                method=method,
            )
        session = params.get("session")
        session = session if isinstance(session, str) else ""
        checked = dict(params)
        for name in fields:
            value = params.get(name)
            if isinstance(value, str):
                checked[name] = self._path(value, session)
            elif isinstance(value, list) and not _over_caps(value):
                # A batch: each entry answered on its own. One over the caps is left as
                # it is, none walked: the core refuses it whole before any work.
                checked[name] = [self._entry(v, session) for v in value]
        editor = params.get("active_editor") if method == "attachments" else None
        if isinstance(editor, dict) and isinstance(editor.get("file_path"), str):
            checked["active_editor"] = {
                **editor,
                "file_path": self._path(editor["file_path"], session),
            }
        files = params.get("files") if method == "edit" else None
        if isinstance(files, list) and len(files) <= MAX_LIST_ITEMS:  # each file's path
            checked["files"] = [
                {**entry, "file_path": self._path(entry["file_path"], session)}
                if isinstance(entry, dict) and isinstance(entry.get("file_path"), str)
                else entry
                for entry in files
            ]
        return checked

    def _entry(self, path: Any, session: str) -> Any:
        """One path of a batch (readMany, mentions, forget): one beyond these roots is
        left as given, for the core (held to these roots, files/narrowed.py) to refuse
        that entry alone, as a standalone server does; the others are still served."""
        try:
            return self._path(path, session) if isinstance(path, str) else path
        except ReadkeeperError:
            return path

    def _path(self, path: str, session: str) -> str:
        if not path or "\x00" in path:
            return path  # the core's own bad_params error says what is wrong
        absolute = lexical(path, self.roots[0])
        folders = [Reach(root, self.spelled.get(root, root)) for root in self.roots]
        pages = self._pages(session)
        if pages is not None:
            folders.append(Reach(pages, pages))
        # The core resolves it again beneath these roots, named by their real paths.
        named = by_name(absolute, folders) or absolute
        try:
            real = walk(absolute, folders)
        except OSError:
            return named  # a link replaced meanwhile: the core resolves it again
        if not isinstance(real, LeadsOut):
            return named  # inside, or a link loop the core names
        raise outside(
            absolute,
            real,
            self.roots,
            "Though the editor's workspace may hold it, this agent's roots do not: start "
            "`readkeeper mcp --root` on a folder that holds it, or read a file inside "
            "your roots.",
        )

    def reaches(self, real: str, session: str = "") -> bool:
        """Whether a real path is within this connection's roots, or is a page readkeeper
        rendered for the session."""
        if any(is_within(real, root) for root in self.roots):
            return True
        outputs = self._pages(session)
        return outputs is not None and is_within(real, outputs)

    def _pages(self, session: str) -> str | None:
        """The folder of pages rendered for this connection's session `session`."""
        try:
            return self._outputs(scoped(self.principal, session))
        except ReadkeeperError:  # a name no session has: the core refuses it
            return None

    # --- answers ---

    def result(self, method: str, result: Any) -> Any:
        """The core's answer cut to this connection's roots."""
        if method == "changes" and isinstance(result, dict):
            kept = [c for c in result.get("changes", []) if self._shows(c)]
            return {**result, "changes": kept}
        if method == "attachments" and isinstance(result, dict):
            return self._attachments(result)
        if method == "stats" and isinstance(result, dict):
            return self._stats(result)
        if method == "readMany" and isinstance(result, dict):
            return {**result, "results": [self._one_of_many(r) for r in result.get("results", [])]}
        return result

    def _stats(self, result: dict[str, Any]) -> dict[str, Any]:
        """The counters without the names of files beyond this connection's roots (other
        sessions' and the editor's files), and the watcher's roots as this connection's."""
        cut = dict(result)
        for part in ("total", "session"):
            counters = cut.get(part)
            if isinstance(counters, dict) and isinstance(counters.get("tokens_by_file"), dict):
                shown = {p: n for p, n in counters["tokens_by_file"].items() if self.reaches(p)}
                cut[part] = {**counters, "tokens_by_file": shown}
        history = cut.get("history")
        if isinstance(history, dict) and isinstance(history.get("events"), list):
            # A call beyond these roots is left out whole: its path, its time, its cost.
            shown_events = [
                e
                for e in history["events"]
                if isinstance(e, dict) and isinstance(e.get("path"), str) and self._journaled(e)
            ]
            left_out = len(history["events"]) - len(shown_events)
            cut["history"] = {**history, "events": shown_events, "beyond_roots": left_out}
        watcher = cut.get("watcher")
        if isinstance(watcher, dict):
            cut["watcher"] = self._watcher(watcher)
        return cut

    def _journaled(self, event: dict[str, Any]) -> bool:
        """Whether a journal event may be shown here: its file within these roots; a
        call naming no absolute path (attachments) only when these roots are the
        editor's own."""
        path = event["path"]
        if path and os.path.isabs(path):
            return self.reaches(path, str(event.get("session", "")))
        return not self.narrower

    def _watcher(self, status: dict[str, Any]) -> dict[str, Any]:
        """Each of this connection's roots stands for the editor's root that holds it;
        a reason that names a path beyond them is replaced."""
        shown = dict(status)
        if isinstance(status.get("watched_roots"), list):
            shown["watched_roots"] = self._mine(dict.fromkeys(status["watched_roots"], ""))
            shown["watched_roots"] = sorted(shown["watched_roots"])
        for name in ("polled_roots", "missing_roots"):
            if isinstance(status.get(name), dict):
                shown[name] = self._mine(status[name])
        if isinstance(status.get("fallback_reason"), str):
            shown["fallback_reason"] = self._said(status["fallback_reason"])
        return shown

    def _mine(self, by_root: dict[str, Any]) -> dict[str, Any]:
        mine: dict[str, Any] = {}
        for outer, why in by_root.items():
            for root in self.roots:
                if isinstance(outer, str) and is_within(root, outer):
                    mine[root] = self._said(why) if isinstance(why, str) else why
        return mine

    def _said(self, text: str) -> str:
        """`text`, or a stand-in when it names a path beyond this connection's roots."""
        for found in _ABSOLUTE.findall(text):
            if not self.reaches(found.rstrip(".,;:)'\"")):
                return "(it names a folder beyond this agent's roots; the editor's log has it)"
        return text

    def _one_of_many(self, item: Any) -> Any:
        error = item.get("error") if isinstance(item, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("data"), dict):
            return item
        data = dict(error["data"])
        kind = cast("ErrorKind", str(data.pop("kind", "internal")))
        cut = self.error(ReadkeeperError(kind, str(error.get("message", "")), **data))
        return {**item, "error": {"message": cut.message, "data": cut.to_data()}}

    def _shows(self, change: Any) -> bool:
        if not isinstance(change, dict):
            return False
        paths = [change.get("file_path"), change.get("new_path")]
        return all(self.reaches(p) for p in paths if isinstance(p, str))

    def _attachments(self, result: dict[str, Any]) -> dict[str, Any]:
        kept, dropped = [], []
        for item in result.get("attachments", []):
            source = item.get("source") if isinstance(item, dict) else None
            beyond = isinstance(source, str) and os.path.isabs(source) and not self.reaches(source)
            # The editor's diagnostics are one listing of every file it has open or
            # checked: with roots narrower than the editor's, it may name others.
            listing = self.narrower and item.get("type") in _LISTINGS
            if beyond or listing:
                reason = "outside this agent's roots" if beyond else _LISTING_REASON
                dropped.append(Dropped(str(item.get("type")), str(source), reason))
            else:
                kept.append(item)
        used = sum(int(item.get("tokens", 0)) for item in kept if isinstance(item, dict))
        # Listed by the core's bounds (each cut, the list held), with the core's own.
        shown = more_dropped(list(result.get("dropped", [])), dropped)
        return {**result, "attachments": kept, "dropped": shown, "used_tokens": used}

    def error(self, exc: ReadkeeperError) -> ReadkeeperError:
        """The core's refusal cut to this connection's roots: no did-you-mean, root or
        path of the editor's wider workspace."""
        data = dict(exc.data)
        message = exc.message
        if isinstance(data.get("suggestions"), list):
            data["suggestions"] = [
                s for s in data["suggestions"] if isinstance(s, str) and self.reaches(real_path(s))
            ]
            if message.startswith("File does not exist"):
                first = data["suggestions"][:1]
                hint = (
                    f" Did you mean {first[0]}?"
                    if first
                    else " List the folder to find the right name."
                )
                message = (
                    f"File does not exist: {data.get('file_path', '')}. "
                    f"The workspace root is {quoting.name(self.roots[0])}.{hint}"
                )
        if "roots" in data:
            data["roots"] = list(self.roots)
            if exc.kind == "outside_workspace":
                message = (
                    f"{quoting.name(str(data.get('file_path', 'That path')))} is outside "
                    "this agent's roots "
                    f"({', '.join(self.roots)}). Read a file inside them."
                )
        return ReadkeeperError(exc.kind, message, **data)


# The longest path Linux takes (PATH_MAX): a longer root names no folder, and an answer
# would echo it whole (round 42: a hello of a 600,000-character root, a 3.6 MB reply).
_PATH_MAX = 4096


def _declared_root(root: str, reaches: list[Reach], editor_roots: list[str]) -> str:
    """The real path of a root a hello names, or its refusal: an absolute folder within
    one of the editor's roots."""
    named = os.path.isabs(root) and "\x00" not in root and len(root) <= _PATH_MAX
    real = _real_root(os.path.normpath(root), reaches) if named else ""
    if not named:
        why: str | None = _not_a_root(root)
    elif not real or not any(is_within(real, e) for e in editor_roots):
        shown = ", ".join(map(shown_name, editor_roots)) or "none"
        why, real = f"it is outside the editor's roots ({shown})", ""  # not where it leads
    else:
        why = refused_root(real, may_be_home=True)
    if why is not None:
        raise ReadkeeperError(
            "outside_workspace",
            f"The editor's readkeeper will not serve the root {shown_name(root)}: {why}. "
            "The agent runs on its own for it.",
            real_path=real or root,
        )
    return real


def _over_caps(entries: list[Any]) -> bool:
    """Whether a request's list of paths is one the core refuses whole (protocol/
    convert.py): more entries than any list may hold, or more different paths."""
    if len(entries) > MAX_LIST_ITEMS:
        return True
    return len({entry for entry in entries if isinstance(entry, str)}) > MAX_PATHS


def _real_root(path: str, reaches: list[Reach]) -> str:
    """The real path of a root a hello names: one named inside the editor's roots is
    resolved looking only inside them (a link of the workspace's leading out gives "",
    its target never looked at); one named outside them (the agent's folder reached by
    a link of the user's, `~/proj` for the workspace) as the system resolves it."""
    if not any(is_within(path, r.real) or is_within(path, r.spelled) for r in reaches):
        return os.path.realpath(path)
    try:
        found = walk(path, reaches)
    except (OSError, ValueError):
        return ""
    return found if isinstance(found, str) else ""


def _not_a_root(root: str) -> str:
    if len(root) > _PATH_MAX:
        return f"it is {len(root):,} characters long, longer than any path ({_PATH_MAX:,})"
    return "it is not an absolute path"


__all__ = ["Scope"]
