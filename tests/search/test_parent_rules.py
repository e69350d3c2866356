"""A subfolder searched keeps to the ignore files above it as git does: ripgrep run in a
subfolder applies a parent's patterns with a slash unlike git (ripgrep issues 1757,
2770, 2778), so what those files hide is dropped from its output (search/above.py).
Each case is judged against `git check-ignore`, end to end over MCP and in the core."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcp_helpers import call, mcp_env, private_runtime_dir, stdio_client
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.search.above import Above

ROOT_IGNORE = (
    "config/secrets/*.pem\nsub/secret.env\n/sub/deep/\nsub/**/*.key\nign/\na/b/*.pem\n"
    "*.log\n!sub/keep/x.log\n"
)
FILES = [
    "config/app.yml", "config/secrets/key.pem", "config/secrets/ok.txt", "sub/secret.env",
    "sub/ok.txt", "sub/deep/d.txt", "sub/keep/k.key", "sub/keep/x.log", "sub/y.log",
    "ign/i.txt", "a/b/c.pem", "a/b/ok.txt",
]  # fmt: skip
# Searched by name, an ignored folder shows its files (as ripgrep run in it does).
FOLDERS = ["config", "config/secrets", "sub", "sub/keep", "a", "a/b"]


def _tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text(ROOT_IGNORE)
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("PRIVATE needle\n")
    (root / "a/b/.gitignore").write_text("!c.pem\n")  # a nearer negation: git shows it


def _git_shown(root: Path, folder: str) -> set[str]:
    """The files beneath `folder` that `git check-ignore` does not ignore."""
    beneath = [name for name in FILES if name.startswith(folder + "/")]
    ran = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--stdin"],
        input="\n".join(beneath),
        capture_output=True,
        text=True,
    )
    return set(beneath) - set(ran.stdout.split())


def test_the_cases_git_decides(workspace: Path) -> None:
    _tree(workspace)
    assert _git_shown(workspace, "config") == {"config/app.yml", "config/secrets/ok.txt"}
    assert _git_shown(workspace, "a") == {"a/b/ok.txt", "a/b/c.pem"}


@pytest.mark.parametrize("folder", FOLDERS)
def test_above_hides_what_git_ignores(workspace: Path, folder: str) -> None:
    _tree(workspace)
    above = Above.of(str(workspace), str(workspace / folder))
    assert above is not None  # every one has a slashed pattern above it
    beneath = [name for name in FILES if name.startswith(folder + "/")]
    shown = {name for name in beneath if not above.hides(name[len(folder) + 1 :])}
    assert shown == _git_shown(workspace, folder)
    assert [above.hides_bytes(n[len(folder) + 1 :].encode()) for n in beneath] == [
        above.hides(n[len(folder) + 1 :]) for n in beneath
    ]


def test_no_filter_where_ripgrep_agrees(workspace: Path) -> None:
    """The root itself, a folder with only plain names above, and an ignored folder
    searched by name (its files are shown, as ripgrep shows them) need none."""
    _tree(workspace)
    assert Above.of(str(workspace), str(workspace)) is None
    assert Above.of(str(workspace), str(workspace / "ign")) is None
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    assert Above.of(str(workspace), str(workspace / "sub")) is None


async def test_grep_and_glob_of_a_subfolder_show_only_what_git_shows(workspace: Path) -> None:
    _tree(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        for folder in [*FOLDERS, "ign"]:
            expected = _git_shown(workspace, folder) if folder != "ign" else {"ign/i.txt"}
            wanted = {str(workspace / name) for name in expected}
            for _ in range(3):  # the listing kept by the first answers the same
                globbed = await call(client, "glob", pattern="**/*", path=folder)
                assert set(globbed["paths"]) - {str(workspace / "a/b/.gitignore")} == wanted
                assert globbed["partial"] is False
            named = await call(client, "glob", pattern="*.pem", path=folder)
            assert set(named["paths"]) == {p for p in wanted if p.endswith(".pem")}, folder
            matched = await call(client, "grep", pattern="PRIVATE", path=folder)
            assert {m["file_path"] for m in matched["matches"]} == wanted, folder
            assert matched["num_matches"] == len(wanted)
            files = await call(client, "grep", pattern="PRIVATE", path=folder, output="files")
            assert set(files["files"]) == wanted, folder
            counts = await call(client, "grep", pattern="needle", path=folder, output="counts")
            assert {c["file_path"]: c["count"] for c in counts["counts"]} == dict.fromkeys(
                wanted, 1
            ), folder
        # list reads the folder itself with the same rules (files/ignore.py): a sibling.
        listed = await call(client, "list", path="config", depth=3)
        assert {e["name"] for e in listed["entries"]} == {"app.yml", "secrets", "secrets/ok.txt"}
        # A file named by path is searched as ripgrep searches it (as read reads it).
        named_file = await call(client, "grep", pattern="PRIVATE", path="config/secrets/key.pem")
        assert [m["file_path"] for m in named_file["matches"]] == [
            str(workspace / "config/secrets/key.pem")
        ]


async def test_a_parent_pattern_the_rules_skip_is_still_ripgrep_s(workspace: Path) -> None:
    """A pattern above that files/ignore.py skips (too costly to match, globcost.py) is
    one ripgrep still applies there: the parents' files are then left to it as well."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text("config/secrets/*.pem\n*x*y*z\n")
    for name in ["config/app.yml", "config/secrets/key.pem", "config/axbycz"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("PRIVATE\n")
    assert _git_shown_of(workspace, ["config/secrets/key.pem", "config/axbycz"]) == set()
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--root", str(workspace), "--standalone"], env) as client:
        globbed = await call(client, "glob", pattern="**/*", path="config")
        assert globbed["paths"] == [str(workspace / "config/app.yml")]
        matched = await call(client, "grep", pattern="PRIVATE", path="config", output="files")
        assert matched["files"] == [str(workspace / "config/app.yml")]


def _git_shown_of(root: Path, names: list[str]) -> set[str]:
    ran = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--stdin"],
        input="\n".join(names),
        capture_output=True,
        text=True,
    )
    return set(names) - set(ran.stdout.split())


@pytest.mark.parametrize(
    "ignore", ["*\n!*/\n!config/settings.json\n", "**\n!*/\n!config/settings.json\n"]
)
def test_a_folder_re_included_by_a_negation_never_shows_what_git_hides(
    workspace: Path, ignore: str
) -> None:
    """ "Ignore everything but": pathspec reads `!*/` otherwise than git (it keeps the
    folder ignored), so a search of the folder must not fall back to ripgrep's own
    answer there, which shows what a parent's pattern hides (attack round 2, F2)."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text(ignore)
    for name in ["config/settings.json", "config/private/settings.json"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text('{"api_key": "sk-SECRET"}\n')
    hidden = str(workspace / "config/private/settings.json")
    core = Readkeeper(roots=[str(workspace)])
    try:
        for path in ["config", "config/private"]:
            globbed = calls.call(core, "glob", {"pattern": "**/*", "path": path})
            assert hidden not in globbed["paths"], path
            found = calls.call(core, "grep", {"pattern": "api_key", "path": path})
            assert hidden not in {m["file_path"] for m in found["matches"]}, path
    finally:
        core.close()
