"""`readkeeper read --render` (attack round 21, finding 5): the pages were drawn into
the command's own folder, removed when it exits, and the note named `readkeeper/read`
(the LSP method). Now the pages are copied where `--out` says, `--render` without it
is refused naming the command that works, and every next step is a CLI command."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from document_samples import numbered_pdf
from PIL import Image

READKEEPER = [sys.executable, "-m", "readkeeper"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*READKEEPER, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


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
