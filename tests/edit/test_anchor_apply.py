"""The anchor edits' planner (edit/anchors.py) against a model: any set of edits that do
not overlap, applied bottom to top to a file's text, gives the lines a list would,
keeping the file's line endings and whether it ends with one; and the checks that come
before it (`locate`) accept exactly the anchors the session was shown."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from readkeeper.edit.anchors import Step, apply, check_shape, locate
from readkeeper.edit.matching import Normalized
from readkeeper.protocol import AnchorEdit
from readkeeper.read.anchors import anchor, line_hash

LINES = st.lists(st.sampled_from(["a", "b", "", "  c", "}"]), min_size=1, max_size=8)


@st.composite
def edits(draw: st.DrawFn) -> tuple[list[str], bool, str, list[Step]]:
    lines = draw(LINES)
    final = draw(st.booleans())
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    if not final and lines[-1] == "":
        lines[-1] = "z"  # else the text ends with a line break after all
    steps: list[Step] = []
    at = 0
    index = 0
    while at <= len(lines) and draw(st.booleans()):
        first = draw(st.integers(at, len(lines)))
        end = draw(st.integers(first, len(lines)))
        if first == end and steps and steps[-1].first == steps[-1].end == first:
            break  # two inserts at one place are refused before planning
        new = draw(st.lists(st.sampled_from(["x", "y", ""]), max_size=3))
        if first == end and not new:
            new = ["x"]
        steps.append(Step(index, first, end, new, first + 1))
        index += 1
        at = end + 1 if end > first else end
    return lines, final, eol, steps


@settings(max_examples=400, deadline=None)
@given(edits())
def test_applied_bottom_to_top_as_a_list_would(
    case: tuple[list[str], bool, str, list[Step]],
) -> None:
    lines, final, eol, steps = case
    text = eol.join(lines) + (eol if final else "")
    planned, firsts = apply(Normalized(text), steps, eol)
    model = list(lines)
    for step in reversed(steps):
        model[step.first : step.end] = step.lines
    expected = eol.join(model) + (eol if model and final else "")
    if not final and not model:
        expected = ""
    assert planned.text == expected
    # Each step's first line, in the new text, is where its new lines start.
    shift = 0
    for step, first in zip(steps, firsts, strict=True):
        assert first == step.first + 1 + shift
        shift += len(step.lines) - (step.end - step.first)


def test_locate_accepts_only_the_lines_the_session_was_shown() -> None:
    current = ["one", "two", "three", "four"]
    shown = {n: line_hash(text) for n, text in enumerate(current, 1) if n != 3}
    replace_two = check_shape([AnchorEdit("replace", anchor(2, "two"), lines=["2"])], "a.py")
    steps, moved, problems = locate(replace_two, current, shown)
    assert (problems, moved, [(s.first, s.end) for s in steps]) == ([], [], [(1, 2)])
    # A span over line 3, which the session was not shown, is stale.
    span = check_shape([AnchorEdit("delete", anchor(2, "two"), anchor(4, "four"))], "a.py")
    assert [p.near for p in locate(span, current, shown)[2]] == [3]
    # The right number with the wrong letters: a slip, stale.
    slip = check_shape(
        [AnchorEdit("delete", "2aa" if anchor(2, "two")[1:] != "aa" else "2bb")], "a.py"
    )
    assert locate(slip, current, shown)[2][0].why == "not the hash you were shown"


def test_the_line_hash_is_keyed_per_process_even_with_a_fixed_hash_seed() -> None:
    # With PYTHONHASHSEED fixed, str's own hash is the same in every process, so a file
    # could be written to collide with a line; the line hash must not be predictable.
    script = "from readkeeper.read.anchors import line_hash; print(line_hash('x = 1'))"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    seen = {
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(seen) == 2
