"""The CLI never prints a traceback (attack round 27): a fault of readkeeper's is one line,
`readkeeper: internal: ...`, and exit status 2 (docs/cli.md); a notebook with an integer
past Python's limit is read as its text; one with a NUL byte is refused naming no read,
its NUL escaped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

READKEEPER = [sys.executable, "-m", "readkeeper"]
CELL = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": []}
NOTEBOOK = {"cells": [{**CELL, "source": ["x=1\n"]}], "metadata": {}, "nbformat": 4}


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=60)


def test_a_fault_is_one_line_and_status_2(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    faulty = (
        "import sys\n"
        "from readkeeper import core\n"
        "def boom(*args, **kwargs):\n"
        "    raise RuntimeError('nobody foresaw this')\n"
        "core.Readkeeper.read = boom\n"
        "from readkeeper.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    for extra in ((), ("--json",)):
        done = _run(tmp_path, sys.executable, "-c", faulty, "read", "a.py", *extra)
        assert done.returncode == 2, done
        assert "Traceback" not in done.stderr, done.stderr
        if extra:
            said = json.loads(done.stdout)["error"]
            assert said["data"]["kind"] == "internal", said
        else:
            assert done.stderr.startswith("readkeeper: internal: "), done.stderr
            assert "(RuntimeError: " in done.stderr, done.stderr
            assert "nobody foresaw this" in done.stderr
            assert done.stderr.count("\n") == 1, done.stderr


def test_a_notebook_with_a_huge_integer_is_read_as_its_text(tmp_path: Path) -> None:
    text = json.dumps(NOTEBOOK).replace('"nbformat": 4', '"nbformat": 4, "n": 9' + "9" * 4400)
    (tmp_path / "big.ipynb").write_text(text)
    done = _run(tmp_path, *READKEEPER, "read", "big.ipynb")
    assert done.returncode == 0, done
    assert "Traceback" not in done.stderr
    assert "is not a valid notebook" in done.stderr, done.stderr


def test_a_notebook_with_a_nul_byte_is_refused_naming_no_read(tmp_path: Path) -> None:
    (tmp_path / "nul.ipynb").write_text(json.dumps(NOTEBOOK).replace("x=1", "x=\x001"))
    done = _run(tmp_path, *READKEEPER, "read", "nul.ipynb")
    assert done.returncode == 2, done
    assert done.stderr.startswith("readkeeper: corrupt: "), done.stderr
    assert "\x00" not in done.stderr
    assert "readkeeper read" not in done.stderr, done.stderr
    assert "Ask the user to repair it" in done.stderr, done.stderr
