"""Properties of edits: they equal Python's own replacements, a merge happens exactly when
the other change is disjoint (and then commutes with the edit), and concurrent external
writers are never overwritten."""

from __future__ import annotations

import os
import random
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from readkeeper.core import Readkeeper
from readkeeper.edit.matching import Normalized, plan
from readkeeper.edit.merge import disjoint_hits
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams, ReadParams
from readkeeper.read.diffs import _keepends, bounded_diff, text_hunks

# Few characters, so random old_strings match often (and often more than once); a tab,
# a non-ASCII letter and a character outside the BMP keep offsets honest.
TEXT = st.text(alphabet="ab \t\né🍰", max_size=60)
SNIPPET = st.text(alphabet="ab \t\né🍰", max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(initial=TEXT, data=st.data())
def test_edit_sequences_equal_python_replacements(initial: str, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        core = Readkeeper(roots=[folder])
        path = Path(folder, "f.txt")
        path.write_text(initial, newline="")
        core.read(ReadParams(str(path)))
        model = initial
        for _ in range(data.draw(st.integers(1, 6), label="edits")):
            if model and data.draw(st.booleans(), label="old from the text"):
                start = data.draw(st.integers(0, len(model) - 1))
                old = model[start : start + data.draw(st.integers(1, 6))]
            else:
                old = data.draw(SNIPPET, label="old")
            new = data.draw(SNIPPET, label="new")
            replace_all = data.draw(st.booleans(), label="replace_all")
            count = model.count(old) if old else 0
            expected_kind = (
                "bad_params"
                if not old
                else "no_change"
                if old == new
                else "no_match"
                if count == 0
                else "ambiguous_match"
                if count > 1 and not replace_all
                else None
            )
            try:
                result = core.edit(EditParams(str(path), old, new, replace_all=replace_all))
                kind, replacements = None, result.replacements
            except ReadkeeperError as error:
                kind, replacements = error.kind, 0
            forgiven = expected_kind == "no_match" and _forgivable(model, old)
            indented = expected_kind is None and _indents_new_lines(model, old, new)
            if forgiven or indented:
                # A slip forgiving.py may forgive, or new lines given the indentation of
                # the line they continue (test_forgiving.py tests both): not Python's
                # replacement, so the model goes on from the file.
                model = path.read_bytes().decode("utf-8")
                continue
            assert kind == expected_kind, (old, new, model)
            if kind is None:
                model = model.replace(old, new) if replace_all else model.replace(old, new, 1)
                assert replacements == (count if replace_all else 1)
            assert path.read_bytes() == model.encode("utf-8")


def _forgivable(text: str, old: str) -> bool:
    """Whether `old`, its lines' leading and trailing whitespace set aside, names a run of
    whole lines of `text` so compared: where forgiving.py may apply an edit that is not in
    the text as written (an over-approximation: it also needs one run, and a consistent
    indentation)."""
    have = [line.strip(" \t") for line in text.split("\n")]
    for lines in {old, old.removesuffix("\n")}:  # an old_string of whole lines, or not
        want = [line.strip(" \t") for line in lines.split("\n")]
        if any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1)):
            return True
    return False


def _indents_new_lines(norm: str, old: str, new: str) -> bool:
    """The one case where an edit is not Python's replacement: `old` is the tail of an
    indented line and `new` adds lines, which get that indentation (test_forgiving.py)."""
    at = norm.index(old)
    start = norm.rfind("\n", 0, at) + 1
    indented = at > start and not norm[start:at].strip(" \t") and old[:1] not in " \t"
    adds = any(line.strip() for line in new.split("\n")[1:])
    return indented and old.endswith("\n") and adds


