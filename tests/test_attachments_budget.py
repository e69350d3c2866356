"""The budgeter: never over budget, priorities respected, every cut noted."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from readkeeper.attachments.budget import fit
from readkeeper.attachments.model import USER, Attachment
from readkeeper.tokens import TokenCounter

COUNTER = TokenCounter()

words = st.text(alphabet="abcdefghij klmnop,.()[]{}=+-_/0123456789\t日本é", min_size=0, max_size=60)
texts = st.lists(words, min_size=1, max_size=40).map("\n".join)


@st.composite
def attachments(draw: st.DrawFn) -> Attachment:
    protected = draw(st.booleans()) and draw(st.integers(0, 3)) == 0
    return Attachment(
        type=draw(st.sampled_from(["file", "memory", "diagnostics", "git_status"])),
        content=draw(texts),
        priority=USER if protected else draw(st.integers(0, 90)),
        max_tokens=draw(st.integers(100, 800)),  # every real cap holds a cut note
        source=draw(st.text(min_size=1, max_size=8)),
        protected=protected,
        file_path="/w/f.txt" if draw(st.booleans()) else None,
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(attachments(), max_size=8), st.integers(1, 3000))
def test_fitting_respects_the_budget_the_caps_and_the_priorities(
    items: list[Attachment], budget: int
) -> None:
    fitted = fit(items, budget, COUNTER)
    kept = fitted.attachments
    assert fitted.used_tokens <= budget
    for item in kept:
        assert item.tokens == COUNTER.count(item.content)  # counts are honest
        assert item.tokens <= item.max_tokens or item.protected
        if item.truncated:
            assert "cut to fit the token budget" in item.content  # every cut says so
            if item.file_path:
                assert "readkeeper/read" in item.content  # ... and how to get the rest
    assert len(kept) + len(fitted.dropped) == len(items)
    # Priorities: every kept droppable item ranks before every dropped one (higher
    # priority, or equal priority and earlier in the list).
    rank = {id(item): (-item.priority, index) for index, item in enumerate(items)}
    kept_ids = {id(item) for item in kept}
    lost = [i for i in items if id(i) not in kept_ids and not i.protected]
    for item in kept:
        if not item.protected:
            assert all(rank[id(item)] < rank[id(d)] for d in lost)


@settings(max_examples=100, deadline=None)
@given(st.lists(attachments(), max_size=8))
def test_nothing_is_dropped_or_cut_when_everything_fits(items: list[Attachment]) -> None:
    # Only the per-type caps cut anything when the budget is no constraint...
    unconstrained = fit(copy.deepcopy(items), 10**9, COUNTER)
    assert unconstrained.dropped == []
    # ... and a budget of exactly what that came to changes nothing.
    exact = fit(copy.deepcopy(items), unconstrained.used_tokens, COUNTER)
    assert exact.dropped == []
    assert [(i.content, i.truncated) for i in exact.attachments] == [
        (i.content, i.truncated) for i in unconstrained.attachments
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(attachments(), max_size=6), st.integers(400, 3000))
def test_the_users_input_is_cut_never_dropped(items: list[Attachment], budget: int) -> None:
    protected = [i for i in items if i.protected]
    if len(protected) * 60 > budget:
        return  # not even the notes would fit: covered by the budget test above
    fitted = fit(items, budget, COUNTER)
    assert all(i in fitted.attachments for i in protected)


def test_a_lower_priority_never_survives_a_higher_one_that_missed() -> None:
    big = Attachment("diagnostics", "\n".join(f"error {i}" for i in range(400)), 80, 5000, "ed")
    small = Attachment("git_status", "branch main, clean", 30, 1000, "git")
    fitted = fit([big, small], 100, COUNTER)
    assert fitted.attachments == []
    assert [d.type for d in fitted.dropped] == ["diagnostics", "git_status"]
    assert "ranked after the diagnostics attachment" in fitted.dropped[1].reason


def test_an_item_whose_cap_cannot_hold_the_cut_note_is_dropped_and_says_why() -> None:
    item = Attachment("git_status", "\n".join(f" M file{i}.py" for i in range(50)), 30, 10, "/w")
    fitted = fit([item], 60_000, COUNTER)
    assert fitted.attachments == []
    assert "too small to hold even a note" in fitted.dropped[0].reason


def test_an_item_over_its_type_cap_is_cut_with_where_to_continue() -> None:
    lines = "\n".join(f"rule {i}: keep functions short" for i in range(500))
    item = Attachment("memory", lines, 60, 300, "/w/AGENTS.md", file_path="/w/AGENTS.md")
    fitted = fit([item], 60_000, COUNTER)
    [kept] = fitted.attachments
    assert kept.truncated
    assert kept.tokens <= 300
    shown = kept.content.count("\nrule ") + 1
    assert f'"offset": {shown + 1}' in kept.content
