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
    monkeypatch.setattr(sessions, "MAX_PER_PRINCIPAL", 2)
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
    monkeypatch.setattr(sessions, "MAX_PER_PRINCIPAL", 3)
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
    monkeypatch.setattr(sessions, "MAX_PER_PRINCIPAL", 2)
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
    assert str(caught.value).endswith('Name sessions with a short id, e.g. "chat-1".')
    assert read(core, app, "s" * sessions.MAX_NAME_CHARS) == "text"


def test_the_security_page_states_the_bounds_as_they_are() -> None:
    # The promise moved from the README's sandbox section to docs/security.md.
    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    promise = " ".join(page[page.index("## Sessions are bounded") :].split("\n## ")[0].split())
    assert f"keeps the {sessions.MAX_PER_PRINCIPAL} most recently used sessions" in promise
    assert f"{sessions.MAX_SESSIONS} sessions in all" in promise
    assert f"a session name over {sessions.MAX_NAME_CHARS} characters" in promise


def test_the_same_name_from_two_principals_is_two_sessions(core: Readkeeper, app: Path) -> None:
    params = {"file_path": str(app), "session": "chat-1"}
    assert calls.call(core, "read", params)["type"] == "text"
    assert calls.call(core, "read", params, "attach-1")["type"] == "text"
    assert calls.call(core, "read", params, "attach-1")["type"] == "file_unchanged"
    edit = {**params, "old_string": "x = 1", "new_string": "x = 2"}
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "edit", edit, "attach-2")
    assert caught.value.kind == "not_read"
    assert caught.value.data["session"] == "chat-1"  # its own name, never a key
    assert calls.call(core, "forget", {"session": "chat-1"}, "attach-2")["forgotten"] == 0
    assert calls.call(core, "read", params)["type"] == "file_unchanged"  # the editor's held


def test_stats_history_shows_a_principal_its_own_sessions(core: Readkeeper, app: Path) -> None:
    for principal in (sessions.EDITOR, "attach-1", "http-x"):
        calls.call(core, "read", {"file_path": str(app), "session": "s"}, principal)

    def seen(principal: str) -> list[str]:
        found = calls.call(core, "stats", {"history": True}, principal)
        return [e["session"] for e in found["history"]["events"]]

    assert seen(sessions.EDITOR) == ["s"]
    assert seen("attach-1") == ["s"]
    assert seen("attach-2") == []
    assert seen(sessions.VIEWER) == ["s", "attach-1:s", "http-x:s"]  # the user's own view
    theirs = calls.call(core, "stats", {"session": "s"}, "attach-2")
    assert "tokens_by_file" not in theirs["total"]  # no other principal's file names


def test_one_principal_cannot_push_out_anothers_sessions(
    core: Readkeeper, app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions, "MAX_PER_PRINCIPAL", 3)
    assert read(core, app, "victim") == "text"
    for i in range(10):
        calls.call(core, "read", {"file_path": str(app), "session": f"spam{i}"}, "attach-1")
    assert read(core, app, "victim") == "file_unchanged"


def test_at_the_global_bound_the_fullest_principal_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "MAX_PER_PRINCIPAL", 4)
    monkeypatch.setattr(sessions, "MAX_SESSIONS", 5)
    registry = Sessions()
    mine = [sessions.scoped("a", n) for n in "12"]
    hog = [sessions.scoped("b", n) for n in "1234"]
    assert [registry.enter(key) for key in mine + hog[:3]] == [[], [], [], [], []]
    assert registry.enter(hog[3]) == [hog[0]]  # b holds the most: its least recent goes
    assert registry.enter(sessions.scoped("c", "1")) == [hog[1]]
    assert registry.evicted(hog[0])
    assert not registry.evicted(mine[0])
    # b and a hold two each now: a tie falls on the caller, never on the other.
    assert registry.enter(sessions.scoped("a", "3")) == [mine[0]]
    assert registry.enter(sessions.scoped("b", "5")) == [hog[2]]


def test_a_session_name_holding_nul_is_refused(core: Readkeeper, app: Path) -> None:
    with pytest.raises(ReadkeeperError) as caught:
        read(core, app, "\x00attach-1\x00chat-1")  # would spell another principal's key
    assert caught.value.kind == "bad_params"
    assert caught.value.data["field"] == "session"
    assert str(caught.value).endswith('Name sessions with a short id, e.g. "chat-1".')


def test_a_dropped_session_is_told_so_until_it_starts_afresh(
    core: Readkeeper, app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions, "MAX_PER_PRINCIPAL", 2)
    assert read(core, app, "a") == "text"
    read(core, app, "b")
    read(core, app, "c")  # a goes
    edit = {"file_path": str(app), "old_string": "x = 1", "new_string": "x = 2", "session": "a"}
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "edit", edit)
    assert caught.value.data["session_dropped"] is True
    assert "read-state was dropped" in caught.value.message
    calls.call(core, "forget", {"session": "a"})  # its own fresh start: no longer dropped
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "edit", edit)
    assert "session_dropped" not in caught.value.data


def test_every_answer_about_a_dropped_sessions_read_state_says_so(
    core: Readkeeper, app: Path
) -> None:
    read(core, app, "a")
    read(core, app, "b")
    read(core, app, "c")  # a goes
    for method, params in [
        ("readkeeper/changes", {}),
        ("readkeeper/stats", {}),
        ("readkeeper/forget", {"paths": [str(app)]}),
    ]:
        answer = calls.call(core, method, {**params, "session": "a"})
        assert answer["session_dropped"] is True, method
        assert "read-state was dropped" in answer["note"], method
    attached = calls.call(core, "readkeeper/attachments", {"session": "a", "types": ["changes"]})
    assert "read-state was dropped" in attached["dropped"][-1]["reason"]
    assert (
        "read-state was dropped"
        in calls.call(core, "readkeeper/read", {"file_path": str(app), "session": "a"})["file"][
            "note"
        ]
    )
    calls.call(core, "readkeeper/forget", {"session": "a"})  # its own fresh start
    assert "session_dropped" not in calls.call(core, "readkeeper/changes", {"session": "a"})


def test_no_answer_to_a_principal_names_its_session_key(workspace: Path) -> None:
    # A principal's session is kept under a key holding NUL; a glob, list or grep page's
    # `next` and a readMany's notes named it, so the call they name was refused
    # (bad_params: NUL) and the key told the caller its door. Every answer, and every
    # refusal, names the session as the caller did.
    folder = workspace / "d"
    folder.mkdir()
    for i in range(300):
        (folder / f"file_{i:04}.txt").write_text("x\n")
    (workspace / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 1500})
    asked: list[tuple[str, dict[str, object]]] = [
        ("glob", {"pattern": "d/*.txt"}),
        ("list", {"path": "d"}),
        ("grep", {"pattern": "x", "path": "d"}),
        ("readMany", {"file_paths": ["big.txt", "d/file_0001.txt"], "budget_tokens": 2000}),
        ("read", {"file_path": "big.txt", "offset": 2990}),
        ("edit", {"file_path": "big.txt", "old_string": "row 1\n", "new_string": "r\n"}),
    ]
    for method, params in asked:
        try:
            said = repr(calls.call(core, method, {**params, "session": "s1"}, "http-9"))
        except ReadkeeperError as exc:
            said = repr((exc.message, exc.data))
        assert "http-9" not in said, (method, said[-500:])
        assert "\\x00" not in said, (method, said[-500:])
    core.close()
