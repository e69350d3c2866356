"""A path of a thousand folders costs a call a walk or a few, never a walk per level
(outside round 44: a read of `x/` * 2,000 held the server 43-56 s, a grep beneath a
real chain of 1,000 folders 50 s, 2,000,000 lstats each: the nearest folder that is
there, the ignore files and the memory files of every folder above were each found by
walking the whole path again).

The work is counted in lstats, not timed: before, each of these was quadratic in the
depth."""

from __future__ import annotations

import contextlib
import os
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from deep_chain import make_chain

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files import beneath, reach
from readkeeper.files.guesses import nearest_folder
from readkeeper.files.reach import Reach, walk

DEPTH = 400
CHAINS = 20  # chains side by side, DEPTH deep each


def chain(root: Path, depth: int) -> Path:
    """`depth` folders `x` one in another beneath `root`, `0.txt` ("alpha") in the
    deepest, which is returned."""
    return make_chain(root, depth, "x", "0.txt", "alpha\n")


@pytest.fixture
def lstats(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counted = [0]
    real = os.lstat

    def counting(*args: Any, **kwargs: Any) -> os.stat_result:
        counted[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(os, "lstat", counting)
    return counted


def _call(core: Readkeeper, method: str, params: dict[str, Any]) -> Any:
    try:
        return calls.call(core, method, params)
    except ReadkeeperError as exc:
        return exc


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("read", {"file_path": "x/" * DEPTH + "0.txt"}),
        ("grep", {"pattern": "alpha", "path": "x/" * DEPTH + "0.txt"}),
        ("grep", {"pattern": "alpha", "path": "x/" * DEPTH + "missing"}),
        ("attachments", {"mentions": ["x/" * DEPTH + "0.txt"]}),
        ("attachments", {"mentions": ["x/" * DEPTH + "y/" * DEPTH + "0.txt"]}),
        ("read", {"file_path": "x/" * DEPTH + "y/" * DEPTH + "0.txt"}),
        ("stat", {"path": "x/" * DEPTH + "y/" * DEPTH}),
    ],
    ids=["read", "grep", "grep-missing", "mention", "mention-missing", "read-missing", "stat"],
)
def test_a_deep_path_costs_a_few_walks_of_it(
    workspace: Path, lstats: list[int], method: str, params: dict[str, Any]
) -> None:
    chain(workspace, DEPTH)
    core = Readkeeper(roots=[str(workspace)])
    try:
        lstats[0] = 0
        answer = _call(core, method, params)
        assert not isinstance(answer, ReadkeeperError) or answer.kind == "not_found", answer
        # A walk of the path is an lstat a level; before, a call made a walk a level:
        # levels * levels / 2 and more.
        named = params.get("file_path") or params.get("path") or params["mentions"][0]
        levels = named.count("/")
        assert lstats[0] < 40 * levels, (method, lstats[0])
    finally:
        core.close()


def _nearest_by_every_level(path: str, reaches: list[Reach]) -> str | None:
    """The nearest folder above `path` that is there, one walk a level (as before)."""
    parent = os.path.dirname(path)
    while any(parent == r.real or parent.startswith(r.real + os.sep) for r in reaches):
        real = walk(parent, reaches)
        if isinstance(real, str) and os.path.isdir(real):
            return parent
        if parent == os.path.dirname(parent):
            return None
        parent = os.path.dirname(parent)
    return None


@pytest.mark.parametrize("there", [0, 1, 5, 11])
@pytest.mark.parametrize("blocker", ["missing", "file", "link-out", "link-in"])
def test_the_nearest_folder_is_the_one_a_walk_a_level_finds(
    tmp_path: Path, there: int, blocker: str
) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (outside / "x" / "x").mkdir(parents=True)
    root.mkdir()
    deepest = chain(root, there) if there else root
    if blocker == "file":
        (deepest / "x").write_text("")
    elif blocker == "link-out":
        (deepest / "x").symlink_to(outside)
    elif blocker == "link-in":
        (root / "elsewhere" / "x").mkdir(parents=True)
        (deepest / "x").symlink_to(root / "elsewhere")
    path = str(root / ("x/" * 16 + "file.txt"))
    reaches = [Reach(str(root), str(root))]
    assert nearest_folder(path, reaches) == _nearest_by_every_level(path, reaches)


