"""Nothing outside the roots is looked up for an agent (files/reach.py): a path whose text
lies outside every root is refused `outside_workspace` before anything is looked at, the
same answer whether something is there or not; a link inside that leads out is refused
naming the link and its own text, and its target is never looked at either.

Every core call that takes a path is tried, with a spy on the calls that look a path up
by name (stat, lstat, readlink, open, listdir, scandir) that lets them through and
records what they were asked about: nothing beneath the outside folder may be among it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

# Paths in the outside folder: a file, nothing, a folder, a FIFO, a link to a file, a
# link to nothing, something in a folder, something in nothing.
OUTSIDE_NAMES = ["secret.txt", "missing.txt", "dir", "fifo", "flink", "alink", "dir/x", "no/x"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "dir").mkdir(parents=True)
    (out / "dir" / "x").write_text("x\n")
    (out / "secret.txt").write_text("secret\n")
    os.mkfifo(out / "fifo")
    (out / "flink").symlink_to(out / "secret.txt")
    (out / "alink").symlink_to(out / "dir" / "target-name-is-secret")
    return out


@pytest.fixture
def core(workspace: Path) -> Readkeeper:
    (workspace / "a.txt").write_text("alpha\n")
    return Readkeeper(roots=[str(workspace)])


@pytest.fixture
def looked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path looked up by name from now on (a name relative to an open folder, as
    readkeeper opens beneath a root, is not a lookup by name)."""
    seen: list[str] = []

    def spy(real: Callable[..., Any]) -> Callable[..., Any]:
        def looking(path: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, str | bytes | os.PathLike) and kwargs.get("dir_fd") is None:
                seen.append(os.fsdecode(path))
            return real(path, *args, **kwargs)

        return looking

    for name in ("stat", "lstat", "readlink", "open", "listdir", "scandir"):
        monkeypatch.setattr(os, name, spy(getattr(os, name)))
    return seen


