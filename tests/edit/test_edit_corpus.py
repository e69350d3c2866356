"""A fast subset of the edit-robustness corpus (tests/edit_samples.py; the whole of it
runs in bench/bench_edits.py): real files of several languages, the slips models make
and stale versions, in both edit forms. No edit may be applied wrongly."""

from __future__ import annotations

from pathlib import Path

import edit_samples

from readkeeper.core import Readkeeper


def test_no_edit_of_the_corpus_subset_is_applied_wrongly(core: Readkeeper, workspace: Path) -> None:
    edits = edit_samples.corpus(24, seed=7)
    assert len({edit.name.rsplit(".", 1)[1] for edit in edits}) >= 2  # several languages
    outcomes = edit_samples.run(core, workspace, edits)
    wrong = [o for o in outcomes if o.result == "wrong"]
    assert wrong == []
    table = edit_samples.tally(outcomes)
    # Every refusal of a stale or misnamed edit says where to look next.
    for form in ("plain", "anchored"):
        same = table[form]["stale_same_lines"]
        assert same["refused"] == same["useful"] == same["cases"] > 0
    # The exact forms and the forgiven slips land.
    for variant in ("exact", "cat_n_prefixes", "trailing_ws", "crlf"):
        row = table["plain"][variant]
        assert row["correct"] == row["cases"] > 0
    assert table["anchored"]["exact"]["correct"] == table["anchored"]["exact"]["cases"]
