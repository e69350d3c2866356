"""The budgeter: never over budget, priorities respected, every cut noted."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from readkeeper import render
from readkeeper.attachments import budget
from readkeeper.attachments.budget import ANSWER_TOKENS, fit, frame, truncate
from readkeeper.attachments.collect import TYPES
from readkeeper.attachments.model import HEADER_TOKENS, USER, Attachment, Dropped
from readkeeper.read.tokens import TokenCounter

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
            # Every cut says so, and which limit cut it: the turn's budget or its type's cap.
            assert (
                "cut to fit the token budget" in item.content
                or f"cut to fit its {item.max_tokens:,}-token cap" in item.content
            )
            if item.file_path:
                assert "the read tool with" in item.content  # ... and how to get the rest
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
    # ... and a budget of exactly what that came to, with the answer's header line,
    # changes nothing.
    exact = fit(copy.deepcopy(items), unconstrained.used_tokens + HEADER_TOKENS, COUNTER)
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


def test_a_protected_mention_cut_leaves_room_for_the_next() -> None:
    """Found by hypothesis (above): the first of two mentions took all the room it could
    use, and the second, the user's too, was dropped."""
    lines = "\n".join(f"line {i} of the first file, long enough to cost" for i in range(60))
    first = Attachment("file", lines, USER, 800, "a.txt", protected=True, file_path="/w/a.txt")
    second = Attachment("file", lines, USER, 800, "b.txt", protected=True, file_path="/w/b.txt")
    fitted = fit([first, second], 400, COUNTER)
    assert [a.source for a in fitted.attachments] == ["a.txt", "b.txt"]
    assert fitted.dropped == []


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
    [dropped] = fitted.dropped
    assert (dropped.type, dropped.source, dropped.tokens) == ("git_status", "/w", item.tokens)
    assert dropped.reason.startswith(f"{item.tokens} tokens, over its 10-token cap")


def test_what_is_dropped_for_ranking_after_a_miss_says_its_own_cost() -> None:
    big = Attachment("diagnostics", "\n".join(f"error {i}" for i in range(400)), 80, 5000, "ed")
    small = Attachment("git_status", "branch main, clean", 30, 1000, "git")
    fitted = fit([big, small], 100, COUNTER)
    assert [(d.type, d.source) for d in fitted.dropped] == [
        ("diagnostics", "ed"),
        ("git_status", "git"),
    ]
    assert fitted.dropped[1].tokens == small.tokens > 0


def test_a_cut_without_a_file_ends_with_its_own_hint() -> None:
    lines = "\n".join(f"error {i}: something is wrong here" for i in range(300))
    hint = "Ask for the rest with types=['diagnostics']."
    item = Attachment("diagnostics", lines, 50, 200, "editor", rest_hint=hint)
    [kept] = fit([item], 60_000, COUNTER).attachments
    assert kept.truncated
    assert kept.content.endswith(f"{hint}]")


def test_an_item_over_its_type_cap_is_cut_with_where_to_continue() -> None:
    lines = "\n".join(f"rule {i}: keep functions short" for i in range(500))
    item = Attachment("memory", lines, 60, 300, "/w/AGENTS.md", file_path="/w/AGENTS.md")
    fitted = fit([item], 60_000, COUNTER)
    [kept] = fitted.attachments
    assert kept.truncated
    assert kept.tokens <= 300
    shown = kept.content.count("\nrule ") + 1
    assert f'"offset": {shown + 1}' in kept.content


def _memory(lines: int, cap: int = 100_000, ragged: bool = False) -> Attachment:
    text = "\n".join(
        f"rule {i}: keep functions short" + (" and clear" * (i % 5) if ragged else "")
        for i in range(lines)
    )
    return Attachment("memory", text, 60, cap, "/w/AGENTS.md", file_path="/w/AGENTS.md")


def _shown(item: Attachment) -> int:
    match = re.search(r"showing (\d+) of (\d+) lines", item.content)
    return int(match[1]) if match else 0


@pytest.mark.parametrize("ragged", [False, True])
def test_a_cut_keeps_as_many_lines_as_fit_and_says_how_many(ragged: bool) -> None:
    smallest = None
    for limit in range(1, 160):
        item = _memory(40, ragged=ragged)
        if not truncate(item, limit, COUNTER):
            assert smallest is None, f"a cut to {limit} failed after one to {smallest} worked"
            continue
        smallest = smallest or limit
        assert item.truncated
        assert item.tokens == COUNTER.count(item.content) <= limit
        kept = _shown(item)
        body = item.content.split("\n[memory cut")[0] if kept else ""
        assert len(body.split("\n")) == kept if kept else item.content.startswith("[memory")
        assert f'"offset": {kept + 1}' in item.content  # where to read on
        # The lines kept, and no more: room is kept for the note at its widest, and each
        # line costs its tokens and its line break.
        more = _memory(40, ragged=ragged)
        lines = more.content.split("\n")
        widest = COUNTER.count(budget._note(more, len(lines), lines))
        assert sum(COUNTER.count_lines(lines[:kept])) + widest <= limit, (limit, kept)
        assert sum(COUNTER.count_lines(lines[: kept + 1])) + widest > limit, (limit, kept)
        assert item.content.startswith("\n".join(lines[:kept]))
    assert smallest is not None


def test_when_only_the_note_fits_the_cut_is_the_note_alone() -> None:
    item = _memory(40)
    lines = item.content.split("\n")
    widest = COUNTER.count(budget._note(item, len(lines), lines))
    assert truncate(item, widest, COUNTER)
    assert item.content.startswith("[memory cut to fit the token budget: none of its 40 lines")
    assert '"offset": 1}' in item.content
    # One token less and not even the note fits: the item is left as it was.
    untouched = _memory(40)
    assert not truncate(untouched, widest - 1, COUNTER)
    assert (untouched.content, untouched.truncated) == (_memory(40).content, False)