LINE = st.sampled_from(["a\n", "b\n", "a b\n", "\n", "\tb\n", "ab\n"])


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(LINE, max_size=12), endings=st.lists(st.booleans(), max_size=12), data=st.data()
)
def test_crlf_and_mixed_files_keep_every_other_byte(
    lines: list[str], endings: list[bool], data: st.DataObject
) -> None:
    """Edits of files with any mix of LF and CRLF: the text equals Python's replacement
    (endings aside), and every line the edit does not span keeps its exact bytes."""
    crlf = [bool(endings[i]) if i < len(endings) else False for i in range(len(lines))]
    raw = "".join(ln[:-1] + "\r\n" if cr else ln for ln, cr in zip(lines, crlf, strict=True))
    norm = "".join(lines)
    if not norm:
        return
    start = data.draw(st.integers(0, len(norm) - 1))
    old = norm[start : start + data.draw(st.integers(1, 8))]
    new = data.draw(st.text(alphabet="xy\n", max_size=6))
    if norm.count(old) != 1 or old == new or _indents_new_lines(norm, old, new):
        return
    with tempfile.TemporaryDirectory() as folder:
        core = Readkeeper(roots=[folder])
        path = Path(folder, "f.txt")
        path.write_bytes(raw.encode())
        core.read(ReadParams(str(path)))
        core.edit(EditParams(str(path), old, new))
        after = path.read_bytes().decode()
    assert after.replace("\r\n", "\n") == norm.replace(old, new, 1)
    at = norm.index(old)
    first_line = norm.count("\n", 0, at)
    last_line = norm.count("\n", 0, at + len(old) - 1)
    raw_lines = raw.splitlines(keepends=True)
    before_part = "".join(raw_lines[:first_line])
    after_part = "".join(raw_lines[last_line + 1 :])
    assert after.startswith(before_part)
    assert after.endswith(after_part)


@settings(max_examples=300, deadline=None)
@given(bodies=st.lists(LINE, max_size=12), data=st.data())
def test_a_merge_happens_exactly_when_the_change_is_disjoint(
    bodies: list[str], data: st.DataObject
) -> None:
    """The agent read `snapshot`, someone replaced its lines [i1:i2) with `inserted`
    (lines found nowhere else), and the agent edits one match of `old`. The edit is
    merged if and only if the match does not touch the changed lines (and matches once
    before and after); a merged result is both changes applied.

    Lines are numbered so the change has one line diff: with repeated lines, several
    diffs explain it equally well, and a merge is sound under any of them."""
    lines = [f"{body[:-1]}{n}\n" for n, body in enumerate(bodies)]
    snapshot = "".join(lines)
    i1 = data.draw(st.integers(0, len(lines)))
    i2 = data.draw(st.integers(i1, len(lines)))
    inserted = [f"EXT {n}\n" for n in range(data.draw(st.integers(0 if i2 > i1 else 1, 3)))]
    current = "".join(lines[:i1] + inserted + lines[i2:])
    if not snapshot:
        return
    start = data.draw(st.integers(0, len(snapshot) - 1))
    old = snapshot[start : start + data.draw(st.integers(1, 8))]
    new = data.draw(st.text(alphabet="xy\n", max_size=6))
    if old == new:
        return

    outcome = disjoint_hits(snapshot, Normalized(current), old, False, leased=True)

    at = snapshot.find(old)
    first, last = snapshot.count("\n", 0, at), snapshot.count("\n", 0, at + len(old) - 1)
    # Replaced lines: the match shares a line with them. Inserted lines: they fall
    # inside the match.
    touches = (first < i2 and i1 <= last) if i2 > i1 else (first < i1 <= last)
    disjoint = snapshot.count(old) == 1 and current.count(old) == 1 and not touches
    assert isinstance(outcome, list) == disjoint, (outcome, snapshot, current, old)
    if disjoint:
        assert isinstance(outcome, list)
        merged = plan(Normalized(current), outcome, old, new, "\n").text
        head, tail = "".join(lines[:i1]), "".join(lines[i2:])
        edited = snapshot.replace(old, new, 1)
        if last < i1:
            # The match is before the change: the edited head, then the change.
            expected = edited[: len(edited) - len("".join(lines[i1:]))] + "".join(inserted) + tail
        else:
            expected = head + "".join(inserted) + edited[len("".join(lines[:i2])) :]
        assert merged == expected