def calls_of(path: str, inside: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every core call naming `path`, with a file `inside` for the other end of a move."""
    yield "read", {"file_path": path}
    yield "readMany", {"file_paths": [path]}
    yield "edit", {"file_path": path, "old_string": "a", "new_string": "b"}
    yield "write", {"file_path": path, "content": "x\n"}
    yield "patch", {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}
    yield "grep", {"pattern": "secret", "path": path}
    yield "glob", {"pattern": "*", "path": path}
    yield "list", {"path": path}
    yield "stat", {"path": path}
    yield "mkdir", {"path": path}
    yield "move", {"source": path, "destination": inside + ".moved"}
    yield "move", {"source": inside, "destination": path}
    yield "attachments", {"mentions": [path], "types": ["file"]}
    yield "forget", {"paths": [path]}


def answer(core: Readkeeper, method: str, raw: dict[str, Any], *said: str) -> str:
    """The call's answer as text, each of `said` (the path, a link's text) put as `<n>`."""
    try:
        text = json.dumps(calls.call(core, method, raw), sort_keys=True, default=str)
    except ReadkeeperError as exc:
        text = f"{exc.kind}: {exc.message} {json.dumps(exc.to_data(), sort_keys=True)}"
    for number, words in sorted(enumerate(said), key=lambda n: -len(n[1])):
        text = text.replace(words, f"<{number}>")
    return text


def test_a_path_outside_is_answered_by_its_text_alone(
    core: Readkeeper, workspace: Path, outside: Path, looked: list[str]
) -> None:
    inside = str(workspace / "a.txt")
    for index, (method, _) in enumerate(calls_of("", inside)):
        answers = {
            answer(core, method, list(calls_of(str(outside / name), inside))[index][1], name)
            for name in OUTSIDE_NAMES
        }
        assert len(answers) == 1, (method, answers)  # the same whatever is there
        if method not in ("readMany", "attachments", "forget"):
            assert answers.pop().startswith("outside_workspace: "), method
    # Also when written relative, or climbing out of the root by name.
    for given in ("../outside/secret.txt", f"{workspace}/../outside/missing.txt"):
        with pytest.raises(ReadkeeperError) as caught:
            calls.call(core, "read", {"file_path": given})
        assert caught.value.kind == "outside_workspace"
    assert not [p for p in looked if p.startswith(str(outside))]
    assert (workspace / "a.txt").read_text() == "alpha\n"  # nothing moved or written


def test_a_link_inside_leading_out_is_answered_by_its_own_text(
    core: Readkeeper, workspace: Path, outside: Path, looked: list[str]
) -> None:
    # Links to a file, to nothing, to a FIFO, and through a folder link, outside.
    targets = {
        "to-file": outside / "secret.txt",
        "to-nothing": outside / "missing.txt",
        "to-fifo": outside / "fifo",
        "to-link": outside / "flink",
    }
    for name, target in targets.items():
        (workspace / name).symlink_to(target)
    (workspace / "folder").symlink_to(outside / "dir")
    inside = str(workspace / "a.txt")
    for index, (method, _) in enumerate(calls_of("", inside)):
        if method == "move":
            continue  # a move takes a link itself, never what it leads to
        answers = set()
        for name, target in targets.items():
            raw = list(calls_of(str(workspace / name), inside))[index][1]
            answers.add(answer(core, method, raw, str(workspace / name), str(target)))
        assert len(answers) == 1, (method, answers)
        if method not in ("readMany", "attachments", "forget"):
            assert answers.pop().startswith("outside_workspace: "), method
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "read", {"file_path": str(workspace / "folder" / "x")})
    assert caught.value.kind == "outside_workspace"
    assert caught.value.data["link"] == str(workspace / "folder")
    assert caught.value.data["link_target"] == str(outside / "dir")
    assert "real_path" not in caught.value.data
    assert not [p for p in looked if p.startswith(str(outside))]


def test_a_link_loop_inside_is_not_found_never_stale(core: Readkeeper, workspace: Path) -> None:
    (workspace / "one").symlink_to("two")
    (workspace / "two").symlink_to("one")
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "read", {"file_path": "one"})
    assert caught.value.kind == "not_found"
    assert "loop" in caught.value.message


def test_links_inside_that_come_back_in_are_followed(core: Readkeeper, workspace: Path) -> None:
    # A link written as the root's absolute path, or climbing out and back in by name,
    # leads inside: it is read (the folders above the root are passed by name).
    (workspace / "sub").mkdir()
    (workspace / "absolute").symlink_to(workspace / "a.txt")
    (workspace / "sub" / "climbing").symlink_to(Path("..") / ".." / workspace.name / "a.txt")
    for name in ("absolute", "sub/climbing"):
        file = calls.call(core, "read", {"file_path": name})["file"]
        assert file["file_path"] == str(workspace / "a.txt")


def test_a_root_named_through_a_link_is_reached_by_either_name(tmp_path: Path) -> None:
    real = tmp_path / "real-ws"
    real.mkdir()
    (real / "a.txt").write_text("alpha\n")
    spelled = tmp_path / "ws-link"
    spelled.symlink_to(real)
    core = Readkeeper(roots=[str(spelled)])
    for given in (spelled / "a.txt", real / "a.txt", "a.txt"):
        file = calls.call(core, "read", {"file_path": str(given), "force": True})["file"]
        assert file["file_path"] == str(real / "a.txt")
    # And an allowed folder named through a link, as the user wrote it.
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("beta\n")
    (tmp_path / "other-link").symlink_to(other)
    core.configure({"allowed_paths": [str(tmp_path / "other-link")]})
    file = calls.call(core, "read", {"file_path": str(tmp_path / "other-link" / "b.txt")})
    assert file["file"]["file_path"] == str(other / "b.txt")


def test_a_missing_file_the_user_allowed_lists_no_folder_outside(
    core: Readkeeper, workspace: Path, outside: Path
) -> None:
    # The user let the session read one file outside, which is not there: the answer
    # may say so (the user allowed looking), but never suggests listing its folder,
    # which is not allowed.
    core.workspace.grant("chat", str(outside / "gone.txt"))
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "read", {"file_path": str(outside / "gone.txt"), "session": "chat"})
    assert caught.value.kind == "not_found"
    assert "list" not in caught.value.message
    # Inside, the nearest folder on its way that is there is offered.
    empty = workspace / "empty"
    (empty / "sub").mkdir(parents=True)
    for given, listed in (("sub/nothing.txt", "sub"), ("sub/no/nothing.txt", "sub"), ("x/y", "")):
        with pytest.raises(ReadkeeperError) as caught:
            calls.call(Readkeeper(roots=[str(empty)]), "read", {"file_path": given})
        folder = str(empty / listed) if listed else str(empty)
        assert f'readkeeper/list {{"path": "{folder}"}}' in caught.value.message
