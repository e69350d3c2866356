"""In CI nothing the README promises is skipped.

A test marked `ci_required` (the editor, inotify-fallback, Watchman and Neovim tests) may
skip with a reason on a contributor's machine that lacks the tool. With READKEEPER_NO_SKIP=1
(.ci/run sets it, after installing those tools) such a skip is reported as a failure,
so a missing install step cannot turn CI green by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

_NO_SKIP = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    # Read at start-up: the autouse fixture in conftest removes READKEEPER_* variables
    # from the environment while each test runs.
    config.stash[_NO_SKIP] = os.environ.get("READKEEPER_NO_SKIP", "") not in ("", "0")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if (
        report.skipped
        and item.config.stash.get(_NO_SKIP, False)
        and item.get_closest_marker("ci_required") is not None
    ):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        reason = str(reason).removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = (
            f"skipped, and READKEEPER_NO_SKIP=1 makes that a failure: {reason}\n"
            "(.ci/run installs what this test needs)"
        )
    return report