@settings(max_examples=300, deadline=None)
@given(a=st.text(alphabet="ab\n\r", max_size=30), b=st.text(alphabet="ab\n\r", max_size=30))
def test_text_hunks_turn_one_text_into_the_other(a: str, b: str) -> None:
    """The fast, character-trimmed line diff is a true diff: applying it gives `b`."""
    hunks, a_count, b_count = text_hunks(a, b)
    a_lines, b_lines = _keepends(a), _keepends(b)
    assert (a_count, b_count) == (len(a_lines), len(b_lines))
    patched, at = [], 0
    for i1, i2, j1, j2 in hunks:
        patched += a_lines[at:i1] + b_lines[j1:j2]
        at = i2
    assert patched + a_lines[at:] == b_lines
    assert bounded_diff(a, b, "f")[1] is False


# --- races -----------------------------------------------------------------------------------

RACES = 1_000
LINES = 60


def _external_write(path: Path, how: str, line: int, marker: str) -> None:
    """Another program changes `line`: read-modify-write, as editors and formatters do."""
    if how == "append":
        with open(path, "a") as stream:
            stream.write(marker + "\n")
        return
    lines = path.read_text().splitlines(keepends=True)
    lines[line] = lines[line].rstrip("\n") + marker + "\n"
    text = "".join(lines)
    if how == "rename":  # an editor's atomic save
        tmp = path.with_name(path.name + ".ext-save")
        tmp.write_text(text)
        os.replace(tmp, path)
    else:  # truncate and write in place, in two pieces (as a formatter may)
        with open(path, "w") as stream:
            stream.write(text[: len(text) // 2])
            stream.flush()
            stream.write(text[len(text) // 2 :])


def test_concurrent_external_writers_are_never_overwritten(tmp_path: Path) -> None:
    """Read, then race an edit against another program's write of the same file, 1,000
    times, at random moments: the other program's change always survives."""
    rng = random.Random(20_240_601)
    core = Readkeeper(roots=[str(tmp_path)])
    outcomes: Counter[str] = Counter()
    for race in range(RACES):
        path = tmp_path / f"race{race % 8}.txt"
        path.write_text("".join(f"line {i}: {'x' * rng.randint(0, 30)}\n" for i in range(LINES)))
        core.read(ReadParams(str(path)))
        how = rng.choice(["rename", "in place", "append"])
        theirs, ours = rng.randrange(LINES), rng.randrange(LINES)
        marker = f" <external {race}>"
        delays = rng.random() * 0.003, rng.random() * 0.003
        go = threading.Barrier(2)

        def other_program(
            go: threading.Barrier = go,
            delay: float = delays[0],
            args: tuple[Path, str, int, str] = (path, how, theirs, marker),
        ) -> None:
            go.wait()
            time.sleep(delay)
            _external_write(*args)

        writer = threading.Thread(target=other_program)
        writer.start()
        go.wait()
        time.sleep(delays[1])
        try:
            result = core.edit(EditParams(str(path), f"line {ours}:", f"line {ours} (agent):"))
            outcomes["merged" if result.merged else "applied"] += 1
        except ReadkeeperError as error:
            outcomes[error.kind] += 1
        writer.join()
        final = path.read_text()
        assert marker in final, (race, how, outcomes)
        for i in range(LINES):  # nothing lost or cut
            assert final.count(f"line {i}:") + final.count(f"line {i} (agent):") == 1
    print(f"\n{RACES} races: {dict(outcomes)}")
    # Every edit was applied (over a disjoint change, or before the other write) or
    # refused as stale; nothing else.
    assert set(outcomes) <= {"applied", "merged", "stale"}, outcomes
