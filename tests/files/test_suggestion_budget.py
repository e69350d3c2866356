"""Did-you-mean has ONE budget per call (files/guesses.py `one_call`): the walk and the
scoring of every miss of the call together. Past it a miss gets no guess, and its refusal
names the list and glob calls that find the file (attack round 17: a read_many of 60 long
missing names in a folder of 100,000 cost 57.7 s of CPU, each miss its own budget).

The budget is time; these tests run it on a clock that advances a fixed step each time
the guesses look at it, so what they check does not hang on the machine's speed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.files import guesses
from readkeeper.files.paths import Workspace
from readkeeper.mcp.filesystem.args import Content, Served, text_block
from readkeeper.mcp.filesystem.serve import HANDLERS, SCHEMAS, serve


class StepClock:
    """A clock that advances `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def settings_files(workspace: Path) -> None:
    for name in ("settings_alpha.toml", "settings_beta.toml", "settings_gamma.toml"):
        (workspace / name).write_text("")


def test_every_miss_of_a_read_many_shares_one_budget(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_files(workspace)
    # Each look costs a tenth of the budget: one miss takes a few, twenty take all.
    monkeypatch.setattr(guesses, "_clock", StepClock(guesses.SUGGESTION_SECONDS / 10))
    misses = [f"settings_alph{i}.toml" for i in range(20)]
    answer = calls.call(core, "readMany", {"file_paths": misses, "session": "s"})
    errors: list[dict[str, Any]] = [r["error"] for r in answer["results"]]
    assert errors[0]["data"]["suggestions"][0] == str(workspace / "settings_alpha.toml")
    last = errors[-1]
    assert last["data"]["kind"] == "not_found"
    assert last["data"]["suggestions"] == []
    assert "Did you mean" not in last["message"]
    # The refusal still names the calls that find the file.
    assert "glob" in last["message"]
    assert "**/settings_alph19.toml" in last["message"]
    # A new call has a budget of its own.
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "read", {"file_path": "settings_alph19.toml", "session": "s"})
    assert caught.value.data["suggestions"][0] == str(workspace / "settings_alpha.toml")


def test_a_spent_budget_leaves_the_list_and_glob_calls(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_files(workspace)
    monkeypatch.setattr(guesses, "SUGGESTION_SECONDS", 0.0)
    workspace_ = Workspace()
    workspace_.set_roots([str(workspace)])
    with guesses.one_call(), pytest.raises(ReadkeeperError) as caught:
        workspace_.resolve(str(workspace / "settings_alph.toml"))
    error = caught.value
    assert error.kind == "not_found"
    assert error.data["suggestions"] == []
    assert "list" in error.message
    assert "glob" in error.message
    assert "**/settings_alph.toml" in error.message


def _two_misses(served: Served, args: dict[str, Any]) -> list[Content]:
    """A drop-in tool that asks the core twice, each a miss (read_text_file's tail asks
    for an estimate, then the read): the guesses each miss got, a line each."""
    said = []
    for name in ("settings_alph1.toml", "settings_alph2.toml"):
        with pytest.raises(ReadkeeperError) as caught:
            served.ask("read", file_path=name)
        said.append(text_block(json.dumps(caught.value.data["suggestions"])))
    return said


def test_a_drop_in_call_shares_one_budget_however_many_calls_it_makes(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_files(workspace)
    # One look spends the whole budget: a miss gets its guesses (the first slice of names
    # is always scored), and the budget is spent after it.
    monkeypatch.setattr(guesses, "_clock", StepClock(guesses.SUGGESTION_SECONDS))
    monkeypatch.setitem(HANDLERS, "two_misses", _two_misses)
    monkeypatch.setitem(SCHEMAS, "two_misses", {"properties": {}})
    served = Served(lambda method, params: calls.call(core, method, params), lambda: [])
    for _ in range(2):  # a new drop-in call has a budget of its own
        answer = serve(served, "two_misses", {})
        first, second = (json.loads(str(getattr(c, "text", ""))) for c in answer.content)
        assert first[0] == str(workspace / "settings_alpha.toml")
        assert second == []
