"""`readkeeper demo` tells the truth: each figure it prints is the server's real answer,
its canned diagnostic fits the code it is about, and its previews show what matters."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.demo import APP
from readkeeper.protocol import ReadParams, unstructure


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> str:
    # Each attachment source gets a bound a loaded machine keeps (the 3 s default, when
    # outlasted, drops the changes from step 9's context, and its preview with them).
    env = {**os.environ, "READKEEPER_ATTACHMENTS_TIMEOUT_MS": "60000"}
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", "demo"],
        cwd=tmp_path_factory.mktemp("demo"),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def step(shown: str, number: int) -> str:
    return shown.split(f"\n{number}. ", 1)[1].split("\n\n", 1)[0]


def real_tokens(workspace: Path, **params: object) -> int:
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "inventory.py").write_text(APP)
    core = Readkeeper(roots=[str(workspace)])
    core.tokens.count("")  # the table loaded: the count below is exact
    try:
        file = unstructure(core.read(ReadParams(file_path="src/inventory.py", **params)))["file"]  # type: ignore[arg-type]
    finally:
        core.close()
    assert not file.get("tokens_upper_bound")
    return int(file["tokens"])


@pytest.mark.parametrize(("number", "params"), [(1, {}), (3, {"offset": 20, "limit": 4})])
def test_the_token_counts_are_the_real_ones(
    shown: str, workspace: Path, number: int, params: dict[str, int]
) -> None:
    """The first step included: its server's table has not loaded yet, and the count is
    exact all the same (the table's index, or a wait for the table; issue 34)."""
    said = re.search(r"tokens(=|≤)(\d+)", step(shown, number))
    assert said is not None, step(shown, number)
    assert said[1] == "=", step(shown, number)
    assert int(said[2]) == real_tokens(workspace, **params)
    assert "upper bound" not in step(shown, number)


def test_the_lines_and_sizes_add_up(shown: str) -> None:
    first = step(shown, 1)
    assert "num_lines=26, total_lines=26" in first
    assert len(APP.splitlines()) == 26
    assert "… 22 more lines" in first  # 4 of 26 shown


def test_the_diagnostic_is_true_of_the_code_it_points_at(shown: str) -> None:
    context = step(shown, 9)
    diagnostic = re.search(r"(\d+):(\d+) \w+ \(new\) \[([^\]]+)\]: (.+)", context)
    assert diagnostic is not None, context
    line = int(diagnostic[1])
    edited = APP.replace(
        "item.quantity += amount", "item.quantity = max(0, item.quantity + amount)"
    )
    code = edited.splitlines()[line - 1]
    # No contradiction with the edit of step 6: max() there has its two arguments.
    assert "expects two arguments" not in diagnostic[4]
    if "docstring" in diagnostic[4]:
        assert code.strip().startswith("def ")
        following = edited.splitlines()[line]
        assert '"""' not in following


def test_the_change_notice_preview_shows_the_change_not_just_the_diff_header(shown: str) -> None:
    preview = step(shown, 9).split("← changes", 1)[1].split("← ", 1)[0]
    rows = [row.strip() for row in preview.splitlines()[1:]]
    assert any(row.startswith("-") and not row.startswith("---") for row in rows), preview
    assert any(row.startswith("+") and not row.startswith("+++") for row in rows), preview


def test_the_stats_add_up_the_reads_shown(shown: str) -> None:
    figures = [int(n) for n in re.findall(r"← text: .*?tokens[=≤](\d+)", shown)]
    stats = re.search(r"stats: .*?(at most )?(\d+) tokens returned", shown)
    assert stats is not None
    assert int(stats[2]) == sum(figures)
    assert bool(stats[1]) == ("tokens≤" in shown)