def _links_tree(tmp_path: Path) -> tuple[list[str], list[Reach]]:
    """Every path of three names in a tree of plain folders, missing ones, a file, a
    link within, out, to `/`, `..` in a link, through a missing folder, a loop."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "d").mkdir()
    outside.mkdir()
    (root / "a" / "in").symlink_to(root / "d")
    (root / "a" / "out").symlink_to(outside)
    (root / "a" / "top").symlink_to("/")
    (root / "a" / "b" / "up").symlink_to("../../d")
    (root / "a" / "b" / "gone").symlink_to("missing/../c")
    (root / "a" / "loop").symlink_to("loop")
    (root / "a" / "b" / "c" / "f.txt").write_text("")
    names = ["a", "b", "c", "in", "out", "top", "up", "gone", "loop", "missing", "f.txt", ".."]
    paths = [
        os.path.normpath(os.path.join(str(root), *parts))
        for parts in ([x, y, z] for x in names for y in names for z in names)
    ]
    return paths, [Reach(str(root), str(root))]


def test_walks_within_remembering_find_what_walks_without_it(tmp_path: Path) -> None:
    """The same real path or refusal for every path, the folders met on the way kept
    or not."""
    paths, reaches = _links_tree(tmp_path)
    alone = [walk(path, reaches) for path in paths]
    with reach.remembering():
        together = [walk(path, reaches) for path in paths]
        last_kept = [walk(path, reaches, follow_last=False) for path in paths]
    assert together == alone
    assert last_kept == [walk(path, reaches, follow_last=False) for path in paths]
    assert reach._MEMO.get() is None  # forgotten at the block's end


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "portable"])
@pytest.mark.parametrize("remembered", [False, True])
def test_walks_through_descriptors_find_what_walks_by_path_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remembered: bool, openat2: bool
) -> None:
    """A deep path with no link on its way is its own real path when the system finds
    none (one `openat2`, found beside round 47), and a walk looks in a deep folder
    through its descriptor (`Looker`, round 46): the same real path or refusal as by
    whole paths for every path, the deep ways taken for every path here (`_DEEP` 0)."""
    paths, reaches = _links_tree(tmp_path)

    def walks() -> list[Any]:
        with reach.remembering() if remembered else contextlib.nullcontext():
            return [(walk(p, reaches), walk(p, reaches, follow_last=False)) for p in paths]

    monkeypatch.setattr(reach, "_DEEP", 10**6)
    by_path = walks()
    monkeypatch.setattr(reach, "_DEEP", 0)
    beneath.force_portable_walk(not openat2)  # without it, the system's look cannot say
    try:
        assert walks() == by_path
    finally:
        beneath.force_portable_walk(False)
    # And the realpath that walks so for a deep path answers as os.path.realpath.
    assert [reach.realpath(p) for p in paths] == [os.path.realpath(p) for p in paths]


def test_a_list_beneath_a_deep_chain_looks_in_each_folder_s_rules_once(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 44: each folder on the way was matched against the rules of every folder
    above it, looked up one by one (a list 1,000 deep, 1.5 s); only the folders holding
    rules are looked in now, and which do is found once a folder."""
    from readkeeper.files.rgignore import RipgrepRules

    chain(workspace, DEPTH)
    (workspace / ".gitignore").write_text("*.log\n")
    asked = [0]
    real = RipgrepRules._kind_spec

    def counting(self: RipgrepRules, *args: Any) -> Any:
        asked[0] += 1
        return real(self, *args)

    monkeypatch.setattr(RipgrepRules, "_kind_spec", counting)
    core = Readkeeper(roots=[str(workspace)])
    try:
        listed = calls.call(core, "list", {"path": "x/" * (DEPTH - 1) + "x"})
    finally:
        core.close()
    assert [entry["name"] for entry in listed["entries"]] == ["0.txt"]
    assert asked[0] < 20 * DEPTH, asked[0]  # before: DEPTH * DEPTH and more


