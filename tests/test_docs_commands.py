"""The README's and the docs' commands work as written, in a fresh clone.

A shell block marked `<!-- run: clone -->` on the line above it is a promise that it
runs as written from the root of a fresh clone. This test makes that clone (`git
clone` of this repository's committed HEAD: commit before running it to test your
working tree's pages), then runs each marked block once, in order (the README's first,
then the docs' pages by path), with bash in strict mode, the clone's `.venv/bin` first on
PATH (the pages say so where a command relies on it) and no READKEEPER_* variable set.
The README's first command, the one that installs readkeeper and runs `readkeeper
demo`, must be among them.

It installs the project and its dependencies from the package index into the clone's
own `.venv`, as a newcomer does: minutes on a cold pip cache, so it is slow, and it
needs `git`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- run: clone -->"
_BLOCK = re.compile("^" + re.escape(MARK) + r"\n```(?:sh|bash)\n(.*?)\n```", re.DOTALL | re.M)
FIRST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/readkeeper demo"
STEP_TIMEOUT_S = 600


def runnable_blocks() -> list[tuple[str, str]]:
    """(page, block) for every marked block: the README's first, then docs/ by path;
    a block marked on two pages is run once."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for page in pages:
        for block in _BLOCK.findall(page.read_text(encoding="utf-8")):
            if block not in seen:
                seen.add(block)
                found.append((page.relative_to(ROOT).as_posix(), block))
    return found


def test_the_readme_marks_its_first_command_runnable() -> None:
    blocks = runnable_blocks()
    assert blocks[0] == ("README.md", FIRST_COMMAND), blocks[:1]
    # Every marked block is a shell block right under its mark (a mark above prose or
    # another language would be skipped silently).
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        text = page.read_text(encoding="utf-8")
        marks = re.findall(f"^{re.escape(MARK)}$", text, flags=re.MULTILINE)
        assert len(marks) == len(_BLOCK.findall(text)), page


@pytest.mark.ci_required
@pytest.mark.timeout(2400)  # a cold pip cache downloads every dependency
def test_the_marked_commands_run_as_written_in_a_fresh_clone(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs `git` and a git checkout of readkeeper to clone")
    clone = tmp_path / "readkeeper"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)],
        check=True,
        capture_output=True,
        timeout=STEP_TIMEOUT_S,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    env["PATH"] = f"{clone / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    outputs: dict[str, str] = {}
    for page, block in runnable_blocks():
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
        )
        assert ran.returncode == 0, (
            f"{page}: this block exited with {ran.returncode}:\n{block}\n"
            f"--- stdout\n{ran.stdout[-3000:]}\n--- stderr\n{ran.stderr[-3000:]}"
        )
        outputs[block] = ran.stdout
    demo = outputs[FIRST_COMMAND]
    # The demo played its session against the real server: the stub of a re-read and
    # the caught stale edit are in what it printed.
    assert "file_unchanged" in demo, demo[-3000:]
    assert "stale" in demo, demo[-3000:]
