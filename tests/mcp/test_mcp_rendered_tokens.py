"""On MCP and the CLI a read is sent as text (render.py), not as the LSP's JSON, so its
`tokens` is tiktoken's count of that text (issue 34): the lines under readkeeper's
header line and above its note, as a plain text read has always been counted on MCP
(its numbered lines). Checked with the official SDK client and the CLI as
subprocesses, on notebooks, PDFs (text and rendered pages), outlines, diffs and text
with escaped line breaks; the LSP's own counts are test_exact_kinds.py's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import mcp_types as types
import warm_server
from document_samples import every_output_notebook, numbered_pdf, papermill_notebooks
from mcp import Client
from test_mcp_attach import editor

from helpers import tiktoken_count
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.words import count


def sent_body(shown: str, note: str | None) -> str:
    """The text an agent received below readkeeper's header line and above its note."""
    body = shown.split("\n", 1)[1] if "\n" in shown else ""
    if note:
        body, last = body.rsplit("\n", 1) if "\n" in body else ("", body)
        assert last.startswith("note: "), last
    return body


def fixtures(workspace: Path) -> dict[str, dict[str, Any]]:
    """The reads to check, by name: real notebooks and modules, generated PDFs."""
    (workspace / "all.ipynb").write_text(json.dumps(every_output_notebook()))
    for name in ("test_logging.ipynb", "binder.ipynb"):
        shutil.copy(papermill_notebooks() / name, workspace / name)
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=30))
    (workspace / "two.pdf").write_bytes(numbered_pdf(2, lines=10))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copy(stdlib / "argparse.py", workspace / "argparse.py")
    # Line breaks but LF are sent escaped (quoting.line): the text sent is not the file's.
    (workspace / "breaks.txt").write_text("a\x0cb\n" * 40 + "c\rd\n" * 40, newline="")
    return {
        "all.ipynb": {},
        "test_logging.ipynb": {"force": True},
        "binder.ipynb": {"include_images": True, "force": True},
        "forty.pdf": {"pages": "1-20"},
        "two.pdf": {"pages": "1-2", "render": True},
        "argparse.py": {},
        "breaks.txt": {},
    }


def assert_counted(shown: str, file: dict[str, Any], name: str) -> None:
    body = sent_body(shown, file.get("note"))
    assert file["tokens"] == tiktoken_count(body), name
    said = re.search(r", ([\d,]+ tokens?)(;|$)", shown.split("\n", 1)[0])
    if said:  # the header says the same count
        assert said[1] == count(file["tokens"], "token"), name


async def read(client: Client, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool("read", arguments)
    assert not result.is_error, text_of(result)
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    assert isinstance(result.structured_content, dict)
    return first.text, result.structured_content


async def test_every_kinds_tokens_over_mcp_count_the_text_sent(workspace: Path) -> None:
    reads = fixtures(workspace)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for name, params in reads.items():
            shown, structured = await read(client, file_path=str(workspace / name), **params)
            assert_counted(shown, structured["file"], name)
        # A diff, sent when a file read before has changed.
        path = workspace / "textwrap.py"
        shutil.copy(Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py", path)
        await read(client, file_path=str(path))
        path.write_text(path.read_text().replace("def dedent(text):", "def dedent(text, /):", 1))
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        shown, structured = await read(client, file_path=str(path))
        assert structured["type"] == "file_changed", shown
        assert_counted(shown, structured["file"], "diff")


async def test_a_notebook_over_the_cap_over_mcp_sends_at_most_the_cap(workspace: Path) -> None:
    notebook = every_output_notebook()
    cell = notebook["cells"][0]
    # A long run of backticks: its fence (quoting.fence) is longer still, so the text
    # sent costs more than the cells' JSON; the cap holds for both.
    notebook["cells"] = [
        {**cell, "id": f"c{i}", "source": "`" * 400 + f" {i}\n"} for i in range(60)
    ]
    (workspace / "long.ipynb").write_text(json.dumps(notebook))
    env = mcp_env(private_runtime_dir(), READKEEPER_MAX_TOKENS="2000")
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        shown, structured = await read(client, file_path=str(workspace / "long.ipynb"))
    file = structured["file"]
    assert file["partial"] is True
    assert_counted(shown, file, "long.ipynb")
    assert file["tokens"] <= 2000


def cli(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        warm_server.command("read", *args), cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.removesuffix("\n")  # print's own newline


def test_every_kinds_tokens_on_the_cli_count_the_text_printed(workspace: Path) -> None:
    for name, params in fixtures(workspace).items():
        if name == "breaks.txt":
            continue  # a text read prints its lines alone: no count is said
        if name.endswith(".pdf") and params.get("render"):
            continue  # rendered pages' header says no count (test_cli_media.py: --out)
        flags = [
            f"--{k.replace('_', '-')}" if v is True else f"--{k}={v}" for k, v in params.items()
        ]
        shown = cli(name, *flags, cwd=workspace)
        file = json.loads(cli(name, *flags, "--json", cwd=workspace))["file"]
        header = shown.split("\n", 1)[0]
        said = tiktoken_count(sent_body(shown, file.get("note")))
        assert count(said, "token") in header, (name, header)


async def test_an_attached_mcp_server_counts_the_text_it_sends(workspace: Path) -> None:
    """Attached, the editor's server counts its LSP answer; the MCP server counts its
    own text of it."""
    reads = fixtures(workspace)
    runtime = private_runtime_dir()
    lsp, _ = await editor(workspace, runtime)
    try:
        async with stdio_client(["--root", str(workspace)], mcp_env(runtime)) as client:
            stats = await client.call_tool("stats", {})
            assert isinstance(stats.structured_content, dict)
            assert stats.structured_content["mode"] == "attached"
            for name in ("all.ipynb", "argparse.py", "breaks.txt"):
                params = reads[name]
                shown, structured = await read(client, file_path=str(workspace / name), **params)
                assert_counted(shown, structured["file"], name)
    finally:
        await lsp.client.close()


async def test_read_many_over_mcp_spends_the_budget_at_the_counts_it_says(
    workspace: Path,
) -> None:
    fixtures(workspace)
    names = ["all.ipynb", "binder.ipynb", "argparse.py", "two.pdf"]
    budget = 100_000
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        answer = await client.call_tool(
            "read_many",
            {"file_paths": [str(workspace / n) for n in names], "budget_tokens": budget},
        )
    assert not answer.is_error, text_of(answer)
    structured = answer.structured_content
    assert isinstance(structured, dict)
    assert all("result" in item for item in structured["results"]), structured
    files = [item["result"]["file"] for item in structured["results"]]
    assert [f["file_path"] for f in files] == [str(workspace / n) for n in names]
    # What is left is the budget less the text sent (each file's header line included).
    assert structured["budget_tokens_left"] == budget - tiktoken_count(text_of(answer))
    assert f"(budget_tokens left: {structured['budget_tokens_left']})" in text_of(answer)