@pytest.mark.parametrize(
    ("method", "field"),
    [("forget", "paths"), ("readMany", "file_paths"), ("attachments", "mentions")],
)
def test_many_paths_beneath_one_deep_chain_walk_it_once(
    workspace: Path, lstats: list[int], method: str, field: str
) -> None:
    """Round 45: each entry of a batch walked the chain again (forget of 100 missing
    paths beneath 1,000 folders, 8.7 s, every other call held; readMany of 20, 9.4 s;
    attachments of 100 mentions, 11.7 s and 546 MB). A call's walks share the folders
    they passed, on every thread of the call."""
    chain(workspace, DEPTH)
    core = Readkeeper(roots=[str(workspace)])
    try:
        lstats[0] = 0
        names = ["x/" * DEPTH + f"m{index}.txt" for index in range(20)]
        calls.call(core, method, {field: names})
        # Before: a walk an entry, and more (forget 20 walks, attachments 179,000 lstats).
        # Attachments' mentions are read on threads that start together, each of which
        # may walk the chain before another has told the memo: a walk a thread at most.
        bound = 100 if method == "attachments" else 40
        assert lstats[0] < bound * DEPTH, lstats[0]
    finally:
        core.close()


@pytest.fixture
def names_looked_up(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The names of every path the call handed the system to look up (stat, lstat,
    open, openat2), summed: a path costs the system a lookup a name."""
    from readkeeper.files import beneath

    counted = [0]

    def counting(real: Any, at: int) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            path = args[at]
            if isinstance(path, (str, bytes)):
                counted[0] += os.fsencode(path).count(b"/") + 1
            return real(*args, **kwargs)

        return call

    for name in ("stat", "lstat", "open"):
        monkeypatch.setattr(os, name, counting(getattr(os, name), 0))
    monkeypatch.setattr(beneath, "_openat2", counting(beneath._openat2, 1))
    return counted


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("grep", {"pattern": "alpha", "path": "x/" * DEPTH + "0.txt"}),
        ("grep", {"pattern": "alpha", "path": "x/" * DEPTH}),
        ("glob", {"pattern": "*.txt", "path": "x/" * DEPTH}),
        ("list", {"path": "x/" * DEPTH}),
        ("attachments", {"mentions": ["x/" * DEPTH + "0.txt"]}),
        ("read", {"file_path": "x/" * DEPTH + "0.txt"}),
        ("read", {"file_path": "x/" * DEPTH + "y/" * DEPTH + "0.txt"}),
    ],
    ids=["grep-file", "grep-folder", "glob", "list", "mention", "read", "read-missing"],
)
def test_each_folder_above_a_deep_path_is_opened_once_a_judgement(
    workspace: Path, names_looked_up: list[int], method: str, params: dict[str, Any]
) -> None:
    """Round 46: the files of each folder above a deep path (ignore files, `.git`, memory
    files) were each looked up by their whole path: beneath 2,030 folders a grep of the
    deepest took 5.1 s, a glob 5.6 s, a mention 3.0 s. Each judgement that looks above
    (the search's stalls, its listing's rules, the memory files) opens each folder once
    now and looks at its names in it, and a walk looks in a deep folder through its
    descriptor."""
    chain(workspace, DEPTH)
    core = Readkeeper(roots=[str(workspace)])
    try:
        names_looked_up[0] = 0
        answer = _call(core, method, params)
        assert not isinstance(answer, ReadkeeperError) or answer.kind == "not_found", answer
        # A path looked up whole at every level costs DEPTH * DEPTH / 2 names. Before:
        # 6 (list) to 19 (grep, glob, mention) such paths a level, a read 1 (its walk);
        # now 2 to 3.2 (a judgement's opening of each folder), a read 0.005 to 0.32.
        a_level = names_looked_up[0] / (DEPTH * DEPTH / 2)
        assert a_level < (1 if method == "read" else 5), a_level
    finally:
        core.close()


def test_mentions_in_one_deep_folder_hold_the_folders_above_once(workspace: Path) -> None:
    """Round 46: the memory files above 100 mentions in a folder 1,000 deep were found by
    listing every folder above each mention before the duplicates were dropped: 400 MB a
    call, six at once 2.7 GB. The folders above are listed once, each mention's climb
    ending at a folder an earlier one passed."""
    from readkeeper.attachments import memory

    deepest = chain(workspace, DEPTH)
    core = Readkeeper(roots=[str(workspace)])
    try:
        mentions = [str(deepest / f"m{n}.txt") for n in range(100)]
        tracemalloc.start()
        try:
            memory.above(mentions, core.workspace)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        # Before: DEPTH folders a mention (21 MB here); now DEPTH in all.
        assert peak < 4 * 1024 * 1024, peak
    finally:
        core.close()


def test_an_attached_agent_s_paths_share_the_walk_and_a_list_over_the_caps_is_not_walked(
    workspace: Path, lstats: list[int]
) -> None:
    """Round 46: the attach door resolved each path of a request by a walk of its own,
    before the core's caps: a forget of 1,000 paths 2,000 deep took 124 s there (0.5 s
    on a core's door), one of 10,001 was never answered. Its walks share the folders
    passed, and a list the core refuses whole is not walked."""
    from readkeeper.attach.scope import Scope

    chain(workspace, DEPTH)
    core = Readkeeper(roots=[str(workspace)])
    try:
        scope = Scope.declared([str(workspace)], core.workspace, core.outputs.existing)
        paths = ["x/" * DEPTH + f"m{index}.txt" for index in range(200)]
        lstats[0] = 0
        scope.params("forget", {"paths": paths})
        assert lstats[0] < 4 * DEPTH, lstats[0]  # before: a walk a path, 80,000
        lstats[0] = 0
        scope.params("forget", {"paths": paths * 50 + ["one more"]})  # 10,001 entries
        scope.params("readMany", {"file_paths": [f"{p}{n}" for p in paths[:2] for n in range(501)]})
        assert lstats[0] == 0
    finally:
        core.close()


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many names a walk looked at through descriptors (`reach.Looker.mode`)."""
    counted = [0]
    real = reach.Looker.mode

    def counting(self: reach.Looker, folder: str, name: str) -> int:
        counted[0] += 1
        return real(self, folder, name)

    monkeypatch.setattr(reach.Looker, "mode", counting)
    return counted


def test_an_editor_s_document_opened_deep_walks_its_path_once(
    workspace: Path, looks: list[int]
) -> None:
    """Round 46 R4: a `didOpen` of a document 2,000 folders deep (missing on disk) held
    the editor's next request 5 s: its look at the disk walked the path some thirty
    times, outside any call's memo. It shares one now, as a call does."""
    from lsprotocol import types
    from pygls.workspace import Workspace

    from readkeeper.lsp import documents

    chain(workspace, DEPTH)
    path = workspace / ("x/" * DEPTH + "y/" * 20 + "new.txt")
    core = Readkeeper(roots=[str(workspace)])
    try:
        editor = Workspace(workspace.as_uri(), types.TextDocumentSyncKind.Incremental)
        item = types.TextDocumentItem(path.as_uri(), "plaintext", 1, "x\n")
        editor.put_text_document(item)
        server = SimpleNamespace(workspace=editor, core=core, open_documents={})
        documents.on_open(server, types.DidOpenTextDocumentParams(item))  # type: ignore[arg-type]
        assert str(path) in server.open_documents
        assert looks[0] < 4 * DEPTH, looks[0]  # before: about thirty walks of it
    finally:
        core.close()


def test_a_hello_of_nested_deep_roots_walks_each_folder_about_once(
    workspace: Path, looks: list[int]
) -> None:
    """Round 46: a hello naming 64 roots nested 31 folders apart down a chain 2,000 deep
    took 21 s: each root was walked whole (the memo looked 4 levels up), and resolved by
    os.path.realpath (a whole path looked up a name) twice more. They share one memo
    now, found however far up, and a deep path's realpath is a walk through
    descriptors."""
    from readkeeper.attach.scope import Scope

    chain(workspace, DEPTH)
    roots = [str(workspace) + "/x" * depth for depth in range(20, DEPTH + 1, 20)]
    core = Readkeeper(roots=[str(workspace)])
    try:
        scope = Scope.declared(roots, core.workspace, core.outputs.existing)
        assert scope.roots == roots
        # Before: each of the 20 roots walked whole, three times (30,000 looks here).
        assert looks[0] < 8 * DEPTH, looks[0]
    finally:
        core.close()


def test_the_watch_of_a_deep_chain_judges_each_folder_once(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found beside round 47: setting up the watch of a chain 2,000 folders deep took
    5.5 s of the server's CPU (1.0 s at 1,000), where 2,000 folders side by side take
    0.8 s. Each folder's ignore rules were gathered from every folder above it, and its
    path matched whole against `watch_exclude`'s patterns (their `(.+/)?` tried at each
    "/"). A folder's rules are now its parent's and its own, and a pattern that matches
    by a name is matched against the folder's own name."""
    from pathspec import GitIgnoreSpec

    from helpers import wait_until
    from readkeeper.files.ignore import IgnoreRules
    from readkeeper.watch import hears

    chain(workspace, DEPTH)
    matched, looked = [0], [0]
    match_file, spec = GitIgnoreSpec.match_file, IgnoreRules._spec

    def matching(self: GitIgnoreSpec, path: str, *args: Any) -> bool:
        matched[0] += len(path)
        return match_file(self, path, *args)

    def looking(self: IgnoreRules, folder: str) -> Any:
        looked[0] += 1
        return spec(self, folder)

    monkeypatch.setattr(GitIgnoreSpec, "match_file", matching)
    monkeypatch.setattr(IgnoreRules, "_spec", looking)
    monkeypatch.setattr(hears, "MAX_DEPTH", 10 * DEPTH)  # every folder of the chain watched
    core = Readkeeper(roots=[str(workspace)], client_settings={"watcher": "inotify"})
    core.start_watching()
    try:
        wait_until(lambda: core.watcher_status()["state"] == "watching", "watching")
        # Before: 80,200 folders' rules looked up and 320,000 characters matched (DEPTH
        # * DEPTH / 2, and twice that: a path is two characters a level); now 400 and
        # 1,598.
        assert looked[0] < 3 * DEPTH, looked[0]
        assert matched[0] < 10 * DEPTH, matched[0]
    finally:
        core.close()


@pytest.mark.parametrize("through", ["", "L/"], ids=["plain", "through-a-link"])
def test_paths_in_many_deep_chains_cost_a_look_each_and_hold_a_bounded_memo(
    workspace: Path, lstats: list[int], through: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found beside round 47: paths in distinct chains share no folder, so each was
    walked a step a name and each folder kept for the call: a forget of 100 paths in
    100 chains 2,000 deep took 2.0 s and 435 MB (through a link at the bottom, `L ->
    .`, 8.0 s), 1,000 such paths would take 4 GB. The system finds how far a deep path
    goes with no symlink on its way in a look or a few (halving to the first link); a
    walk steps a name at a time only at a link; a call keeps at most `_MEMO_MOST`
    folders it passed."""
    monkeypatch.setattr(reach, "_MEMO_MOST", 3 * DEPTH)
    for n in range(CHAINS):
        (workspace / f"c{n}").mkdir()
        (chain(workspace / f"c{n}", DEPTH) / "L").symlink_to(".")
    paths = [f"c{n}/" + "x/" * DEPTH + through + "m.txt" for n in range(CHAINS)]
    reaches = [Reach(str(workspace), str(workspace))]
    for path in paths[:2]:
        absolute = str(workspace / path)
        assert walk(absolute, reaches) == os.path.realpath(absolute)
    core = Readkeeper(roots=[str(workspace)])
    opened = [0]
    real_open = os.open

    def counting(*args: Any, **kwargs: Any) -> int:
        opened[0] += 1
        return real_open(*args, **kwargs)

    try:
        calls.call(core, "forget", {"paths": paths[:1]})  # what a first call sets up
        lstats[0] = 0
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "open", counting)
            answer = calls.call(core, "forget", {"paths": paths})
        assert answer["forgotten"] == 0, answer
        # Before: a step a folder (8,000 opens and as many stats); now a few calls a
        # path, halving to the link a dozen more.
        assert opened[0] + lstats[0] < 40 * CHAINS, (opened[0], lstats[0])
    finally:
        core.close()
    with reach.remembering():
        for path in paths:
            walk(str(workspace / path), reaches)
        kept = reach._memo(reaches)
        assert kept is not None
        assert len(kept) <= 3 * DEPTH  # before: every folder of each chain, 8,000


def test_memory_files_are_looked_for_in_at_most_a_deep_path_s_folders_a_call(
    workspace: Path,
) -> None:
    """Found beside round 47: the memory files above mentions in distinct deep chains
    were looked for in every folder above each (a hundred mentions 2,000 deep: 200,000
    folders, 880 MB, 4 s). A call looks in at most `MAX_FOLDERS` of them, the nearest
    first for each mention in turn, and says where it stopped."""
    from readkeeper.attachments import memory

    for n in range(CHAINS):
        (workspace / f"c{n}").mkdir()
        deepest = chain(workspace / f"c{n}", DEPTH)
        (deepest / "AGENTS.md").write_text(f"chain {n}\n")
    mentions = [str(workspace / f"c{n}" / ("x/" * DEPTH + "0.txt")) for n in range(CHAINS)]
    core = Readkeeper(roots=[str(workspace)])
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(memory, "MAX_FOLDERS", 3 * (DEPTH + 1))  # each chain's and c{n}
            found = memory.above(mentions, core.workspace)
    finally:
        core.close()
    read = [f.path for f in found if not isinstance(f, memory.Dropped)]
    assert read == [str(workspace / f"c{n}" / ("x/" * DEPTH + "AGENTS.md")) for n in range(3)]
    [passed] = [f for f in found if isinstance(f, memory.Dropped)]
    assert passed.source == mentions[3]
    assert "at most 1,203 folders above its mentions" in passed.reason
    assert passed.reason.endswith("Mention fewer files at a time")


def test_folders_deeper_than_the_watch_goes_are_checked_when_changes_are_asked(
    workspace: Path,
) -> None:
    """Found beside round 47: every folder of a chain was watched, each opened by its
    whole path and held by it: 40 chains 2,000 deep took 45 s of the watch's set-up and
    363 MB. Folders more than `hears.MAX_DEPTH` beneath the root get no watch, as those
    the ignore rules skip: a file read there is looked at when changes are asked."""
    from helpers import wait_until
    from readkeeper.watch import hears

    deepest = chain(workspace, DEPTH)
    core = Readkeeper(roots=[str(workspace)], client_settings={"watcher": "inotify"})
    core.start_watching()
    try:
        wait_until(lambda: core.watcher_status()["state"] == "watching", "watching")
        watcher = core.watcher
        assert watcher is not None
        assert len(watcher.watched_under(os.fsencode(workspace))) == hears.MAX_DEPTH
        path = "x/" * DEPTH + "0.txt"
        calls.call(core, "read", {"file_path": path, "session": "s"})
        (deepest / "0.txt").write_text("alpha\nbeta\n")
        [change] = calls.call(core, "changes", {"session": "s"})["changes"]
        assert change["file_path"] == str(deepest / "0.txt")
        assert "+beta" in change["diff"]
    finally:
        core.close()


def test_an_agent_looks_for_the_editor_of_a_deep_root_in_a_walk_of_it(
    workspace: Path, lstats: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 47: `readkeeper mcp --root` a folder 1,000 deep (not --standalone) took 11 s
    to its first answer, 2,000 deep 87-123 s: the editor serving it was looked for in
    each folder above it, each folder's key the hash of its realpath, which looked at
    every name above it again. A real path's folders are their own real paths."""
    from readkeeper.attach import discovery

    deepest = chain(workspace, DEPTH)
    (tmp_path / "run" / "readkeeper").mkdir(parents=True)
    (tmp_path / "run" / "readkeeper").chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    lstats[0] = 0
    assert discovery.find(str(deepest)) is None
    assert lstats[0] < 2 * DEPTH, lstats[0]  # before: DEPTH * DEPTH / 2
