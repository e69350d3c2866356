"""The drop-in reads a run of options the core wrote (`hints.again`: `offset=501,
limit=200`, the call just answered with them changed) as one token, as the CLI does, and
says it from its params: the whole call of the tool that answered, with them changed
(`read_text_file with {"path": ..., "offset": 501, "head": 200}`); a PDF's pages drawn
as read_media_file's; options the tool that answered lacks as read_text_file's call; an
option no drop-in tool takes (per tools.SCHEMAS) as readkeeper's own, which this server
does not offer. It reworded the runs in prose with regexes after the fact (words.py's
`_LIMIT`, `_DRAWN`, `_UNOFFERED`, `_reader_named`), one form away from wrong each round:
`depth=` and `max_matches=` were passed on as if a tool here took them, a capital "Read
with" kept "read_text_file's" after it, and a run said options alone with no path, for
the agent to guess which call they change."""

from __future__ import annotations

import json
import re
import shutil
import typing
from pathlib import Path
from typing import Any

from mcp_helpers import dropin_client, text_of
from readkeeper.hints import again
from readkeeper.mcp.filesystem.words import error_words, for_filesystem

_NOT_OFFERED = "this server does not offer it"
_CALL = re.compile(r"\b(read_text_file|read_media_file|read_file) with (?=\{)")


def _calls(said: str) -> list[tuple[str, dict[str, Any]]]:
    """Each `TOOL with {...}` the answer names, as written."""
    found = []
    for match in _CALL.finditer(said):
        args, _ = json.JSONDecoder().raw_decode(said, match.end())
        found.append((match.group(1), args))
    return found


def test_a_run_is_said_as_the_whole_call_that_answered() -> None:
    read = {"path": "a.py", "head": 50}
    said = for_filesystem(
        f"Continue with {again(offset=51, limit=200)}.", (), "read_text_file", read
    )
    assert said == 'Continue with read_text_file with {"path": "a.py", "head": 200, "offset": 51}.'
    # Its other arguments kept, as the core's call kept them: a forced resend of a range.
    said = for_filesystem(f"({again(force=True)} resends)", (), "read_text_file", read)
    assert said == '(read_text_file with {"path": "a.py", "head": 50, "force": true} resends)'


def test_a_run_at_a_sentences_end_after_a_bracket_and_a_capital_read() -> None:
    media = {"path": "n.ipynb"}
    said = for_filesystem(f"Read it ({again(offset=5, limit=9)}).", (), "read_media_file", media)
    assert said == 'Read it (read_text_file with {"path": "n.ipynb", "offset": 5, "head": 9}).'
    said = for_filesystem(f"Read with {again(force=True)} for the whole file.", (), "read_file", {})
    assert said == "Read with force=true for the whole file.", said  # no path: the options
    said = for_filesystem(
        f'Read "a.py" with {again(force=True)} again.', (), "read_multiple_files", {"path": "a.py"}
    )
    assert said == 'Read "a.py" with read_text_file with {"path": "a.py", "force": true} again.'


def test_a_string_value_holding_option_words_is_one_value() -> None:
    for name in ("f, limit=3", "g, render=true", 'h", pages="2'):
        read = {"path": "m.py", "offset": 3, "tail": 4}
        said = for_filesystem(f"Read one with {again(symbol=name)}.", (), "read_text_file", read)
        # A symbol read takes no range: the call's offset and tail are dropped.
        assert _calls(said) == [("read_text_file", {"path": "m.py", "symbol": name})], said
        assert "head" not in said, said
        assert "read_media_file" not in said, said


def test_a_range_after_a_tail_read_names_head_never_both() -> None:
    tail = {"path": "big.txt", "tail": 30}
    said = for_filesystem(f"From the top: {again(offset=1)}.", (), "read_text_file", tail)
    assert _calls(said) == [("read_text_file", {"path": "big.txt", "head": 30, "offset": 1})]


def test_drawn_pages_are_read_media_files_with_the_path() -> None:
    said = for_filesystem(
        f"the rest: {again(pages='3-4', render=True)}.", (), "read_text_file", {"path": "d.pdf"}
    )
    assert said == 'the rest: read_media_file with {"path": "d.pdf", "pages": "3-4"}.'


def test_an_option_no_tool_here_takes_is_said_as_not_offered_by_the_schemas() -> None:
    # depth and max_matches were passed on as written: a hard-coded list named two.
    for run, tool, method in [
        (again(depth=3), "directory_tree", "list"),
        (again(max_matches=50), "search_files", "glob"),
        (again(offset=10, line_format="anchors"), "read_text_file", "read"),
        (again(estimate=True), "read_multiple_files", "read"),
    ]:
        said = for_filesystem(f"More with {run}.", (), tool, {"path": "x"})
        assert said.startswith(f"More with {run.replace('limit=', 'head=')} (an option of "), said
        assert f"readkeeper's {method}, a tool of `readkeeper mcp`" in said, said
        assert _NOT_OFFERED in said, said
        assert " with {" not in said, said


