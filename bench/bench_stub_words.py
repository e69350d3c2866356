"""What a `file_unchanged` stub costs the model as the MCP front end renders it (issue 30).

Run it as `.venv/bin/python bench/bench_stub_words.py`. A real MCP-rendered stub is made
for each case (through the core and the MCP renderer, in a scratch workspace under a
typical project path), and its text counted with readkeeper's tokenizer. It prints a
table and writes `bench/results/stub_words.json`. Goal: under 40 tokens for a typical
path (a whole file read again unchanged). The stubs of a PDF's pages (as text and
rendered), a notebook's cells and an image are measured too: they name what the agent
holds in the file's terms, so they say a little more.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

import mcp_types as types
from document_samples import encode, numbered_pdf, screenshot

from common import machine, scratch, write_json
from readkeeper.core import Readkeeper
from readkeeper.mcp.render import tool_result
from readkeeper.protocol import EditParams, ReadParams, WriteParams, unstructure
from readkeeper.read.tokens import TokenCounter

RESULTS = Path(__file__).parent / "results" / "stub_words.json"
GOAL = 40


def rendered(core: Readkeeper, name: str, **params: Any) -> str:
    """The stub as the MCP read tool sends it: its ways on said as that read, changed
    (a stub's `force=true` kept short: mcp/render.py's `_stub_force`)."""
    result = unstructure(core.read(ReadParams(file_path=name, **params)))
    assert result["type"] == "file_unchanged", result["type"]
    sent = tool_result("read", result, [], args={"file_path": name, **params}).content[0]
    assert isinstance(sent, types.TextContent)
    return sent.text


def moved_on(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def cases(root: Path) -> list[tuple[str, str]]:
    project = root / "home" / "me" / "proj" / "src"
    project.mkdir(parents=True)
    core = Readkeeper(roots=[str(root / "home" / "me" / "proj")])
    app, log = project / "app.py", project / "server.log"
    app.write_text("".join(f"value_{i} = {i}\n" for i in range(120)))
    log.write_text("".join(f"entry {i}\n" for i in range(3400)))
    out = []
    core.read(ReadParams(file_path=str(app)))
    out.append(("whole file, read again unchanged", rendered(core, str(app))))
    core.read(ReadParams(file_path=str(log)))
    out.append(("read cut at 2,000 lines, again", rendered(core, str(log))))
    moved_on(log, log.read_text() + "entry 3400\n")
    out.append(("lines 1-2000, file changed after", rendered(core, str(log))))
    core.read(ReadParams(file_path=str(log), offset=100, limit=50))
    moved_on(log, "new\n" + log.read_text())
    out.append(("range moved by a change before", rendered(core, str(log), offset=100, limit=50)))
    core.write(WriteParams(file_path=str(app), content="x = 1\ny = 2\n"))
    out.append(("after the session's own write", rendered(core, str(app))))
    core.edit(EditParams(file_path=str(app), old_string="y = 2", new_string="y = 3"))
    out.append(("after the session's own edit", rendered(core, str(app))))
    out.extend(document_cases(core, root / "home" / "me" / "proj" / "docs"))
    return out


def document_cases(core: Readkeeper, docs: Path) -> list[tuple[str, str]]:
    """The stubs of a PDF's pages (as text and rendered), a notebook, an image."""
    docs.mkdir(parents=True)
    spec, nb, shot = docs / "spec.pdf", docs / "analysis.ipynb", docs / "screenshot.png"
    spec.write_bytes(numbered_pdf(40, lines=5))
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": f"x_{i} = {i}",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{i}\n"}],
            "execution_count": i + 1,
        }
        for i in range(24)
    ]
    nb.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    shot.write_bytes(encode(screenshot(2880, 1800), "PNG"))
    out = []
    for name, path, params in (
        ("PDF pages 3-5 as text, again", spec, {"pages": "3-5"}),
        ("PDF pages cut at 20, again", spec, {"pages": "1-40"}),
        ("PDF page rendered, again", spec, {"pages": "7", "render": True}),
        ("notebook read whole, again", nb, {}),
        ("notebook cells 5-8, again", nb, {"offset": 5, "limit": 4}),
        ("image read again", shot, {}),
    ):
        core.read(ReadParams(file_path=str(path), **params))
        out.append((name, rendered(core, str(path), **params)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    counter = TokenCounter()
    with scratch("rk-bench-stub-") as (workdir, _log):
        found = cases(workdir)
        prefix = str(workdir)
    rows = []
    print(f"{'stub':40} {'tokens':>6}  text (scratch prefix shown as ~)")
    for name, text in found:
        shown = text.replace(prefix, "~")
        # Counted as under /home/me/proj, a typical path, not the scratch folder's.
        tokens = counter.count(text.replace(prefix, ""))
        rows.append({"case": name, "tokens": tokens, "text": shown})
        print(f"{name:40} {tokens:>6}  {shown}")
    typical = rows[0]["tokens"]
    verdict = "pass" if typical < GOAL else "FAIL"
    print(f"typical stub: {typical} tokens (goal < {GOAL}: {verdict})")
    write_json(args.output, {**machine(), "goal": GOAL, "typical": typical, "cases": rows})
    print(f"written to {args.output}")
    return 0 if typical < GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
