"""Attachment sources through the core: diagnostics, memory files, git, selection, mentions."""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from helpers import stalled_git, wait_until
from readkeeper.attachments import diagnostics
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import (
    ActiveEditor,
    AttachmentsParams,
    DiagnosticsParams,
    EditParams,
    ForgetParams,
    Position,
    Range,
    ReadParams,
)


def attach(core: Readkeeper, **params: Any) -> dict[str, Any]:
    return core.attachments(AttachmentsParams(**params))


def of_type(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [a for a in result["attachments"] if a["type"] == kind]


def diagnostic(line: int, message: str, severity: int = 1) -> dict[str, Any]:
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
        "severity": severity,
        "message": message,
        "source": "pyright",
    }


def section(content: str, name: str) -> list[str]:
    """The lines listed under the file `name` in a diagnostics attachment."""
    lines = content.split("\n")
    start = lines.index(f"{name}:") + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def forward(
    core: Readkeeper, path: Path, *items: dict[str, Any], version: int | None = None
) -> None:
    entry: dict[str, Any] = {"uri": path.as_uri(), "diagnostics": list(items)}
    if version is not None:
        entry["version"] = version
    core.did_change_diagnostics(DiagnosticsParams(items=[entry]))


def test_diagnostics_errors_before_warnings_with_versions(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    forward(
        core, path, diagnostic(4, "unused import", 2), diagnostic(9, "undefined name"), version=3
    )
    [item] = of_type(attach(core, types=["diagnostics"]), "diagnostics")
    lines = item["content"].split("\n")
    assert lines[1] == "app.py (version 3):"
    assert lines[2] == "  10:1 error [pyright]: undefined name"
    assert lines[3] == "  5:1 warning [pyright]: unused import"


def test_diagnostics_of_a_name_with_escapes_land_on_that_file(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "my file; #1 é.py"
    path.write_text("x = 1\n")
    uri = "file://localhost" + quote(str(path))
    core.did_change_diagnostics(
        DiagnosticsParams(items=[{"uri": uri, "diagnostics": [diagnostic(0, "bad")]}])
    )
    [item] = of_type(attach(core, types=["diagnostics"]), "diagnostics")
    assert '"my file; #1 é.py":' in item["content"]  # quoted: it holds spaces
    assert "1:1 error [pyright]: bad" in item["content"]


def test_new_diagnostics_since_the_sessions_last_read_come_first_and_marked(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    forward(core, path, diagnostic(0, "old problem", 2))
    core.read(ReadParams(file_path=str(path), session="chat"))
    forward(core, path, diagnostic(0, "old problem", 2), diagnostic(1, "fresh error"))
    result = attach(core, session="chat", types=["diagnostics"])
    new, old = of_type(result, "diagnostics")
    assert new["priority"] > old["priority"]
    assert "error (new) [pyright]: fresh error" in new["content"]
    assert "old problem" not in new["content"]
    assert "old problem" in old["content"]
    # Another session never read the file: nothing is new to it, nothing is marked.
    other = of_type(attach(core, session="other", types=["diagnostics"]), "diagnostics")
    assert len(other) == 1
    assert "(new)" not in other[0]["content"]


def test_after_an_edit_only_what_is_reported_since_it_is_new_to_the_session(
    core: Readkeeper, workspace: Path
) -> None:
    path, other = workspace / "app.py", workspace / "other.py"
    path.write_text("x = 1\n")
    other.write_text("y = 1\n")
    core.read(ReadParams(file_path=str(path), session="chat"))
    core.read(ReadParams(file_path=str(other), session="chat"))
    forward(core, path, diagnostic(0, "before the edit"))
    forward(core, other, diagnostic(0, "in the other file"))
    core.edit(
        EditParams(file_path=str(path), old_string="x = 1", new_string="x = 2", session="chat")
    )
    forward(core, path, diagnostic(0, "before the edit"), diagnostic(0, "after the edit"))
    new, old = of_type(attach(core, session="chat", types=["diagnostics"]), "diagnostics")
    # Known to the edit's session when it edited: not new; the edit's own: new. The other
    # file it did not edit keeps its baseline (its report is still new).
    assert section(new["content"], "app.py") == ["  1:1 error (new) [pyright]: after the edit"]
    assert section(new["content"], "other.py") == ["  1:1 error (new) [pyright]: in the other file"]
    assert section(old["content"], "app.py") == ["  1:1 error [pyright]: before the edit"]
    # Another session read nothing: nothing is new to it.
    assert (
        "(new)"
        not in attach(core, session="else", types=["diagnostics"])["attachments"][0]["content"]
    )


def test_a_problem_reported_three_times_where_twice_was_seen_is_new_once(
    core: Readkeeper, workspace: Path
) -> None:
    # Problems are matched by what they say, not where: an edit moves them. Three alike
    # after the read, where two were, is one new.
    path = workspace / "app.py"
    path.write_text("import os\n")
    forward(core, path, *(diagnostic(line, "unused import", 2) for line in (0, 4)))
    core.read(ReadParams(file_path=str(path), session="chat"))
    forward(core, path, *(diagnostic(line, "unused import", 2) for line in (0, 4, 9)))
    new, old = of_type(attach(core, session="chat", types=["diagnostics"]), "diagnostics")
    assert section(new["content"], "app.py") == ["  10:1 warning (new) [pyright]: unused import"]
    assert section(old["content"], "app.py") == [
        "  1:1 warning [pyright]: unused import",
        "  5:1 warning [pyright]: unused import",
    ]


def test_a_file_with_an_error_comes_before_files_with_warnings_only(
    core: Readkeeper, workspace: Path
) -> None:
    warned, failing = workspace / "a.py", workspace / "b.py"
    for path in (warned, failing):
        path.write_text("x = 1\n")
    forward(core, warned, diagnostic(0, "style", 2))
    forward(core, failing, diagnostic(0, "broken"), diagnostic(1, "style", 2))
    [item] = of_type(attach(core, types=["diagnostics"]), "diagnostics")
    headers = [line for line in item["content"].split("\n") if line.endswith(".py:")]
    assert headers == ["b.py:", "a.py:"]


def test_diagnostics_asked_for_one_file_list_that_file_only(
    core: Readkeeper, workspace: Path
) -> None:
    files = [workspace / name for name in ("a.py", "b.py", "c.py")]
    for path in files:
        path.write_text("x = 1\n")
        forward(core, path, diagnostic(0, f"problem in {path.name}"))
    result = attach(core, types=["diagnostics"], mentions=[str(files[1])])
    [item] = of_type(result, "diagnostics")
    assert "problem in b.py" in item["content"]
    assert "a.py" not in item["content"]
    assert "c.py" not in item["content"]


@pytest.mark.parametrize("paths", [None, ["app.py"]], ids=["all", "the file"])
def test_a_forgotten_file_has_no_new_diagnostics_for_the_session(
    core: Readkeeper, workspace: Path, paths: list[str] | None
) -> None:
    # What the session saw reported goes with what it read: after `forget` (a
    # compaction) nothing is new to it, as for a session that never read the file.
    path, kept = workspace / "app.py", workspace / "kept.py"
    for file in (path, kept):
        file.write_text("x = 1\n")
        core.read(ReadParams(file_path=str(file), session="chat"))
        forward(core, file, diagnostic(1, "fresh error"))
    core.forget(ForgetParams(session="chat", paths=paths))
    [*new, old] = of_type(attach(core, session="chat", types=["diagnostics"]), "diagnostics")
    assert "app.py:" in old["content"]
    assert "(new)" not in old["content"]
    if paths is None:
        assert new == []
    else:  # the file it still holds keeps its baseline
        assert "kept.py:" in new[0]["content"]
        assert "error (new) [pyright]: fresh error" in new[0]["content"]
    # Read again, what is reported after that is new to the session once more.
    core.read(ReadParams(file_path=str(path), session="chat"))
    forward(core, path, diagnostic(1, "fresh error"), diagnostic(2, "another"))
    items = of_type(attach(core, session="chat", types=["diagnostics"]), "diagnostics")
    assert section(items[0]["content"], "app.py") == ["  3:1 error (new) [pyright]: another"]
    assert section(items[1]["content"], "app.py") == ["  2:1 error [pyright]: fresh error"]


def test_a_sessions_diagnostics_baselines_are_capped_oldest_first(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diagnostics, "MAX_BASELINES_PER_SESSION", 3)
    files = [workspace / f"f{i}.py" for i in range(4)]
    for file in files:
        file.write_text("x = 1\n")
        core.read(ReadParams(file_path=str(file), session="chat"))
    store = core.diagnostics
    assert store.baseline("chat", str(files[0])) is None  # the oldest made room
    assert [store.baseline("chat", str(f)) for f in files[1:]] == [Counter()] * 3
    core.read(ReadParams(file_path=str(files[1]), session="chat"))  # read again: newest
    core.read(ReadParams(file_path=str(files[0]), session="chat"))
    assert store.baseline("chat", str(files[2])) is None
    assert store.baseline("chat", str(files[1])) == Counter()


def test_an_empty_list_clears_a_files_diagnostics(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "app.py"
    forward(core, path, diagnostic(0, "boom"))
    forward(core, path)
    assert of_type(attach(core, types=["diagnostics"]), "diagnostics") == []


def test_malformed_diagnostics_are_bad_params(core: Readkeeper) -> None:
    with pytest.raises(ReadkeeperError) as caught:
        core.did_change_diagnostics(DiagnosticsParams(items=[{"diagnostics": []}]))
    assert caught.value.kind == "bad_params"
    assert "uri" in caught.value.message


def test_ten_thousand_diagnostics_stay_within_their_cap(core: Readkeeper, workspace: Path) -> None:
    for f in range(50):
        forward(
            core,
            workspace / f"m{f}.py",
            *(diagnostic(i, f"problem {i} " + "x" * 40) for i in range(200)),
        )
    [item] = of_type(attach(core, types=["diagnostics"]), "diagnostics")
    assert item["tokens"] <= core.settings.diagnostics_max_tokens
    assert item["truncated"] is True
    # What is shown and what the note says was left out add up to all of them.
    shown = re.findall(r"^  \d+:1 error \[pyright\]: problem ", item["content"], re.M)
    note = re.search(r"\[… (\d+) more diagnostics? in (\d+) files? not shown\.", item["content"])
    assert note is not None, item["content"][-300:]
    assert 0 < len(shown) < 10_000
    assert len(shown) + int(note[1]) == 10_000
    assert f'"diagnostics_offset": {len(shown)}' in item["content"]  # the call for the rest


def test_memory_files_at_the_root_and_above_mentions(core: Readkeeper, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("root rules\n")
    (workspace / "pkg" / "sub").mkdir(parents=True)
    (workspace / "pkg" / "CLAUDE.md").write_text("pkg rules\n")
    (workspace / "pkg" / "sub" / "mod.py").write_text("y = 2\n")
    result = attach(core, mentions=["pkg/sub/mod.py"], types=["file", "memory"])
    sources = [(a["type"], a["source"]) for a in result["attachments"]]
    assert sources == [
        ("file", str(workspace / "pkg" / "sub" / "mod.py")),
        ("memory", str(workspace / "pkg" / "CLAUDE.md")),
        ("memory", str(workspace / "AGENTS.md")),
    ]


def test_memory_file_over_the_cap_is_cut_with_where_to_read_on(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("".join(f"- rule {i}\n" for i in range(1, 301)))
    [item] = of_type(attach(core, types=["memory"]), "memory")
    label, fence, *lines, closing, note = item["content"].split("\n")
    assert label == "AGENTS.md, the repository's words:"
    assert fence == closing == "```"  # the repository's words fenced, readkeeper's note after
    assert lines[199] == "- rule 200"
    assert len(lines) == 200
    assert "showing 200 of the file's 300 lines" in note
    assert '"offset": 201' in note


def test_memory_file_over_the_byte_cap_is_cut_at_a_line(core: Readkeeper, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("".join(f"{'é' * 60} {i}\n" for i in range(100)))
    [item] = of_type(attach(core, types=["memory"]), "memory")
    _label, _fence, *shown, _closing, note = item["content"].split("\n")
    assert len("\n".join(shown).encode()) <= 4096
    assert all(line.startswith("é" * 60) for line in shown)
    assert f'"offset": {len(shown) + 1}' in note


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The same environment the server gives git: the C locale, no user config.
    env = {"LC_ALL": "C", "PATH": os.environ["PATH"], "HOME": str(root.parent)}
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    return subprocess.run(
        ["git", *identity, "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )


def test_git_status_names_the_branch_and_changes(core: Readkeeper, workspace: Path) -> None:
    _git(workspace, "init", "-q")
    _git(workspace, "symbolic-ref", "HEAD", "refs/heads/trunk")  # any git's `init -b`
    (workspace / "kept.txt").write_text("k\n")
    _git(workspace, "add", "kept.txt")
    _git(workspace, "commit", "-q", "-m", "first")
    (workspace / "kept.txt").write_text("changed\n")
    (workspace / "new.txt").write_text("n\n")
    [item] = of_type(attach(core, types=["git_status"]), "git_status")
    # Porcelain output, not git's prose: the branch name and the two-letter codes.
    assert item["content"] == (
        f"git status of {workspace}: branch trunk, 2 changed files\n M kept.txt\n?? new.txt"
    )


def test_git_status_lines_are_gits_own(core: Readkeeper, workspace: Path) -> None:
    """Renames, conflicts, type changes, staged-then-modified files and quoted names
    come out as `git status --porcelain=v1 --branch` prints them."""
    _git(workspace, "init", "-q")
    _git(workspace, "symbolic-ref", "HEAD", "refs/heads/trunk")
    for name in ("both.txt", "moved.txt", "link.txt", "gone.txt"):
        (workspace / name).write_text(f"{name}\n")
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-q", "-m", "base")
    _git(workspace, "checkout", "-q", "-b", "side")
    (workspace / "both.txt").write_text("side\n")
    _git(workspace, "commit", "-q", "-am", "side")
    _git(workspace, "checkout", "-q", "trunk")
    (workspace / "both.txt").write_text("trunk\n")
    _git(workspace, "commit", "-q", "-am", "trunk")
    subprocess.run(["git", "-C", str(workspace), "merge", "-q", "side"], capture_output=True)
    _git(workspace, "mv", "moved.txt", "renamed.txt")
    (workspace / "link.txt").unlink()
    (workspace / "link.txt").symlink_to("renamed.txt")
    (workspace / "staged.txt").write_text("s\n")
    _git(workspace, "add", "staged.txt")
    (workspace / "staged.txt").write_text("s2\n")
    _git(workspace, "rm", "-q", "gone.txt")
    (workspace / "caf\u00e9 n\u00b0\t1.txt").write_text("x\n")
    (workspace / "new").mkdir()
    (workspace / "new" / "deep.txt").write_text("d\n")
    gits = _git(workspace, "status", "--porcelain=v1", "--branch").stdout.splitlines()
    assert gits[0] == "## trunk"
    [item] = of_type(attach(core, types=["git_status"]), "git_status")
    header, *lines = item["content"].split("\n")
    assert header == f"git status of {workspace}: branch trunk, {len(gits) - 1} changed files"
    assert lines == gits[1:]
    assert {line[:2] for line in lines} >= {"UU", "R ", " T", "AM", "D ", "??"}


def test_a_root_inside_another_roots_repository_is_skipped(workspace: Path) -> None:
    _git(workspace, "init", "-q")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("a\n")
    core = Readkeeper(roots=[str(workspace), str(workspace / "sub")])
    result = attach(core, types=["git_status"])
    assert [a["source"] for a in result["attachments"]] == [str(workspace)]
    assert "?? sub/" in result["attachments"][0]["content"]
    assert result["dropped"] == []


def test_not_a_repository_is_skipped_quietly(core: Readkeeper) -> None:
    result = attach(core, types=["git_status"])
    assert result["attachments"] == []
    assert result["dropped"] == []


def test_a_failing_git_is_reported_not_fatal(core: Readkeeper, workspace: Path) -> None:
    _git(workspace, "init", "-q")
    (workspace / ".git" / "index").write_text("garbage\n")  # a corrupt repository
    (workspace / "AGENTS.md").write_text("rules\n")
    result = attach(core, types=["git_status", "memory"])
    assert [a["type"] for a in result["attachments"]] == ["memory"]
    [dropped] = result["dropped"]
    assert dropped["type"] == "git_status"
    # A kind from the design's list and libgit2's complaint, naming what it could not
    # read (it was "failed: RuntimeError: git status failed: ...": no kind, no next step).
    assert dropped["reason"].startswith("corrupt: git status could not read the repository: ")
    assert "index" in dropped["reason"]
    assert dropped["reason"].endswith("ask the user to look at the repository.")


def test_a_slow_source_is_reported_not_waited_for(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)], client_settings={"git_timeout_ms": 300})
    stalled_git(workspace)  # an object that never finishes reading
    (workspace / "AGENTS.md").write_text("rules\n")
    result = attach(core, types=["git_status", "memory"])
    assert [a["type"] for a in result["attachments"]] == ["memory"]
    # Waited for git's own bound, then the bounded look named what it waited on (a
    # loose object that is a FIFO): not "ask again", which would wait the same way.
    reason = result["dropped"][0]["reason"]
    assert reason.startswith("corrupt: git status could not read the repository: objects/")
    assert "is a named pipe (FIFO)" in reason
    assert "ask the user to remove or replace it" in reason


def test_a_source_past_the_attachments_timeout_names_its_kind_and_next_step(
    workspace: Path,
) -> None:
    # git's own bound is past the attachments' one: the attachments' is what ends the
    # wait (a git object is a FIFO with no writer, which blocks whoever opens it).
    settings = {"git_timeout_ms": 2_000, "attachments_timeout_ms": 300}
    core = Readkeeper(roots=[str(workspace)], client_settings=settings)
    stalled_git(workspace)
    (workspace / "AGENTS.md").write_text("rules\n")
    try:
        result = attach(core, types=["git_status", "memory"])
    finally:
        # git status ends at its own bound: waited for, so that the next test's git
        # status finds the worker (one per process) free.
        core.attachment_pool.shutdown(wait=True)
        core.close()
    assert [a["type"] for a in result["attachments"]] == ["memory"]
    [dropped] = result["dropped"]
    assert dropped["source"] == str(workspace)
    # A kind from the design's list, as every other reason has, and the next steps that
    # work in every front end: this source alone, or the setting that bounds it.
    assert dropped["reason"] == (
        "too_large: git status took longer than the 0.3 s each attachment source is given "
        "(the attachments_timeout_ms setting). Ask for it alone with the attachments tool "
        'with {"types": ["git_status"]}, or ask the user to raise attachments_timeout_ms '
        "(READKEEPER_ATTACHMENTS_TIMEOUT_MS)."
    )


def test_git_status_never_runs_the_repositorys_fsmonitor_command(
    workspace: Path, tmp_path: Path
) -> None:
    core = Readkeeper(roots=[str(workspace)])
    _git(workspace, "init", "-q")
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "fsmonitor"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    _git(workspace, "config", "core.fsmonitor", str(hook))
    (workspace / "new.txt").write_text("x\n")
    [item] = of_type(attach(core, types=["git_status"]), "git_status")
    assert "?? new.txt" in item["content"]
    assert not marker.exists()


def test_selection_of_the_active_editor(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.py").write_text("one\ntwo\nthree\nfour\n")
    editor = ActiveEditor("a.py", Range(Position(1, 0), Position(3, 0)))
    [item] = of_type(attach(core, types=["selection"], active_editor=editor), "selection")
    assert item["content"] == (
        f"The user's active editor: {workspace / 'a.py'}, lines 2-3 selected:\n"
        "     2\ttwo\n     3\tthree"
    )


def test_a_missing_mention_is_reported_with_its_error(core: Readkeeper, workspace: Path) -> None:
    (workspace / "real.py").write_text("r\n")
    result = attach(core, mentions=["raal.py"], types=["file"])
    assert result["attachments"] == []
    [dropped] = result["dropped"]
    assert dropped["reason"].startswith("not_found:")
    assert "real.py" in dropped["reason"]


def test_a_huge_diagnostic_log_cannot_crowd_out_the_users_file(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "spec.md").write_text("".join(f"requirement {i}: must hold\n" for i in range(80)))
    forward(core, workspace / "gen.py", *(diagnostic(i, "E" * 60) for i in range(250)))
    result = attach(core, mentions=["spec.md"], budget_tokens=1500, types=["file", "diagnostics"])
    assert result["used_tokens"] <= 1500
    [mention] = of_type(result, "file")
    assert mention["truncated"] is False
    assert "requirement 79" in mention["content"]
    # The log is cut to the room the file left (enough for a useful part), not dropped.
    assert result["dropped"] == []
    [diagnostics] = of_type(result, "diagnostics")
    assert diagnostics["truncated"] is True
    assert "[diagnostics cut to fit the token budget: showing " in diagnostics["content"]
    # used_tokens: what they take as sent, their headers and fences too.
    assert mention["tokens"] + diagnostics["tokens"] < result["used_tokens"]


def test_unknown_types_and_bad_budgets_are_bad_params(core: Readkeeper) -> None:
    for params in ({"types": ["weather"]}, {"budget_tokens": 0}):
        with pytest.raises(ReadkeeperError) as caught:
            attach(core, **params)
        assert caught.value.kind == "bad_params"


def test_stats_count_attachments_by_type(core: Readkeeper, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("".join(f"rule {i}\n" for i in range(400)))
    attach(core, types=["memory"])
    stats = core.stats.snapshot("")
    assert stats["total"]["attachments_served"] == 1
    assert stats["total"]["attachment_tokens"] > 0
    assert stats["total"]["attachments_truncated"] == {"memory": 1}


def test_change_notices_are_attached_once_and_come_back_when_dropped(workspace: Path) -> None:
    core = Readkeeper(roots=[str(workspace)])
    pushed: list[str] = []
    core.notices.on_notice = lambda session, changes: pushed.extend(c.file_path for c in changes)
    core.start_watching(lambda message: None, lambda stage, message: None)
    try:
        path = workspace / "config.toml"
        path.write_text("".join(f"key{i} = {i}\n" for i in range(40)))
        core.read(ReadParams(file_path=str(path), session="agent"))
        wait_until(lambda: core.watcher_status()["state"] != "starting", "the watcher to start")
        path.write_text(path.read_text().replace("key7 = 7", "key7 = 700"))
        wait_until(lambda: str(path) in pushed, "the watcher to see the change")

        # A budget too small for it: dropped now, and so still owed to the agent.
        tight = attach(core, session="agent", types=["changes"], budget_tokens=20)
        assert tight["attachments"] == []
        assert [d["type"] for d in tight["dropped"]] == ["changes"]

        [notice] = of_type(attach(core, session="agent", types=["changes"]), "changes")
        assert notice["source"] == str(path)
        assert "-key7 = 7\n+key7 = 700" in notice["content"]
        # Reported once: the next turn does not repeat it.
        assert of_type(attach(core, session="agent", types=["changes"]), "changes") == []
    finally:
        core.close()


def test_a_message_ending_in_the_mark_cannot_pose_as_it(core: Readkeeper, workspace: Path) -> None:
    # The mark followed the editor's message, so "... (new)" from the language server read
    # as readkeeper's own mark (attack round 22): it now comes before the message.
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    stale = diagnostic(0, "stale but says (new)")
    forward(core, path, stale)
    core.read(ReadParams(file_path=str(path), session="chat"))
    forward(core, path, stale, diagnostic(1, "fresh"))
    lines = [
        line
        for item in of_type(attach(core, session="chat", types=["diagnostics"]), "diagnostics")
        for line in section(item["content"], "app.py")
    ]
    marked = [line for line in lines if re.match(r"  \d+:\d+ \w+ \(new\) ", line)]
    assert marked == ["  2:1 error (new) [pyright]: fresh"], lines
    assert "  1:1 error [pyright]: stale but says (new)" in lines


def test_a_source_that_faults_is_dropped_as_internal_with_a_next_step() -> None:
    # A fault that is no refusal of readkeeper's (a bug in a source) was dropped as
    # "failed: ValueError: ..." with no kind.
    from concurrent.futures import ThreadPoolExecutor

    from readkeeper.attachments.collect import Source, _run_phase

    def broken() -> list[Any]:
        raise ValueError("a source's bug")

    with ThreadPoolExecutor(1) as pool:
        items, dropped = _run_phase(pool, [Source("memory", "AGENTS.md", broken)], 5.0)
    assert items == []
    assert [d.as_json() for d in dropped] == [
        {
            "type": "memory",
            "source": "AGENTS.md",
            "reason": "internal: ValueError: \"a source's bug\" (a fault of readkeeper's). Ask "
            "again.",
        }
    ]
