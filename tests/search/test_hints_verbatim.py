"""Each front end says readkeeper's next calls and params in its own words (hints.py,
the drop-in's words.py), and only those: a file's text a message shows (a `stale`
diff, a `no_match`'s closest lines, errors.CONTENT_FIELDS) and every name, quoted or
bare, reach the agent exactly as they are (attack round 20, A29 and A15)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from readkeeper import quoting
from readkeeper.errors import ReadkeeperError, shown_content
from readkeeper.hints import call, for_cli, for_mcp
from readkeeper.mcp.filesystem.words import error_words, for_filesystem
from readkeeper.mcp.tools import METHOD_TOOLS

THEIRS = (
    '+  "file_path": "/etc/x", "old_string": "keep me", limit=3, readkeeper/read {"file_path": "x"}'
)
NAMES = ('/w/a"file_path"b.txt', "/w/x readkeeper/list", "/w/readkeeper/list", "/w/a,file_path")


def _front_ends(exc: ReadkeeperError) -> dict[str, str]:
    keep = shown_content(exc.data)
    return {
        "mcp": for_mcp(exc.message, METHOD_TOOLS, keep),
        "cli": for_cli(exc.message, keep),
        "dropin": for_filesystem(exc.message, keep),
        "dropin error": error_words("edit_file", {}, exc.message, exc.to_data())[0],
    }


def test_a_diff_in_a_refusal_is_shown_as_it_is_by_every_front_end() -> None:
    path = "/w/a b.json"  # quoted in the message, and named in the diff too
    head = f"--- {quoting.name(path)}\n+++ {quoting.name(path)}\n@@ -1 +1 @@"
    diff = f"{head}\n-x: /w/a b.json\n{THEIRS}"
    exc = ReadkeeperError(
        "stale",
        f"{path} changed, so the write could overwrite someone's work. Read it again "
        f"({call('read', file_path=path)}), then give old_string again. What changed:\n{diff}",
        file_path=path,
        diff=diff,
    )
    assert exc.message.endswith(f"What changed:\n{diff}")  # the core quotes names around it
    said = _front_ends(exc)
    for front, message in said.items():
        assert message.endswith(f"What changed:\n{diff}"), (front, message)
        assert "readkeeper/read {" not in message.split("What changed")[0], (front, message)
    assert 'the read tool with {"file_path": "/w/a b.json"}' in said["mcp"]
    assert "`readkeeper read '/w/a b.json'`" in said["cli"]
    assert (
        'read_text_file with {"path": "/w/a b.json"}), then give oldText again.' in said["dropin"]
    )


def test_a_closest_text_is_shown_as_it_is_by_every_front_end() -> None:
    closest = '   7\t"file_path": "/etc/x", readkeeper/list {"path": "/"}, new_string'
    exc = ReadkeeperError(
        "no_match",
        f"old_string was not found in /w/a.py. The closest text is at line 7:\n{closest}\n"
        "Copy old_string exactly from the file (read again with offset=7, limit=1).",
        file_path="/w/a.py",
        closest=closest,
    )
    for front, message in _front_ends(exc).items():
        assert f"line 7:\n{closest}\nCopy" in message, (front, message)
    assert "Copy oldText exactly" in _front_ends(exc)["dropin"]
    assert "offset=7, head=1" in _front_ends(exc)["dropin"]


def test_a_name_is_never_reworded() -> None:
    for name in NAMES:
        message = (
            f"Cannot write {quoting.name(name)}: file_path is not read. Read it "
            f"({call('read', file_path=name)})."
        )
        shown = quoting.json_text({"file_path": name})
        for said in (
            for_mcp(message, METHOD_TOOLS),
            for_filesystem(message),
            error_words("write_file", {}, message, {})[0],
        ):
            assert said.startswith(f"Cannot write {quoting.name(name)}: "), said
        assert for_mcp(message, METHOD_TOOLS).endswith(f"(the read tool with {shown}).")
        assert for_filesystem(message).endswith(
            f"(read_text_file with {quoting.json_text({'path': name})})."
        )
        assert for_cli(message).startswith(f"Cannot write {quoting.name(name)}: ")


def test_the_cli_names_a_file_that_reads_as_a_call_as_itself(workspace: Path) -> None:
    (workspace / "readkeeper").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "readkeeper", "read", "readkeeper/list"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"File does not exist: {workspace / 'readkeeper' / 'list'}." in done.stderr
    assert f"`readkeeper ls {workspace / 'readkeeper'}`" in done.stderr


def test_a_text_holding_every_private_use_character_is_still_shown_as_it_is() -> None:
    # The rewording sets the file's text aside behind a private-use character the message
    # does not hold; a hostile file's diff can hold all of the BMP's 6,400.
    hostile = "".join(chr(c) for c in range(0xE000, 0xF900))
    header = "--- a.txt (as you read it)\n+++ a.txt (now)\n"
    diff = f'{header}-x\n+{hostile} readkeeper/read {{"file_path": "y"}}\n'
    next_call = call("read", file_path="/w/a.txt")
    exc = ReadkeeperError(
        "stale", f"The file changed:\n{diff}Read it again: {next_call}.", diff=diff
    )
    said = for_mcp(exc.message, METHOD_TOOLS, shown_content(exc.data))
    assert diff in said
    assert said.endswith('Read it again: the read tool with {"file_path": "/w/a.txt"}.')