def _fill(tokens: int) -> Attachment:
    """A protected item of exactly `tokens` tokens."""
    text = " ".join("x" for _ in range(tokens))
    while COUNTER.count(text) > tokens:
        text = text[:-2]
    assert COUNTER.count(text) == tokens
    return Attachment("file", text, USER, 10**6, "/w/a.txt", protected=True)


# Below 200 tokens a cut item would be more note than content (MIN_USEFUL_TOKENS).
@pytest.mark.parametrize(("left", "cut"), [(200, True), (199, False)])
def test_an_item_is_cut_to_the_room_left_only_when_that_room_is_useful(
    left: int, cut: bool
) -> None:
    first = _fill(300)
    big = _memory(200)
    # Each kept item's header and fences are counted with it (budget.frame).
    framing = frame(first, COUNTER) + frame(big, COUNTER)
    budget = 300 + framing + left + HEADER_TOKENS  # the answer's header line set aside
    fitted = fit([first, big], budget, COUNTER)
    kept = [a.type for a in fitted.attachments]
    if cut:
        assert kept == ["file", "memory"]
        assert big.truncated
        assert big.tokens <= left
    else:
        assert kept == ["file"]
        assert [d.type for d in fitted.dropped] == ["memory"]
        # Once one is dropped, the room of the summary of the drops is set aside too.
        before = left + frame(big, COUNTER) + HEADER_TOKENS - ANSWER_TOKENS
        assert f"{before} of the {budget}-token budget were left" in fitted.dropped[0].reason


def test_an_item_of_exactly_its_cap_is_kept_whole() -> None:
    item = _fill(150)
    item.protected, item.priority, item.max_tokens = False, 40, 150
    content = item.content
    fitted = fit([item], 10_000, COUNTER)
    assert fitted.attachments == [item]
    assert (item.content, item.truncated, item.tokens) == (content, False, 150)


def test_a_non_text_item_over_its_cap_is_dropped_not_cut() -> None:
    image = Attachment("file", {"type": "image", "base64": "AAAA"}, 60, 100, "/w/a.png")
    image.tokens = 500  # fixed by its reader
    assert not truncate(image, 100, COUNTER)
    fitted = fit([image], 10_000, COUNTER)
    assert fitted.attachments == []
    assert "over its 100-token cap" in fitted.dropped[0].reason
    assert image.content == {"type": "image", "base64": "AAAA"}


def _fit_measured_each_pass(items: list[Attachment], budget_tokens: int) -> budget.Fitted:
    """`fit` as it was before each item was measured once: every pass copies the items
    afresh, counts and caps each again (`measure`) and counts its frame again."""
    kinds: set[str] = set()
    while True:
        trial = [copy.copy(item) for item in items]
        capped = [budget.measure(item, COUNTER) for item in trial]
        space = budget_tokens - HEADER_TOKENS - budget.SUMMARY_TOKENS * len(kinds)
        fitted = budget._fitted(trial, capped, {}, space, budget_tokens, COUNTER)
        dropped = kinds | {item.type for item in fitted.dropped}
        if dropped == kinds:
            break
        kinds = dropped
    kept = {id(item) for item in fitted.attachments}
    for item, tried in zip(items, trial, strict=True):
        item.__dict__.update(tried.__dict__)
    fitted.attachments = [i for i, t in zip(items, trial, strict=True) if id(t) in kept]
    return fitted


@st.composite
def every_type(draw: st.DrawFn) -> Attachment:
    item = draw(attachments())
    kinds = ["file", "memory", "diagnostics", "changes", "selection", "git_status"]
    item.type = draw(st.sampled_from([*kinds, "environment"]))
    return item


@settings(max_examples=150, deadline=None)
@given(st.lists(every_type(), max_size=12), st.integers(1, 1500))
def test_measuring_each_item_once_answers_as_measuring_it_each_pass(
    items: list[Attachment], budget_tokens: int
) -> None:
    """The fit's passes (up to one a type dropped, then the one that holds) start from
    items counted and capped once, and count each frame once: the same answer, and the
    same items, as when every pass measured them again (bench_attachments_fit.py)."""
    again = copy.deepcopy(items)
    once = fit(items, budget_tokens, COUNTER)
    each = _fit_measured_each_pass(again, budget_tokens)
    assert once.as_json() == each.as_json()
    assert [vars(i) for i in items] == [vars(i) for i in again]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(every_type(), max_size=8),
    st.lists(st.sampled_from(list(TYPES)), max_size=30),
    st.integers(1, 2_000),
)
def test_the_answer_as_sent_holds_the_budget_whatever_failed_before_the_fit(
    items: list[Attachment], failures: list[str], budget_tokens: int
) -> None:
    """The sources that failed before the fit (any type, any number) have their
    summaries' room set aside with the fit's own drops: the answer as the MCP text
    sends it stays within the budget unless the summaries alone are over it (attack
    round 24: 500 -> ~660 sent)."""
    failed = [
        Dropped(kind, f"/w/{kind}{n}", f"unsupported: {kind} {n}")
        for n, kind in enumerate(failures)
    ]
    fitted = fit(items, budget_tokens, COUNTER, failed)
    assert fitted.dropped[: len(failed)] == failed
    sent = COUNTER.count(render.attachments(fitted.as_json(COUNTER.count)))
    kinds = {d.type for d in fitted.dropped}
    assert sent <= max(budget_tokens, HEADER_TOKENS + budget.SUMMARY_TOKENS * len(kinds))
