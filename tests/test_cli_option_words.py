"""A read's option that a note names in the other front ends' words (`symbol="x"`,
`include_images=true`, `force=true`, `(offset=1054).`) is said on the command line as
its flag, a value as one shell word nothing expands (attack round 24, finding 4's
siblings: the notebook's and the outline's notes named no command)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import warm_server
from document_samples import notebook_with_plots

from readkeeper.cli import build_parser
from readkeeper.hints import again, answering, call, for_cli

# A read's options as the core's notes write them.
WRITTEN = re.compile(r"\b(offset|limit|pages|symbol|line_format|include_images|force|render)=")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_a_notebooks_placeholder_names_the_flag_that_shows_its_images(workspace: Path) -> None:
    (workspace / "plots.ipynb").write_text(json.dumps(notebook_with_plots(200_000)))
    done = run("read", "plots.ipynb", cwd=workspace)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert not WRITTEN.search(said), said
    assert "--include-images" in said
    shown = run("read", "plots.ipynb", "--include-images", cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    assert "size placeholder" not in shown.stdout


def test_an_outlines_note_names_flags(workspace: Path) -> None:
    source = "".join(f"def func_{i}(x):\n    return x + {i}\n\n" for i in range(3000))
    (workspace / "big.py").write_text(source)
    done = run("read", "big.py", cwd=workspace)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "outline" in said
    assert not WRITTEN.search(said), said
    assert "--symbol func_0" in said
    assert "--force" in said
    assert re.search(r"\(`readkeeper read big.py --offset \d+`\)", said), said
    symbol = run("read", "big.py", "--symbol", "func_0", cwd=workspace)
    assert symbol.stdout.splitlines() == ["     1\tdef func_0(x):", "     2\t    return x + 0"]


def test_a_quoted_value_is_one_shell_word_nothing_expands() -> None:
    # As the core writes them (hints.again), one run of options as one run of flags.
    pages = again(pages="3-4", line_format="anchors")
    written = f"Read a symbol with {again(symbol='$x`y`')} or {pages}."
    said = for_cli(written)
    # Its backticks as bash's $'\x60' (raw, one would end the span a command is set in).
    assert "--symbol $'$x\\x60y\\x60'" in said, said
    assert "--pages 3-4 --line-format anchors." in said
    flags = said.split("with ", 1)[1].split(" or")[0]
    shown = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {flags}"], capture_output=True, text=True, check=True
    )
    assert shown.stdout.splitlines() == ["--symbol", "$x`y`"]
    # A quoted name, not an option's value, is left as it is.
    assert for_cli('The file "a=b" is there.') == 'The file "a=b" is there.'


def test_a_grep_cut_short_names_its_flags(workspace: Path) -> None:
    (workspace / "m.txt").write_text("".join(f"match {i}\n" for i in range(400)))
    done = run("grep", "match", "m.txt", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert "--max-matches" in done.stderr
    assert "--offset 100" in done.stderr
    assert not WRITTEN.search(done.stderr), done.stderr
    assert "max_matches" not in done.stderr


def test_only_a_run_again_wrote_is_said_as_flags() -> None:
    # A run's string value may hold what ends a run elsewhere (", ", a quote, "=").
    run = again(symbol='a, b="c"', limit=3)
    written = f"Read it with {run}."
    assert for_cli(written) == "Read it with --symbol 'a, b=\"c\"' --limit 3."
    # What no `again` wrote is left as it is: a value that is none it writes, a name.
    for left in ("see offset=5.txt now", "offset=[1] is no value", "the file a/limit=3"):
        assert for_cli(left) == left
    # A run ends where its options end: the prose after it stays prose.
    assert for_cli(f"{again(offset=4)}, then on.") == "--offset 4, then on."


def test_a_positional_or_a_value_like_an_option_is_still_one() -> None:
    # Round 28: `--out -evil-pages` was refused by the parser; a pattern `-foo` too.
    said = for_cli(call("grep", pattern="-foo", path="-dir", max_matches=3))
    [command] = re.findall(r"`(readkeeper [^`]*)`", said)
    parsed = build_parser().parse_args(shlex.split(command)[1:])
    assert (parsed.pattern, parsed.path, parsed.max_matches) == ("-foo", "-dir", 3)
    said = for_cli(call("read", file_path="/w/a.pdf", pages="1", render=True, out="-x"))
    [command] = re.findall(r"`(readkeeper [^`]*)`", said)
    assert build_parser().parse_args(shlex.split(command)[1:]).out == "-x"


def test_the_rest_of_a_cut_search_is_a_whole_command_that_runs(workspace: Path) -> None:
    # Round 29: "the rest: --offset 100" was flags alone, to append to a command that
    # may end in `--`; now the command itself, each option as the CLI takes it.
    (workspace / "f.txt").write_text("".join(f"-x {n}\n" for n in range(30)))
    done = run("grep", "-i", "--max-matches", "5", "--", "-X", ".", cwd=workspace)
    assert done.returncode == 0, done.stderr
    commands = re.findall(r"`(readkeeper grep [^`]*)`", done.stderr)
    assert len(commands) == 1, done.stderr
    [command] = commands
    words = shlex.split(command)
    assert {"--offset", "--ignore-case"} <= set(words), command
    assert not {"--output", "--case-sensitive"} & set(words), command
    again = run(*words[1:], cwd=workspace)
    assert again.returncode == 0, again.stderr
    assert "f.txt:6:-x 5" in again.stdout, again.stdout
    (workspace / "big.txt").write_text("".join(f"{n}\n" for n in range(2100)))
    read = run("read", "big.txt", cwd=workspace)
    [command] = re.findall(r"`(readkeeper read [^`]*)`", read.stderr)
    assert shlex.split(command)[2:] == ["big.txt", "--offset", "2001"], command


def test_a_dashed_word_that_needs_quotes_is_still_one() -> None:
    # Round 30: the check for a leading `-` looked at the shell word, which begins with
    # a quote when the value needs quoting (`'-?x'`), so the command was refused.
    said = for_cli(call("grep", pattern="-?x", path="-q$x", glob="-q*", max_matches=3))
    [command] = re.findall(r"`(readkeeper [^`]*)`", said)
    parsed = build_parser().parse_args(shlex.split(command)[1:])
    assert (parsed.pattern, parsed.path, parsed.glob) == ("-?x", "-q$x", "-q*")
    said = for_cli(call("read", file_path="doc.md", symbol="-top$.-q$pad0"))
    [command] = re.findall(r"`(readkeeper [^`]*)`", said)
    assert build_parser().parse_args(shlex.split(command)[1:]).symbol == "-top$.-q$pad0"


def test_the_rest_of_a_file_named_like_an_option_runs_as_printed(workspace: Path) -> None:
    (workspace / "-q$x.txt").write_text("".join(f"l{n}\n" for n in range(2100)))
    first = run("read", "--", "-q$x.txt", cwd=workspace)
    assert first.returncode == 0, first.stderr
    [command] = re.findall(r"`(readkeeper read [^`]*)`", first.stderr)
    again = run(*shlex.split(command)[1:], cwd=workspace)
    assert again.returncode == 0, again.stderr
    assert "l2000" in again.stdout
    assert "l1999\n" not in again.stdout


def test_a_range_over_the_cap_names_the_same_read_with_fewer_lines(workspace: Path) -> None:
    # Round 30: the way on of a range over the token cap was a new call with only the
    # file, its offset and limit: run as printed, it dropped the caller's line format.
    (workspace / "big.txt").write_text("".join(f"word {n} " * 8 + "\n" for n in range(4000)))
    first = run("read", "big.txt", "--limit", "4000", "--line-format", "anchors", cwd=workspace)
    assert first.returncode != 0
    assert "token_limit" in first.stderr, first.stderr
    [command] = re.findall(r"`(readkeeper read [^`]*)`", first.stderr)
    words = shlex.split(command)
    assert words[words.index("--line-format") + 1] == "anchors", command
    again = run(*words[1:], cwd=workspace)
    assert again.returncode == 0, again.stderr
    assert re.match(r"1[a-z]{2}\tword 0 ", again.stdout), again.stdout[:300]


def test_a_read_from_an_offset_names_the_lines_after_it(workspace: Path) -> None:
    # Round 30: the way on of a cut read, run as printed, showed the next 2,000 lines
    # and said nothing of the rest.
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(5000)))
    second = run("read", "big.txt", "--offset", "2001", cwd=workspace)
    assert second.returncode == 0, second.stderr
    assert "Showing lines 2001-4000 of 5000" in second.stderr, second.stderr
    [command] = re.findall(r"`(readkeeper read [^`]*)`", second.stderr)
    assert shlex.split(command)[2:] == ["big.txt", "--offset", "4001"], command
    third = run(*shlex.split(command)[1:], cwd=workspace)
    assert third.returncode == 0, third.stderr
    assert third.stdout.rstrip().endswith("line 4999")
    assert "Continue" not in third.stderr


def test_a_run_naming_a_range_or_a_symbol_drops_the_other() -> None:
    with answering("read", {"file_path": "a.py", "symbol": "Reader", "line_format": "anchors"}):
        said = for_cli(f"Continue with {again(offset=40, limit=20)}.")
    [command] = re.findall(r"`(readkeeper [^`]*)`", said)
    words = shlex.split(command)
    assert "--symbol" not in words, command
    assert {"--offset", "--limit", "--line-format"} <= set(words), command
    with answering("read", {"file_path": "a.py", "offset": 3, "limit": 9}):
        said = for_cli(f"Read it by name: {again(symbol='Reader.read')}.")
    [command] = re.findall(r"`(readkeeper [^`]*)`", said)
    assert shlex.split(command)[2:] == ["a.py", "--symbol", "Reader.read"], command
