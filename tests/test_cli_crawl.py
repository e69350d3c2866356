"""The CLI's ways on followed as written, command after command, to the end of a file
(outside round 33's crawl of the CLI stopped where the drop-in's did): each command the
note names is run as its words say, and the file comes out whole and in order, with the
caller's line format kept, none refused."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

_WAY_ON = re.compile(r"(?:Continue with|the rest:) `(readkeeper [^`]+)`")
_LINE = re.compile(r"^(\d+)(?:[a-z]{2}|--)\t", re.M)


def test_a_files_ways_on_lead_to_its_end(workspace: Path) -> None:
    lines = [f"line {i}" if not 3000 <= i < 3040 else f"{i} " + "y" * 5000 for i in range(1, 6001)]
    (workspace / "mixed.txt").write_text("\n".join(lines) + "\n")
    command = ["readkeeper", "read", "mixed.txt", "--line-format", "anchors"]
    seen: list[int] = []
    for _ in range(40):
        done = subprocess.run(
            [sys.executable, "-m", "readkeeper", *command[1:]],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr[-500:]
        seen += [int(n) for n in _LINE.findall(done.stdout)]
        way = _WAY_ON.search(done.stderr + done.stdout)
        if way is None:
            break
        command = shlex.split(way.group(1))
        assert command[command.index("--line-format") + 1] == "anchors", command
    assert seen == list(range(1, 6001)), (seen[:3], seen[-3:], len(seen))
