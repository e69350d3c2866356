"""`readkeeper read --render` (attack round 21, finding 5): the pages were drawn into
the command's own folder, removed when it exits, and the note named `readkeeper/read`
(the LSP method). Now the pages are copied where `--out` says, `--render` without it
is refused naming the command that works, and every next step is a CLI command."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import threading
from pathlib import Path

import pytest
import warm_server
from document_samples import numbered_pdf
from PIL import Image

from readkeeper import cli_media, quoting
from readkeeper.errors import ReadkeeperError


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        warm_server.command(*args), cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_render_without_out_names_the_command_that_keeps_the_pages(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(2, lines=3))
    refused = run("read", "doc.pdf", "--pages", "1", "--render", cwd=workspace)
    assert refused.returncode == 2
    assert "readkeeper/" not in refused.stderr
    assert "`readkeeper read doc.pdf --pages 1 --render --out doc-pages`" in refused.stderr
    # The command it names works, and the pages are there after it exits.
    done = run("read", "doc.pdf", "--pages", "1", "--render", "--out", "doc-pages", cwd=workspace)
    assert done.returncode == 0, done.stderr
    page = workspace / "doc-pages" / "page-0001.png"
    assert str(page) in done.stdout
    assert Image.open(page).size[0] > 0
    assert "readkeeper/" not in done.stdout
    assert "image viewer" in done.stdout


def test_a_render_cut_short_goes_on_with_a_cli_command(workspace: Path) -> None:
    (workspace / "long.pdf").write_bytes(numbered_pdf(22, lines=1))
    done = run("read", "long.pdf", "--pages", "1-22", "--render", "--out", "o", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert "`readkeeper read long.pdf --pages 21-22 --render --out o`" in done.stdout
    assert "render=true" not in done.stdout
    assert "readkeeper/" not in done.stdout
    text = run("read", "long.pdf", "--pages", "1-22", cwd=workspace)
    assert "pages=" not in text.stdout  # the head's `continue with pages=...` is no flag
    assert "readkeeper/" not in text.stdout + text.stderr


def test_a_refusal_sending_to_the_pages_as_images_names_the_out_folder(workspace: Path) -> None:
    from document_samples import image_only_pdf

    (workspace / "scan.pdf").write_bytes(image_only_pdf(1))
    refused = run("read", "scan.pdf", "--pages", "1", cwd=workspace)
    assert refused.returncode == 2
    named = re.findall(r"`(readkeeper read [^`]*)`", refused.stderr)
    assert named, refused.stderr
    assert named[0].endswith(" --pages 1 --render --out scan-pages"), named
    done = run(*shlex.split(named[0])[1:], cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / "scan-pages" / "page-0001.png").is_file()


def _refusal(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("readkeeper: bad_params: "), done.stderr
    return done.stderr


def _litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*"))


def test_an_out_that_is_a_file_is_refused_before_the_read(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(1, lines=1))
    (workspace / "notes").write_text("mine\n")
    said = _refusal(
        run("read", "doc.pdf", "--pages", "1", "--render", "--out", "notes", cwd=workspace)
    )
    assert "notes" in said
    assert "not a folder" in said
    assert "`readkeeper read doc.pdf --pages 1 --render --out doc-pages`" in said
    assert (workspace / "notes").read_text() == "mine\n"


def test_a_page_name_taken_in_out_is_never_replaced_nor_littered(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(2, lines=1))
    for taken in ("file", "folder"):
        out = workspace / f"out-{taken}"
        out.mkdir()
        if taken == "file":
            (out / "page-0002.png").write_text("USER PNG")
        else:
            (out / "page-0002.png").mkdir()
        for _ in range(2):  # a retry leaves nothing either
            said = _refusal(
                run(
                    "read",
                    "doc.pdf",
                    "--pages",
                    "1-2",
                    "--render",
                    "--out",
                    out.name,
                    cwd=workspace,
                )
            )
            assert "page-0002.png" in said
            assert "not replaced" in said
            named = re.findall(r"`(readkeeper read [^`]*)`", said)
            assert named == ["readkeeper read doc.pdf --pages 1-2 --render --out doc-pages"], said
        # Nothing written: not the page before the one taken, no temp file.
        assert sorted(p.name for p in out.iterdir()) == ["page-0002.png"]
        assert _litter(out) == []
        if taken == "file":
            assert (out / "page-0002.png").read_text() == "USER PNG"
    done = run(*shlex.split(named[0])[1:], cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (workspace / "doc-pages").iterdir()) == [
        "page-0001.png",
        "page-0002.png",
    ]


def test_the_next_step_names_a_folder_not_there(workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(numbered_pdf(1, lines=1))
    (workspace / "doc-pages").mkdir()
    (workspace / "doc-pages" / "page-0001.png").write_text("USER PNG")
    said = _refusal(
        run("read", "doc.pdf", "--pages", "1", "--render", "--out", "doc-pages", cwd=workspace)
    )
    assert "`readkeeper read doc.pdf --pages 1 --render --out doc-pages-2`" in said
    done = run("read", "doc.pdf", "--pages", "1", "--render", "--out", "doc-pages-2", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / "doc-pages" / "page-0001.png").read_text() == "USER PNG"


def test_json_keeps_the_pages_in_out_too(workspace: Path) -> None:
    import json

    (workspace / "doc.pdf").write_bytes(numbered_pdf(1, lines=1))
    done = run("read", "doc.pdf", "--pages", "1", "--render", "--out", "o", "--json", cwd=workspace)
    assert done.returncode == 0, done.stderr
    page = workspace / "o" / "page-0001.png"
    assert json.loads(done.stdout)["file"]["pages"] == [str(page)]
    assert Image.open(page).size[0] > 0
    again = run(
        "read", "doc.pdf", "--pages", "1", "--render", "--out", "o", "--json", cwd=workspace
    )
    assert again.returncode == 2
    assert json.loads(again.stdout)["error"]["data"]["kind"] == "bad_params"


@pytest.mark.parametrize("swap", ["folder", "file"])
def test_a_failed_copy_removes_only_the_pages_it_wrote_and_says_what_it_left(
    workspace: Path, swap: str
) -> None:
    """A page fails to copy after others were written; one written before was replaced
    meanwhile (by a folder: its removal fails; by the user's own file: not the command's
    to remove). Real files, a real swap: the second page's source is a FIFO the copy
    blocks on until the test has swapped the first page, and the third's is gone."""
    drawn = workspace / "drawn"
    drawn.mkdir()
    (drawn / "page-0001.png").write_bytes(b"PNG 1")
    os.mkfifo(drawn / "page-0002.png")
    pages = [str(drawn / f"page-000{n}.png") for n in (1, 2, 3)]  # the third is not there
    out = workspace / "out"
    args = argparse.Namespace(path="doc.pdf", pages="1-3", render=True, out=str(out))
    caught: list[BaseException] = []

    def copy() -> None:
        try:
            cli_media.kept_pages({"pages": pages}, args)
        except BaseException as exc:  # what the command would meet, kept for the test
            caught.append(exc)

    copying = threading.Thread(target=copy)
    copying.start()
    writer = os.open(drawn / "page-0002.png", os.O_WRONLY)  # returns once the copy reads
    first = out / "page-0001.png"
    first.unlink()
    if swap == "folder":
        first.mkdir()
    else:
        first.write_text("USER FILE")
    os.close(writer)  # the second page ends (empty), then the third is not there
    copying.join(timeout=60)
    assert not copying.is_alive()
    [refused] = caught
    assert isinstance(refused, ReadkeeperError), repr(refused)
    assert refused.kind == "bad_params"
    assert refused.message.startswith(
        f"the pages could not be written into {quoting.name(str(out))} (No such file or "
        "directory); of the pages it wrote, it left 1: "
        f"{quoting.name(str(first))} (no longer the page it wrote: not removed)"
    ), refused.message
    # The page it wrote and still held is removed; the one swapped in is left as it is.
    assert sorted(p.name for p in out.iterdir()) == ["page-0001.png"]
    if swap == "folder":
        assert first.is_dir()
    else:
        assert first.read_text() == "USER FILE"
