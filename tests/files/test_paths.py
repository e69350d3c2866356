"""Where a path points (paths.py): containment, the editor's URIs, relative paths, and
the short names shown to the agent. Plain functions on real files; no server."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from helpers import run_python
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files import guesses, paths
from readkeeper.files.paths import Workspace, is_within, screenshot_variant, suggest, uri_path
from readkeeper.files.walk import files_beneath
from readkeeper.protocol import ReadParams


def test_inside_means_below_the_folder_not_a_name_that_starts_like_it() -> None:
    assert is_within("/home/me/ws", "/home/me/ws")
    assert is_within("/home/me/ws/a/b.py", "/home/me/ws")
    assert is_within("/home/me/ws/a", "/home/me/ws/")  # a root given with its slash
    assert not is_within("/home/me/ws-evil/secret", "/home/me/ws")
    assert not is_within("/home/me/wsx", "/home/me/ws")
    assert not is_within("/home/me", "/home/me/ws")
    assert is_within("/anything", "/")


def test_the_editors_uris_name_real_paths(tmp_path: Path) -> None:
    folder = tmp_path / "a b"
    folder.mkdir()
    (folder / "ü.txt").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert uri_path((folder / "ü.txt").as_uri()) == str(folder / "ü.txt")
    assert uri_path(f"file://localhost{folder}/%C3%BC.txt") == str(folder / "ü.txt")
    assert uri_path(f"FILE://{folder}") == str(folder)  # the scheme in any case
    assert uri_path((link / "ü.txt").as_uri()) == str(folder / "ü.txt")  # links resolved
    # A name that is not UTF-8 survives the round trip through percent-encoding.
    assert uri_path(f"file://{tmp_path}/%FF") == os.fsdecode(bytes(tmp_path) + b"/\xff")


@pytest.mark.parametrize(
    "uri",
    [
        "untitled:Untitled-1",
        "vscode-remote://ssh-remote+box/home/me/a.py",
        "file://otherhost/etc/passwd",
        "file:relative/path.py",
        "file:///tmp/a%00b",
        "http://[broken",
    ],
)
def test_uris_that_name_no_local_file_are_none(uri: str) -> None:
    assert uri_path(uri) is None


def test_relative_paths_are_taken_from_the_first_root(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    workspace = Workspace()
    workspace.set_roots([str(first), str(second)])
    assert workspace.absolute("src/../a.py") == str(first / "a.py")
    assert workspace.absolute(str(second / "b" / ".." / "c.py")) == str(second / "c.py")
    assert workspace.absolute("~/x.txt") == os.path.join(os.path.expanduser("~"), "x.txt")


def test_paths_are_shown_relative_to_their_root(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    workspace = Workspace()
    workspace.set_roots([str(root)])
    assert workspace.display(str(root / "src" / "a.py")) == os.path.join("src", "a.py")
    assert workspace.display(str(root)) == str(root)
    sibling = str(tmp_path / "ws-other" / "a.py")
    assert workspace.display(sibling) == sibling  # not inside: shown whole


def test_screenshot_names_are_tried_with_the_other_space() -> None:
    plain = "/shots/Screenshot 2024-05-01 at 10.21.33 PM.png"
    narrow = plain.replace(" PM", "\u202fPM")
    assert screenshot_variant(plain) == narrow
    assert screenshot_variant(narrow) == plain
    assert screenshot_variant(plain.replace("PM", "AM")) == narrow.replace("PM", "AM")
    assert screenshot_variant("/shots/notes.png") is None


def test_a_link_out_is_named_by_its_own_text_whether_its_target_exists_or_not(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    (root / "inside.txt").symlink_to(outside)
    (root / "dangling").symlink_to(tmp_path / "gone")
    workspace = Workspace()
    workspace.set_roots([str(root)])
    # The target is never looked at: a link to a file outside and a link to nothing
    # outside get the same answer, naming the link's own text (workspace content).
    for name, target in (("inside.txt", outside), ("dangling", tmp_path / "gone")):
        with pytest.raises(ReadkeeperError) as caught:
            workspace.resolve(name)
        assert caught.value.kind == "outside_workspace"
        assert caught.value.message.startswith(
            f"{root / name} is a symbolic link to {target}, which leads outside the "
            f"workspace roots ({root})."
        )
        assert caught.value.data["link_target"] == str(target)
        assert "real_path" not in caught.value.data
    with pytest.raises(ReadkeeperError) as caught:
        workspace.resolve(str(outside))
    assert caught.value.message.startswith(f"{outside} is outside the workspace roots ({root})")
    # A link to nothing inside is still said to be one.
    (root / "inner").symlink_to(root / "gone")
    with pytest.raises(ReadkeeperError) as caught:
        workspace.resolve("inner")
    assert caught.value.kind == "not_found"
    assert "is a symbolic link to" in caught.value.message


def test_suggestions_stay_inside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "config.toml").write_text("")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "config.toml").write_text("")
    (tmp_path / "confg.toml").write_text("")  # a near name next to the root, outside it
    found = suggest(str(root / "confg.toml"), [str(root)])
    assert found == [str(root / "src" / "config.toml")]  # not outside, not node_modules
    # A missing folder on the way: the nearest existing one is searched.
    nested = suggest(str(root / "src" / "missing" / "config.toml"), [str(root)])
    assert nested[0] == str(root / "src" / "config.toml")
    # Asked about a path outside, its neighbours there are never listed.
    (tmp_path / "confgi.toml").write_text("")
    outside = suggest(str(tmp_path / "confg.toml"), [str(root)])
    assert outside
    assert all(is_within(p, str(root)) for p in outside), outside
    # Not even a link out there that leads back in: its name would show what is there.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "settings.toml").symlink_to(root / "src" / "config.toml")
    assert suggest(str(tmp_path / "elsewhere" / "setings.toml"), [str(root)]) == []


def test_a_missing_file_names_the_first_root(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    workspace = Workspace()
    workspace.set_roots([str(first), str(second)])
    with pytest.raises(ReadkeeperError) as caught:
        workspace.resolve("nothing-like-it.txt")
    assert f" The workspace root is {first}. " in caught.value.message
    assert caught.value.data["suggestions"] == []


def test_granted_paths_are_permitted_for_the_session_or_once(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    notes, once = elsewhere / "notes.txt", elsewhere / "once.txt"
    workspace = Workspace()
    workspace.set_roots([str(root)])
    assert workspace.is_permitted(str(root / "a.txt"), "chat")
    assert not workspace.is_permitted(str(notes), "chat")
    assert not workspace.is_permitted(str(tmp_path / "ws-evil" / "a.txt"), "chat")
    workspace.grant("chat", str(elsewhere))  # for the session: every use
    assert workspace.is_permitted(str(notes), "chat")
    assert workspace.is_permitted(str(notes), "chat")
    assert not workspace.is_permitted(str(notes), "other chat")
    workspace.grant("other chat", str(once), once=True)  # one use
    assert workspace.is_permitted(str(once), "other chat")
    assert not workspace.is_permitted(str(once), "other chat")
    workspace.forget_grants("chat")
    assert not workspace.is_permitted(str(notes), "chat")


def test_suggestions_are_capped_and_skip_dependency_folders(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(10):
        (root / f"report{i}.txt").write_text("")
    found = suggest(str(root / "reprot.txt"), [str(root)])
    assert len(found) == 5
    assert all(os.path.basename(p).startswith("report") for p in found)
    # Inside a dependency folder the walk never goes, a typo still finds its sibling.
    package = root / "node_modules" / "pkg"
    package.mkdir(parents=True)
    (package / "index.js").write_text("")
    assert suggest(str(package / "indx.js"), [str(root)]) == [str(package / "index.js")]
    # Folders are no suggestions, even when they are the nearest names.
    (package / "util_py").mkdir()
    (package / "util-py").mkdir()
    (package / "utils.py").write_text("")
    assert suggest(str(package / "util.py"), [str(root)]) == [str(package / "utils.py")]


def test_the_walk_for_suggestions_stops_at_its_budget(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("")
    for i in range(5):
        (root / "a" / f"f{i}").write_text("")
    # The budget counts every entry looked at, folders too (the walk's cost).
    assert len(list(files_beneath([str(root)], 4, skip=guesses._SKIP_DIRS))) == 2
    walked = list(files_beneath([str(root)], 100, skip=guesses._SKIP_DIRS))
    assert sorted(walked) == [str(root / "a" / f"f{i}") for i in range(5)]  # not .git


def test_a_root_swapped_for_a_link_out_is_refused_never_followed(tmp_path: Path) -> None:
    # The roots are opened when they are set and opened again when the folder at the
    # root's path is another one (roots.py), but never through a symlink: renaming one
    # and planting a link to another folder under its name leads nowhere.
    from readkeeper.files.fileio import open_path

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("SECRET\n")
    workspace = Workspace()
    workspace.set_roots([str(root)])
    root.rename(tmp_path / "ws-renamed")
    root.symlink_to(outside, target_is_directory=True)
    assert workspace.direct("a.txt") is None
    assert workspace.locate(str(root / "a.txt")) is None
    with pytest.raises(ReadkeeperError) as caught, open_path(workspace, "a.txt"):
        pass
    assert caught.value.kind == "outside_workspace"
    assert "replaced by a symbolic link" in caught.value.message


def test_a_root_deleted_and_created_again_is_opened_again(tmp_path: Path) -> None:
    from readkeeper.files.fileio import open_path, read_at_most

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("old\n")
    workspace = Workspace()
    workspace.set_roots([str(root)])
    before = time.time_ns()
    for replace in (shutil.rmtree, lambda r: r.rename(tmp_path / "ws.old")):
        replace(root)
        with pytest.raises(ReadkeeperError) as caught, open_path(workspace, "a.txt"):
            pass
        assert caught.value.data["root_missing"] is True
        root.mkdir()
        (root / "a.txt").write_text("new\n")
        with open_path(workspace, "a.txt") as opened:
            assert read_at_most(opened.fd, 100) == b"new\n"
        assert workspace.replaced_since(str(root / "a.txt"), before) == str(root)
        assert workspace.replaced_since(str(root / "a.txt"), time.time_ns()) is None


def test_a_root_that_cannot_be_opened_permits_no_location(tmp_path: Path) -> None:
    workspace = Workspace()
    workspace.set_roots([str(tmp_path / "not-there")])
    assert workspace.locate(str(tmp_path / "not-there" / "a.txt")) is None
    assert workspace.direct("a.txt") is None  # left to the long way, which says why
    with pytest.raises(ReadkeeperError) as caught:
        workspace.resolve("a.txt")
    assert caught.value.kind == "not_found"


def test_an_empty_path_or_one_with_nul_is_a_bad_parameter(tmp_path: Path) -> None:
    workspace = Workspace()
    workspace.set_roots([str(tmp_path)])
    from readkeeper.files.fileio import open_path

    for bad in ("", "a\x00b.txt"):
        with pytest.raises(ReadkeeperError) as caught:
            workspace.resolve(bad)
        assert caught.value.kind == "bad_params", bad
        assert caught.value.data["field"] == "file_path"
        # The direct way (a path as written, inside a root) leaves them to that check.
        assert workspace.direct(bad) is None
        with pytest.raises(ReadkeeperError) as caught, open_path(workspace, bad):
            pass
        assert caught.value.kind == "bad_params", bad


def test_did_you_mean_names_the_best_suggestion(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(3):
        (root / f"report{i}.txt").write_text("")
    workspace = Workspace()
    workspace.set_roots([str(root)])
    with pytest.raises(ReadkeeperError) as caught:
        workspace.resolve("reprot1.txt")
    suggestions = caught.value.data["suggestions"]
    assert suggestions[0] == str(root / "report1.txt")
    assert len(suggestions) > 1
    assert caught.value.message.endswith(f" Did you mean {root / 'report1.txt'}?")


def test_a_missing_folder_on_the_way_still_suggests_the_nearest_folders_names(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "config.toml").write_text("")
    (root / "other").mkdir()
    (root / "other" / "confg.toml").write_text("")  # the very name, elsewhere
    found = suggest(str(root / "src" / "missing" / "confg.toml"), [str(root)])
    # The very name elsewhere first (test_suggestions.py), then the nearest folder's.
    assert found == [str(root / "other" / "confg.toml"), str(root / "src" / "config.toml")]


def test_a_path_outside_every_root_is_matched_against_the_first_root(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    (first / "report.txt").write_text("")
    (second / "zzz.bin").write_text("")
    found = suggest(str(tmp_path / "elsewhere" / "reprot.txt"), [str(first), str(second)])
    assert found == [str(first / "report.txt")]


def test_suggestions_are_given_up_not_raised_when_a_folder_cannot_be_listed(
    tmp_path: Path,
) -> None:
    # Out of descriptors (a server holding many files), listing the folder fails: the
    # not-found answer then has no suggestions, rather than becoming a crash.

    root = tmp_path / "ws"
    root.mkdir()
    (root / "config.toml").write_text("")
    script = (
        "import os, sys\n"
        "import rapidfuzz.fuzz, rapidfuzz.process, rapidfuzz.utils\n"
        "from readkeeper.files.paths import suggest\n"
        "held = []\n"
        "try:\n"
        "    while True:\n"
        "        held.append(os.open(os.devnull, os.O_RDONLY))\n"
        "except OSError:\n"
        "    pass\n"
        "found = suggest(os.path.join(sys.argv[1], 'confg.toml'), [sys.argv[1]])\n"
        "for fd in held:\n"
        "    os.close(fd)\n"
        "print(found)\n"
    )
    done = run_python(script, str(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_missing_folder_on_the_way_lists_the_nearest_existing_folder(tmp_path: Path) -> None:
    # Five paths elsewhere are closer to the whole path asked for than src/config.toml;
    # only listing src (the nearest folder that exists) finds the name beside it.
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "config.toml").write_text("")
    (root / "srx" / "missing").mkdir(parents=True)
    for i in range(1, 6):
        (root / "srx" / "missing" / f"confg{i}.toml").write_text("")
    found = suggest(str(root / "src" / "missing" / "confg.toml"), [str(root)])
    assert found[0] == str(root / "src" / "config.toml")


def test_the_very_name_elsewhere_is_suggested_nearest_first(tmp_path: Path) -> None:
    # Nearest: sharing the most folders with the path asked for, even when longer.
    root = tmp_path / "ws"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "zz").mkdir()
    (root / "zz" / "x.txt").write_text("")
    (root / "a" / "b" / "c" / "x.txt").write_text("")
    found = suggest(str(root / "a" / "b" / "missing" / "x.txt"), [str(root)])
    assert found[:2] == [str(root / "a" / "b" / "c" / "x.txt"), str(root / "zz" / "x.txt")]
    # Only the leading folders count: names shared further down the path do not.
    for near in ("a/q/r", "b/x/y"):
        (root / near).mkdir(parents=True)
        (root / near / "name.txt").write_text("")
    found = suggest(str(root / "a" / "x" / "y" / "name.txt"), [str(root)])
    assert found[:2] == [str(root / "a/q/r/name.txt"), str(root / "b/x/y/name.txt")]
    # A file taken for a folder of the same name: the file itself is the guess.
    assert suggest(str(root / "zz" / "x.txt" / "x.txt"), [str(root)])[0] == str(root / "zz/x.txt")


def test_the_home_folder_is_a_root_only_when_a_person_chose_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "me"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    real_home = os.path.realpath(home)
    assert paths.refused_root(real_home, may_be_home=True) is None
    assert paths.refused_root(real_home, may_be_home=False) == "it is your home folder"
    above = os.path.dirname(real_home)
    assert paths.refused_root(above, may_be_home=True) == "it contains your home folder"
    assert paths.refused_root(os.sep, may_be_home=True) == "it is the filesystem root"
    assert paths.refused_root(os.path.join(real_home, "project"), may_be_home=False) is None


def test_a_file_in_a_root_whose_name_extends_another_roots_is_that_roots_file(
    tmp_path: Path,
) -> None:
    # "ws" and "ws2": a path in ws2 starts like one in ws, and is still only ws2's.
    first, second = tmp_path / "ws", tmp_path / "ws2"
    for root, text in ((first, "first\n"), (second, "second\n")):
        root.mkdir()
        (root / "b.txt").write_text(text)
    core = Readkeeper(roots=[str(first.resolve()), str(second.resolve())])
    file = core.read(ReadParams(file_path=str(second / "b.txt"))).file
    assert "second" in file.content
    assert file.file_path == str((second / "b.txt").resolve())


def test_a_relative_path_without_roots_is_outside_named_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("here\n")
    with pytest.raises(ReadkeeperError) as caught:
        Readkeeper(roots=[]).read(ReadParams(file_path="a.txt"))
    assert caught.value.kind == "outside_workspace"
    assert str(tmp_path.resolve() / "a.txt") in caught.value.message


def test_a_link_out_is_refused_naming_the_path_given_and_the_links_own_text(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "real").mkdir(parents=True)
    (outside / "real" / "secret.txt").write_text("no\n")
    (outside / "via").symlink_to(outside / "real")  # where the link's text leads
    link = workspace / "link.txt"
    link.symlink_to(outside / "via" / "secret.txt")
    with pytest.raises(ReadkeeperError) as caught:
        Readkeeper(roots=[str(workspace)]).read(ReadParams(file_path=str(link)))
    refusal = caught.value
    assert refusal.kind == "outside_workspace"
    assert refusal.data["file_path"] == str(link)
    assert refusal.data["link_target"] == str(outside / "via" / "secret.txt")
    assert f"{link} is a symbolic link to {outside / 'via' / 'secret.txt'}" in refusal.message
    # Never where it really leads: nothing outside was resolved to answer.
    assert "real_path" not in refusal.data
    assert str(outside / "real") not in str(refusal.to_data())
