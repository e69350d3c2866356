"""The one-expression test of a folder's ignore patterns (files/ignore.py `_Patterns`)
gives pathspec's own verdict on every path, and the rules' verdicts through nested
ignore files are Git's (a nearer file's negation wins)."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

from pathspec import GitIgnoreSpec

from readkeeper.files.ignore import VCS_FOLDERS, IgnoreRules, _Patterns

PATTERNS = [
    "*.log",
    "!keep.log",
    "build/",
    "/dist",
    "docs/**/*.tmp",
    "**/cache",
    "a?c",
    "[mn]ode_modules/",
    "\\#literal",
    "name with space",
    "(paren)",
    "x[!y]z",
    "deep/**",
    "!deep/kept/",
]
PATHS = [
    "app.log",
    "keep.log",
    "sub/keep.log",
    "build/",
    "build",
    "src/build/",
    "dist",
    "src/dist",
    "docs/a/b/c.tmp",
    "docs/c.tmp",
    "cache",
    "x/y/cache/",
    "abc",
    "ac",
    "node_modules/",
    "mode_modules/",
    "#literal",
    "name with space",
    "(paren)",
    "xaz",
    "xyz",
    "deep/kept/",
    "deep/kept/file.py",
    "deep/other.py",
    "src/main.py",
    "README.md",
]


def test_one_expression_gives_pathspecs_verdict_on_every_path() -> None:
    # Every ordered pair of patterns and each alone: negations before and after.
    sets = [[p] for p in PATTERNS] + [list(pair) for pair in itertools.permutations(PATTERNS, 2)]
    sets.append(PATTERNS)
    for lines in sets:
        spec = GitIgnoreSpec.from_lines(lines)
        patterns = _Patterns(spec)
        for path in PATHS:
            assert patterns.verdict(path) == spec.check_file(path).include, (lines, path)


def test_nested_ignore_files_agree_with_git(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\nout/\n!important.log\n")
    (root / "pkg").mkdir()
    (root / "pkg" / ".gitignore").write_text("!*.log\nlocal.py\n")
    (root / "pkg" / "inner").mkdir()
    (root / "pkg" / "inner" / ".gitignore").write_text("*.log\n")
    files = [
        "a.log",
        "important.log",
        "pkg/a.log",
        "pkg/local.py",
        "pkg/inner/b.log",
        "pkg/inner/local.py",
        "pkg/inner/ok.py",
        "out/x.py",
        "src/y.py",
    ]
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", *files],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    git_ignored = set(checked.stdout.split())
    rules = IgnoreRules(str(root), exclude=())
    for name in files:
        assert rules.ignored(str(root / name)) == (name in git_ignored), name


def test_a_pattern_whose_expression_cannot_compile_is_skipped_as_git_does(tmp_path: Path) -> None:
    """pathspec raises re.error (not a ValueError) for a class such as "[z-a]": a line
    of a repository's ignore file that does not compile is skipped, the rest applied
    (it once stopped the watcher and made `list` an internal error)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("[z-a]\n*.log\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("[9-0]x\n!keep.log\n")
    rules = IgnoreRules(str(tmp_path), exclude=["[z-a]", "*.tmp"])
    assert rules.ignored(str(tmp_path / "a.log"))
    assert rules.ignored(str(tmp_path / "a.tmp"))
    assert not rules.ignored(str(tmp_path / "sub" / "keep.log"))
    assert not rules.ignored(str(tmp_path / "a.txt"))


def test_watch_exclude_judged_by_a_paths_last_name_agrees_with_the_whole_path(
    tmp_path: Path,
) -> None:
    """`watch_exclude` patterns that match a path by one of its names are matched against
    its last name only (the folders above judged first): matched whole, a watch of a
    chain 2,000 folders deep took 750 us a folder. Every set of such patterns (and sets
    with others, matched whole) gives the verdict of the whole path: excluded when it or
    a folder above it matches."""
    names = ["src", "build", "node_modules", "a.log", "abc", "mode_modules", "x.pyc", "keep.log"]
    by_name = ["build/", "*.log", "a?c", "[mn]ode_modules/", "*.pyc", "__pycache__/", "*/"]
    others = ["!keep.log", "/dist", "src/*.pyc", "**/abc", "\\#x"]
    sets = [[p] for p in by_name + others] + [list(s) for s in itertools.combinations(by_name, 3)]
    sets += [by_name, by_name + others[:1], by_name + others[1:3]]
    paths = [p for depth in (1, 2, 3) for p in itertools.product(names, repeat=depth)]
    for lines in sets:
        spec = GitIgnoreSpec.from_lines(lines)
        files = GitIgnoreSpec.from_lines([p for p in lines if not p.endswith("/")])
        rules = IgnoreRules(str(tmp_path), exclude=lines)
        for parts in paths:
            for is_dir in (True, False):
                folders = ("/".join(parts[:n]) + "/" for n in range(1, len(parts)))
                above = any(spec.match_file(folder) for folder in folders)
                relative = "/".join(parts) + ("/" if is_dir else "")
                whole = above or (spec if is_dir else files).match_file(relative)
                got = rules.ignored(str(tmp_path.joinpath(*parts)), is_dir=is_dir)
                assert got == (whole or (is_dir and parts[-1] in VCS_FOLDERS)), (lines, relative)
