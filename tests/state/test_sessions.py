"""How many sessions the server keeps: a client that names a new session at every call
(a prompt-injected agent, a broken client) cannot grow it without end."""

from __future__ import annotations

from pathlib import Path

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.state import sessions
from readkeeper.state.sessions import Sessions


@pytest.fixture
def app(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file to read, with the core keeping two sessions."""
    monkeypatch.setattr(sessions, "MAX_SESSIONS", 2)
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    return path


def read(core: Readkeeper, path: Path, session: str) -> str:
    """The type of what `session` gets for a read of `path`, through the dispatch every
    front end uses."""
    result = calls.call(core, "readkeeper/read", {"file_path": str(path), "session": session})
    kind: str = result["type"]
    return kind


def kept(core: Readkeeper, session: str) -> bool:
    """Whether the server holds anything of `session` (looked at without a call, which
    would make it the most recent session)."""
    counters = core.stats.snapshot(session)["session"]
    return core.read_states.count(session) > 0 or counters["reads"] > 0


def test_the_least_recent_session_is_forgotten_past_the_bound(
    core: Readkeeper, app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions, "MAX_SESSIONS", 3)
    for name in ("a", "b", "c"):
        assert read(core, app, name) == "text"
    assert read(core, app, "a") == "file_unchanged"  # a is now the most recent
    assert read(core, app, "d") == "text"  # one too many: b, the least recent, goes
    assert [kept(core, name) for name in "abcd"] == [True, False, True, True]
    assert read(core, app, "c") == "file_unchanged"
    assert read(core, app, "b") == "text"  # back as new, and a goes
    assert [kept(core, name) for name in "abcd"] == [False, True, True, True]


def test_any_call_of_a_session_keeps_it(core: Readkeeper, app: Path) -> None:
    assert read(core, app, "a") == "text"
    assert read(core, app, "b") == "text"
    calls.call(core, "readkeeper/changes", {"session": "a"})
    calls.call(core, "readkeeper/stats", {"session": "c"})  # b, not a, makes room
    assert read(core, app, "a") == "file_unchanged"
    assert read(core, app, "b") == "text"


def test_a_forgotten_session_leaves_nothing_behind(core: Readkeeper, app: Path) -> None:
    assert read(core, app, "old") == "text"
    real = str(app.resolve())
    assert core.diagnostics.baseline("old", real) is not None
    assert core.stats.snapshot("old")["session"]["tokens_by_file"]
    for name in ("new-1", "new-2"):
        read(core, app, name)
    assert core.read_states.count("old") == 0
    assert core.diagnostics.baseline("old", real) is None
    assert core.stats.snapshot("old")["session"] == core.stats.snapshot("never")["session"]
    assert core.stats.snapshot(None)["total"]["reads"] == 3  # the total keeps every read


def test_forgetting_a_session_whole_frees_its_place(core: Readkeeper, app: Path) -> None:
    assert read(core, app, "a") == "text"
    assert read(core, app, "b") == "text"
    calls.call(core, "readkeeper/forget", {"session": "a"})
    assert read(core, app, "c") == "text"  # into a's place: b stays
    assert read(core, app, "b") == "file_unchanged"


def test_the_registry_names_the_sessions_it_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "MAX_SESSIONS", 2)
    registry = Sessions()
    assert [registry.enter(name) for name in "abca"] == [[], [], ["a"], ["b"]]
    registry.leave("c")
    assert registry.enter("d") == []
    assert registry.enter("a") == []
    assert registry.enter("e") == ["d"]


def test_a_session_name_past_the_limit_is_refused(core: Readkeeper, app: Path) -> None:
    with pytest.raises(ReadkeeperError) as caught:
        read(core, app, "s" * (sessions.MAX_NAME_CHARS + 1))
    assert caught.value.kind == "bad_params"
    assert caught.value.data["field"] == "session"
    assert f"at most {sessions.MAX_NAME_CHARS} characters" in str(caught.value)
    assert read(core, app, "s" * sessions.MAX_NAME_CHARS) == "text"


def test_the_security_page_states_the_bounds_as_they_are() -> None:
    # The promise moved from the README's sandbox section to docs/security.md.
    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    promise = " ".join(page[page.index("## Sessions are bounded") :].split("\n## ")[0].split())
    assert f"keeps the {sessions.MAX_SESSIONS} most recently used sessions" in promise
    assert f"a session name over {sessions.MAX_NAME_CHARS} characters" in promise
