"""readMany's `budget_tokens` spends what each entry sends (issue 34), as the answer's
text shows it (render_many.many, attack round 15's A10): a read with its header line, a
stub's note (never the answer it stands for), a diff, an error's message. Checked
against tiktoken's own count, in-process and over LSP (the server as a subprocess), on
a real module, a PDF and a notebook."""

from __future__ import annotations

import json
import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

from document_samples import every_output_notebook, numbered_pdf

from conftest import Session
from helpers import tiktoken_count
from readkeeper import calls, render_many
from readkeeper.core import Readkeeper

BUDGET = 50_000


def files(workspace: Path) -> list[str]:
    shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py", workspace / "wrap.py")
    (workspace / "doc.pdf").write_bytes(numbered_pdf(3, lines=20))
    (workspace / "all.ipynb").write_text(json.dumps(every_output_notebook()))
    return ["wrap.py", "doc.pdf", "all.ipynb", "missing.txt"]


def changed(path: Path) -> None:
    path.write_text(path.read_text().replace("def dedent(text):", "def dedent(text, /):", 1))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def assert_spent(answer: dict[str, Any]) -> None:
    """The budget left is the budget less the answer as text (render_many.many: each file's
    header line, refusal and note included, the last line too), as tiktoken counts it."""
    assert answer["budget_tokens_left"] == BUDGET - tiktoken_count(render_many.many(answer))


def test_the_budget_spends_each_entry_as_sent(core: Readkeeper, workspace: Path) -> None:
    paths = files(workspace)
    first = calls.call(core, "readMany", {"file_paths": paths, "budget_tokens": BUDGET})
    assert [i.get("result", {}).get("type") for i in first["results"][:3]] == [
        "text",
        "pdf",
        "notebook",
    ]
    assert_spent(first)
    # Read again: stubs, which cost their note, not the answers they stand for.
    again = calls.call(core, "readMany", {"file_paths": paths, "budget_tokens": BUDGET})
    assert [i.get("result", {}).get("type") for i in again["results"][:3]] == ["file_unchanged"] * 3
    assert_spent(again)
    assert BUDGET - again["budget_tokens_left"] < 600  # stubs and a refusal, their names
    changed(workspace / "wrap.py")
    diff = calls.call(core, "readMany", {"file_paths": paths[:1], "budget_tokens": BUDGET})
    assert diff["results"][0]["result"]["type"] == "file_changed"
    assert_spent(diff)


async def test_the_budget_spends_each_entry_as_sent_over_lsp(lsp: Session, workspace: Path) -> None:
    paths = files(workspace)
    params = {"file_paths": paths, "budget_tokens": BUDGET}
    assert_spent(await lsp.client.request("readkeeper/readMany", params))
    assert_spent(await lsp.client.request("readkeeper/readMany", params))


def test_a_range_that_names_no_rest_is_read_once_it_fits(workspace: Path) -> None:
    """Each read's header was bounded with a call for the rest, which a range with a limit
    never names: two files of lines 10-14 were left unread at every budget up to 280,
    whose answer with the first read came to 196 tokens (round 35, D3). The least budget
    that reads the first file is now within the bounds' slack of what it sends."""
    for name in ("t0.txt", "t1.txt"):
        (workspace / name).write_text("".join(f"row {i} of {name} with words\n" for i in range(40)))
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 300})
    asked = {"file_paths": ["t0.txt", "t1.txt"], "offset": 10, "limit": 5, "session": "B"}
    for budget in range(200, 450, 5):
        answer = calls.call(core, "readMany", {**asked, "budget_tokens": budget})
        if "result" in answer["results"][0]:
            break
    else:
        raise AssertionError("the first file was never read")
    sent = tiktoken_count(render_many.many(answer))
    assert budget - sent <= 45, (budget, sent)  # 69 when a rest was counted
    core.close()
