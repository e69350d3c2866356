"""globcost.py: one rule for every glob, whoever gives it. A glob whose matching could
backtrack past linear-times-one is refused when a user gives it and skipped when a
repository's ignore file holds it; ordinary globs pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files.globcost import affordable, refuse_costly
from readkeeper.files.ignore import IgnoreRules
from readkeeper.protocol.search import GrepParams
from readkeeper.search.globs import Glob

ORDINARY = ["*.py", "src/**/test_*.ts", "*.min.*", "**/node_modules/**", "**/a/**/b", "a*b"]
COSTLY = ["*a*a*b", "*a*a*a*a*a*a*a*a*a*b", "**/a/**/a/**/b", "**/*a*b*", "*a*/*a*/b"]


@pytest.mark.parametrize("pattern", ORDINARY)
def test_ordinary_globs_are_affordable(pattern: str) -> None:
    assert affordable(pattern)
    Glob(pattern)


@pytest.mark.parametrize("pattern", COSTLY)
def test_a_costly_glob_is_refused_naming_its_field(pattern: str) -> None:
    assert not affordable(pattern)
    with pytest.raises(ReadkeeperError) as caught:
        Glob(pattern)
    assert caught.value.kind == "bad_params"
    assert caught.value.to_data()["field"] == "pattern"
    with pytest.raises(ReadkeeperError) as caught:
        refuse_costly(pattern, "excludePatterns")
    assert caught.value.to_data()["field"] == "excludePatterns"


def test_an_ignore_file_s_costly_globs_are_skipped_its_others_kept(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("**/a/**/a/**/b\n*.log\n")
    rules = IgnoreRules(str(tmp_path))
    deep = str(tmp_path) + "/a" * 300
    assert not rules.ignored(deep + "/b")  # skipped: its match would backtrack
    assert rules.ignored(deep + "/x.log")


def test_grep_s_glob_is_held_to_the_same_rule(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    with pytest.raises(ReadkeeperError) as caught:
        core.grep(GrepParams("x", path=str(workspace), glob=COSTLY[1]))
    assert caught.value.kind == "bad_params"
    assert caught.value.to_data()["field"] == "glob"
