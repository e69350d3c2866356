"""Plain `old_string` edits with the slips models make: forgiven (and said) where exactly
one place is meant and the file is as the session read it, refused where not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.read.anchors import anchor

SOURCE = (
    "def greet(name):\n"
    "    if name:\n"
    '        print("hello", name)\n'
    "    return name\n"
    "\n"
    "\n"
    "def other():\n"
    "    return 2\n"
)


def edit(core: Readkeeper, workspace: Path, source: str, old: str, new: str) -> tuple[Any, str]:
    path = workspace / "m.py"
    path.write_text(source)
    calls.call(core, "read", {"file_path": "m.py", "force": True})
    result = calls.call(core, "edit", {"file_path": "m.py", "old_string": old, "new_string": new})
    return result, path.read_text()


def refused(core: Readkeeper, workspace: Path, source: str, old: str, new: str) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        edit(core, workspace, source, old, new)
    assert (workspace / "m.py").read_text() == source
    return caught.value


WANTED = SOURCE.replace('print("hello", name)', 'print("hi", name)')


def test_cat_n_prefixes_that_name_the_lines_are_forgiven_and_said(
    core: Readkeeper, workspace: Path
) -> None:
    old = '     2\t    if name:\n     3\t        print("hello", name)\n'
    new = '     2\t    if name:\n     3\t        print("hi", name)\n'
    result, text = edit(core, workspace, SOURCE, old, new)
    assert text == WANTED
    assert "line-number prefixes" in result["note"]


def test_anchor_prefixes_are_forgiven_only_with_the_right_hashes(
    core: Readkeeper, workspace: Path
) -> None:
    line = '        print("hello", name)'
    _, text = edit(
        core, workspace, SOURCE, f"{anchor(3, line)}\t{line}", line.replace("hello", "hi")
    )
    assert text == WANTED
    refusal = refused(core, workspace, SOURCE, f"3zz\t{line}", line.replace("hello", "hi"))
    assert refusal.kind == "no_match"


def test_prefixes_naming_other_lines_are_refused(core: Readkeeper, workspace: Path) -> None:
    old = '     7\t    if name:\n     8\t        print("hello", name)\n'
    assert refused(core, workspace, SOURCE, old, old.replace("hello", "hi")).kind == "no_match"


def test_indentation_off_by_a_constant_is_forgiven_and_new_lines_follow_it(
    core: Readkeeper, workspace: Path
) -> None:
    old = 'if name:\n    print("hello", name)\n'
    new = 'if name:\n    print("hi", name)\n    log(name)\n'
    result, text = edit(core, workspace, SOURCE, old, new)
    assert text == WANTED.replace(
        '        print("hi", name)\n', '        print("hi", name)\n        log(name)\n'
    )
    assert "indentation" in result["note"]


def test_spaces_for_tabs_are_forgiven_and_new_lines_get_tabs(
    core: Readkeeper, workspace: Path
) -> None:
    source = SOURCE.replace("        ", "\t\t").replace("    ", "\t")
    old = '    if name:\n        print("hello", name)\n'
    new = '    if name:\n        print("hi", name)\n        log(name)\n'
    result, text = edit(core, workspace, source, old, new)
    assert '\t\tprint("hi", name)\n\t\tlog(name)\n' in text
    assert "tabs vs spaces" in result["note"]


def test_trailing_whitespace_and_typographic_quotes_are_forgiven(
    core: Readkeeper, workspace: Path
) -> None:
    source = SOURCE.replace("    if name:\n", "    if name:   \n")
    old = "    if name:\n        print(\u201chello\u201d, name)\n"
    new = "    if name:\n        print(\u201chi\u201d, name)\n"
    result, text = edit(core, workspace, source, old, new)
    # The unchanged line keeps its trailing spaces; the quotes written are plain.
    assert text == WANTED.replace("    if name:\n", "    if name:   \n")
    assert "trailing whitespace" in result["note"]
    assert "typographic quotes" in result["note"]


def test_a_slip_that_could_match_two_places_is_refused(core: Readkeeper, workspace: Path) -> None:
    source = "def a():\n    return 1\n\n\nclass B:\n    def a():\n        return 1\n"
    refusal = refused(core, workspace, source, "def a():\n  return 1\n", "def a():\n  return 2\n")
    assert refusal.kind == "ambiguous_match"
    assert refusal.data["lines"] == [1, 6]


def test_a_difference_inside_a_line_is_never_forgiven(core: Readkeeper, workspace: Path) -> None:
    old = '        print("hello",  name)\n'
    assert refused(core, workspace, SOURCE, old, old.replace("hello", "hi")).kind == "no_match"


def test_a_new_line_whose_indentation_cannot_be_told_is_refused(
    core: Readkeeper, workspace: Path
) -> None:
    source = SOURCE.replace("        ", "\t\t").replace("    ", "\t")
    old = '    if name:\n        print("hello", name)\n'
    new = '    if name:\n        print("hi", name)\n   odd(name)\n'
    assert refused(core, workspace, source, old, new).kind == "no_match"


def test_nothing_is_forgiven_over_a_file_changed_since_the_read(
    core: Readkeeper, workspace: Path
) -> None:
    path = workspace / "m.py"
    path.write_text(SOURCE)
    calls.call(core, "read", {"file_path": "m.py"})
    path.write_text(SOURCE.replace("    return name", "    return name  # changed"))
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(
            core,
            "edit",
            {
                "file_path": "m.py",
                "old_string": 'if name:\n    print("hello", name)\n',
                "new_string": 'if name:\n    print("hi", name)\n',
            },
        )
    assert caught.value.kind in {"no_match", "stale"}
    assert "hello" in path.read_text()


def test_a_batch_pair_is_forgiven_and_said_by_index(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_text(SOURCE)
    calls.call(core, "read", {"file_path": "m.py"})
    result = calls.call(
        core,
        "edit",
        {
            "file_path": "m.py",
            "edits": [
                {"old_string": "      return 2\n", "new_string": "      return 3\n"},
                {"old_string": "def greet(name):", "new_string": "def greet(who):"},
            ],
        },
    )
    assert "edits[0]" in result["note"]
    assert path.read_text().endswith("    return 3\n")


def test_the_tail_of_an_indented_line_gives_its_indentation_to_new_lines(
    core: Readkeeper, workspace: Path
) -> None:
    old = "return name\n"
    new = "log(name)\nreturn name\n"
    result, text = edit(core, workspace, SOURCE, old, new)
    assert "    log(name)\n    return name\n" in text
    assert "indentation" in result["note"]
    # Without new lines to indent, an exact tail match is Python's replacement.
    _, text = edit(core, workspace, SOURCE, "return 2\n", "return 3\n")
    assert text.endswith("    return 3\n")
