"""grep shows a file's line as a read and a diff show it (quoting.text_line): a line
break but LF and a cut marker's `[` escaped, format characters (U+200D, U+00A0, the
bidirectional controls) and other controls as the file has them; and, as a read's note
does, its note names the lines shown with an escape, so a file's own `\\r` or `\\x5b`
is told from readkeeper's (attack round 24: grep showed a U+200D and a file's literal
`\\u200d` alike, with no note; reads and diffs showed it raw)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import text_file
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.read.diffs import bounded_diff
from readkeeper.search import shown

LINES = [
    "KEY = 'a\u200db'",  # 1: a joiner, the file's
    "KEY = 'a\\u200db'",  # 2: the text `\u200d`, the file's
    "KEY = 'x\u00a0y' \u202e",  # 3: a no-break space and a bidi override
    "KEY = 'c\rd'",  # 4: a lone CR: escaped
    "KEY = 'c\\rd'",  # 5: the text `\r`
    "KEY [line cut: 3]",  # 6: a cut marker's look: escaped
    "KEY \x1b[31m\tred",  # 7: a terminal escape and a tab, the file's
]
ESCAPED = [4, 6]


def test_grep_a_read_and_a_diff_show_every_line_alike(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "z.py"
    path.write_text("\n".join(LINES) + "\n", newline="")
    read = [row.split("\t", 1)[1] for row in str(text_file(core, path)["content"]).split("\n")]
    found = calls.call(core, "grep", {"pattern": "KEY", "path": str(path)})
    grep = [row.split(":", 2)[2] for row in shown.lines("grep", found)]
    diff = bounded_diff("".join(f"{ln}\n" for ln in LINES), "", str(path))[0]
    removed = [row[1:] for row in diff.split("\n") if row.startswith("-") and row[1:2] != "-"]
    assert grep == read == removed
    assert grep[0] != grep[1]  # a joiner is not the text `\u200d`
    assert grep[2] == LINES[2]
    assert grep[6] == LINES[6]
    assert grep[3] == grep[4] == "KEY = 'c\\rd'"  # alike: the note tells them apart
    note = str(shown.escapes_note("grep", found))
    assert note.startswith(f"Lines {path}:4, {path}:6 hold text shown escaped")


async def test_mcp_grep_names_the_lines_it_shows_escaped(workspace: Path) -> None:
    (workspace / "z.py").write_text("\n".join(LINES) + "\n", newline="")
    runtime = private_runtime_dir()
    async with stdio_client(["--root", str(workspace), "--standalone"], mcp_env(runtime)) as client:
        said = text_of(await client.call_tool("grep", {"pattern": "KEY", "path": "z.py"}))
        read = text_of(await client.call_tool("read", {"file_path": "z.py"}))
    rows = said.split("\n")
    assert [row.split(":", 2)[2] for row in rows[: len(LINES)]] == [
        row.split("\t", 1)[1] for row in read.split("\n")[1 : len(LINES) + 1]
    ]
    held = ", ".join(f"{workspace / 'z.py'}:{n}" for n in ESCAPED)
    assert f"(Lines {held} hold text shown escaped" in said
    assert "Lines 4, 6 hold text shown escaped" in read


def test_the_cli_grep_names_them_on_stderr(workspace: Path) -> None:
    (workspace / "z.py").write_text("\n".join(LINES) + "\n", newline="")
    ran = subprocess.run(
        [sys.executable, "-m", "readkeeper", "grep", "KEY", "z.py"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.stdout.split("\n")[3] == "z.py:4:KEY = 'c\\rd'"
    assert "readkeeper: note: Lines z.py:4, z.py:6 hold text shown escaped" in ran.stderr


def test_the_note_of_escaped_lines_names_long_files_cut(core: Readkeeper, workspace: Path) -> None:
    # The note names up to LISTED files beside the budgeted page: each name is cut in
    # its middle as every name readkeeper echoes is (errors.shown_name), so 20 paths of
    # 3,600 characters cost about 20 x 240, not 20 x 3,600.
    from deep_chain import long_named

    folder = long_named(workspace)
    for n in range(shown.LISTED + 5):
        (folder / f"f{n}.py").write_text("KEY = 'c\rd'\n", newline="")
    found = calls.call(core, "grep", {"pattern": "KEY", "path": str(folder), "max_matches": 50})
    note = str(shown.escapes_note("grep", found))
    named = min(len(found["matches"]), shown.LISTED)  # the token cap may hold fewer
    assert named > 1
    assert note.count("characters cut") == named
    assert len(note) < named * 300 + 600, len(note)
