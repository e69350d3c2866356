"""Commands readkeeper suggests never run what a file's name says: a name goes into a
command as a word a POSIX shell takes literally (quoting.shell_word, hints' CLI words),
or is left out (FILE) when it cannot stand on one line. JSON's double quotes, which
names in readkeeper's sentences use, would let `$(...)` run in a shell."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from image_bombs import png_bomb

from helpers import refused
from readkeeper.core import Readkeeper
from readkeeper.hints import call, for_cli
from readkeeper.quoting import shell_word

HOSTILE = [
    "x$(touch pwned).png",
    "x`touch pwned`.png",
    "a b;touch pwned.png",
    "it's.png",
    "-write.png",
    "~root.png",
    "=touch.png",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_is_one_literal_shell_word(name: str, tmp_path: Path) -> None:
    word = shell_word(name)
    [taken] = shlex.split(word)
    assert taken in (name, "./" + name)
    # A real shell, given the word, hands the program exactly that name and runs nothing.
    out = subprocess.run(
        ["sh", "-c", f"printf %s {word}"], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.stdout in (name, "./" + name)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("name", ["a\nkind: ok.png", "a\u202eb.png", "tab\there.png"])
def test_a_name_that_cannot_stand_on_one_line_is_left_out(name: str) -> None:
    assert shell_word(name) == "FILE"


def test_an_images_refusal_says_what_to_do_in_words_and_names_no_command(
    core: Readkeeper, workspace: Path
) -> None:
    # It named `magick NAME -resize ...`: a next step is never a shell command (attack
    # round 24): the user is asked for a smaller copy, in words.
    name = "x$(touch pwned).png"
    (workspace / name).write_bytes(png_bomb())
    error = refused(core, name)
    assert error.kind == "too_large"
    assert "`" not in error.message
    assert "magick" not in error.message
    assert "image tool" in error.message


def test_a_cli_hint_quotes_for_the_shell_and_never_breaks_its_line() -> None:
    hint = for_cli("Read it: " + call("read", file_path="a$(b).py", offset=3))
    assert "'a$(b).py'" in hint
    broken = for_cli("Read it: " + call("read", file_path="a\nkind: ok", offset=3))
    assert "\n" not in broken
    assert "FILE_PATH" in broken
