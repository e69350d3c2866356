"""READKEEPER_NO_SKIP=1 (set by .ci/run) turns the skip of a `ci_required` test into a
failure; other skips, and the same skip on a contributor's machine, stay skips."""

from __future__ import annotations

from typing import Any

import pytest

pytest_plugins = ["pytester"]

SAMPLE = """
from typing import Any

import pytest

@pytest.mark.ci_required
def test_editor():
    pytest.skip("no editor here")

@pytest.mark.ci_required
@pytest.mark.skipif(True, reason="no nvim on PATH")
def test_neovim():
    pass

@pytest.mark.ci_required
def test_that_runs():
    pass

def test_optional():
    pytest.skip("an optional extra")
"""


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flag: str | None) -> Any:
    if flag is None:
        monkeypatch.delenv("READKEEPER_NO_SKIP", raising=False)
    else:
        monkeypatch.setenv("READKEEPER_NO_SKIP", flag)
    pytester.makeconftest("from ci_skips import pytest_configure, pytest_runtest_makereport\n")
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    ci_required: must not skip in CI\n"
    )
    pytester.makepyfile(SAMPLE)
    return pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:xdist", "-rA")


def test_in_ci_a_skip_of_a_required_test_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(pytester, monkeypatch, "1")
    result.assert_outcomes(passed=1, skipped=1, errors=1, failed=1)
    for reason in ("no editor here", "no nvim on PATH"):
        result.stdout.fnmatch_lines([f"*READKEEPER_NO_SKIP=1 makes that a failure: {reason}"])


@pytest.mark.parametrize("flag", [None, "0"])
def test_on_a_contributors_machine_a_skip_stays_a_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flag: str | None
) -> None:
    result = run(pytester, monkeypatch, flag)
    result.assert_outcomes(passed=1, skipped=3)
    assert result.ret == 0