def test_a_run_in_an_edit_file_error_is_read_text_files_call() -> None:
    args = {"path": "e.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": True}
    said, _ = error_words(
        "edit_file", args, f"The text is near line 3: {again(offset=3, limit=2)}.", {}, None
    )
    assert said == (
        'The text is near line 3: read_text_file with {"path": "e.txt", "offset": 3, "head": 2}.'
    )


async def test_every_call_a_run_is_said_as_works_as_written(workspace: Path) -> None:
    # read_multiple_files' entries: each run is read_text_file's call on the entry's own
    # path; read_text_file's cut read and a symbol not found; each made as written.
    lines = "".join(f"line {n} of the text\n" for n in range(1, 3001))
    (workspace / "big.txt").write_text(lines)
    shutil.copy(typing.__file__, workspace / "outline.py")
    big, outline = str(workspace / "big.txt"), str(workspace / "outline.py")
    async with dropin_client(workspace) as client:
        answers = [
            text_of(await client.call_tool("read_multiple_files", {"paths": [big, outline]})),
            text_of(await client.call_tool("read_multiple_files", {"paths": [outline]})),
            text_of(await client.call_tool("read_text_file", {"path": "big.txt"})),
            text_of(await client.call_tool("read_text_file", {"path": "outline.py", "tail": 2})),
            text_of(
                await client.call_tool("read_text_file", {"path": "outline.py", "symbol": "cas"})
            ),
        ]
        # Every call named, the note's for a file over the budget too (it named a
        # placeholder, `{"path": "<file>"}`, before round 33).
        made = [c for said in answers for c in _calls(said)]
        paths = {args["path"] for _, args in made}
        assert {big, outline, "big.txt", "outline.py"} <= paths, answers
        assert any("symbol" in args for _, args in made), answers
        assert any(args.get("offset", 0) > 1 for _, args in made), answers
        for tool, args in made:
            result = await client.call_tool(tool, args)
            assert not result.is_error, f"{tool} {args}: {text_of(result)[:300]}"
            if args.get("offset", 0) > 1 and args["path"].endswith("big.txt"):
                shown = text_of(result)  # the lines, or a stub of them read already
                assert f"line {args['offset']} of the text" in shown or (
                    f"Lines {args['offset']}-" in shown
                ), shown


def test_a_pdfs_pages_continued_from_read_media_file_are_drawn_and_its_text_is_not() -> None:
    # read_media_file's pages are drawn: the pages after those it drew go on drawn (round
    # 35, E1: they were named as read_text_file's, whose text pages without a text layer
    # lack); a page's text (render false) is read_text_file's.
    args = {"path": "d.pdf"}
    said = for_filesystem(f"continue with {again(pages='21-30')}.", (), "read_media_file", args)
    assert said == 'continue with read_media_file with {"path": "d.pdf", "pages": "21-30"}.'
    text = again(pages="4", render=False)
    said = for_filesystem(f"read its text with {text}.", (), "read_media_file", args)
    assert said.startswith('read its text with read_text_file with {"path": "d.pdf"'), said
    assert '"pages": "4"' in said, said


def test_the_calls_path_is_repeated_whole() -> None:
    # The caller's own path, as it sent it: a long one cut in the middle, or one whose
    # cut-marker words were escaped, named no file when followed (outside round 33).
    for path in ("/w/a[12 characters cut].txt", "/w/" + "a" * 3000):
        said = for_filesystem(f"x {again(offset=3)}.", (), "read_text_file", {"path": path})
        assert json.loads(said[len("x read_text_file with ") : -1])["path"] == path, said


async def test_a_range_of_cut_lines_names_the_rest_to_the_end(workspace: Path) -> None:
    # Lines past the line cap are cut and the core's note says so: that note took the
    # place of "the rest", and a crawl of 300 long lines stopped at line 60 (round 33).
    (workspace / "ll.txt").write_text("".join(f"{i} " + "x" * 2500 + "\n" for i in range(1, 301)))
    seen: list[int] = []
    async with dropin_client(workspace) as client:
        args: dict[str, object] = {"path": "ll.txt", "offset": 1, "head": 10}
        for _ in range(80):
            said = text_of(await client.call_tool("read_text_file", args))
            seen += [int(line.split(" ")[0]) for line in said.split("\n") if line[:1].isdigit()]
            if "the rest: read_text_file with " not in said:
                break
            args = json.loads(said.split("the rest: read_text_file with ")[1].split(")")[0])
    assert seen == list(range(1, 301)), seen[-5:]
