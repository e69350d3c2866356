"""Every result's `tokens` is the count of what the agent receives (issue 34), for each
kind of result besides text (test_tokens.py, test_token_early.py): a notebook's cells,
a PDF's page text, rendered pages' result, a changed file's diff, an outline, and an
attachment budget's `used_tokens`. Checked in-process and over LSP with the server as
a subprocess, on real files, against tiktoken's own count."""

from __future__ import annotations

import json
import os
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from document_samples import every_output_notebook, numbered_pdf, papermill_notebooks

from conftest import Session
from helpers import tiktoken_count
from readkeeper.core import Readkeeper
from readkeeper.files import user_cache
from readkeeper.protocol import AttachmentsParams, ReadParams, unstructure
from readkeeper.read import token_index
from readkeeper.read.tokens import DEFAULT_ENCODING


def compact(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def notebook_tokens(file: dict[str, Any]) -> int:
    """What a notebook's cells cost as received: their JSON without the images'
    payloads, plus each image's own tokens (a formula of its pixels, which is what the
    model is charged for an image: not text)."""
    cells = json.loads(json.dumps(file["cells"]))
    images = 0
    for cell in cells:
        for output in cell.get("outputs") or []:
            for image in output.get("images") or []:
                images += image.get("tokens") or 0
                image.pop("base64", None)
    return tiktoken_count(compact(cells)) + images


def parts_tokens(file: dict[str, Any]) -> int:
    """Rendered pages' result: paths and numbers, counted as the JSON received."""
    return tiktoken_count(compact(file))


def outline_tokens(file: dict[str, Any]) -> int:
    """An outline sends its symbols, first lines and note."""
    return tiktoken_count("\n".join((file["outline"], file["content"], file["note"])))


def read(core: Readkeeper, path: Path | str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = unstructure(core.read(ReadParams(file_path=str(path), **params)))
    return result


def write_notebook(path: Path, notebook: dict[str, Any]) -> Path:
    path.write_text(json.dumps(notebook))
    return path


def stdlib_module(name: str) -> Path:
    return Path(sysconfig.get_paths()["stdlib"]) / name


def changed(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new, 1))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# --- in-process ------------------------------------------------------------------------------


def test_a_small_notebooks_tokens_are_its_cells_count(core: Readkeeper, workspace: Path) -> None:
    # Small: far under a quarter of the cap, where bytes/4 used to answer.
    write_notebook(workspace / "all.ipynb", every_output_notebook())
    file = read(core, "all.ipynb")["file"]
    assert file["tokens"] == notebook_tokens(file)


@pytest.mark.parametrize("name", ["test_logging.ipynb", "binder.ipynb", "broken1.ipynb"])
def test_real_notebooks_tokens_are_their_cells_count(
    core: Readkeeper, workspace: Path, name: str
) -> None:
    shutil.copy(papermill_notebooks() / name, workspace / name)
    for images in (False, True):
        file = read(core, name, include_images=images, force=True)["file"]
        assert file["tokens"] == notebook_tokens(file)
        assert file["tokens"] <= core.settings.max_tokens


def test_a_notebook_over_the_cap_counts_the_cells_sent(core: Readkeeper, workspace: Path) -> None:
    core.configure({"max_tokens": "2000"})
    notebook = every_output_notebook()
    cell = notebook["cells"][0]
    notebook["cells"] = [
        {**cell, "id": f"c{i}", "source": f"x_{i} = {i} * 3  # step {i}\n" * 12} for i in range(40)
    ]
    write_notebook(workspace / "long.ipynb", notebook)
    file = read(core, "long.ipynb")["file"]
    assert file["partial"] is True
    assert file["tokens"] == notebook_tokens(file) <= 2000


def test_a_pdfs_tokens_are_its_page_texts_count(core: Readkeeper, workspace: Path) -> None:
    (workspace / "small.pdf").write_bytes(numbered_pdf(2, lines=10))
    file = read(core, "small.pdf")["file"]
    assert file["tokens"] == tiktoken_count(file["content"])
    (workspace / "forty.pdf").write_bytes(numbered_pdf(40, lines=30))
    file = read(core, "forty.pdf", pages="1-20")["file"]
    assert file["tokens"] == tiktoken_count(file["content"])


def test_rendered_pages_tokens_are_the_results_count(core: Readkeeper, workspace: Path) -> None:
    (workspace / "two.pdf").write_bytes(numbered_pdf(2, lines=10))
    file = read(core, "two.pdf", pages="1-2", render=True)["file"]
    assert file["tokens"] == parts_tokens(file)


def test_a_changed_files_tokens_are_its_diffs_count(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "mod.py"
    shutil.copy(stdlib_module("textwrap.py"), path)
    read(core, path)
    changed(path, "def dedent(text):", "def dedent(text, /):")
    file = read(core, path)
    assert file["type"] == "file_changed"
    assert file["file"]["tokens"] == tiktoken_count(file["file"]["diff"])


def test_an_outlines_tokens_are_the_count_of_what_it_sends(
    core: Readkeeper, workspace: Path
) -> None:
    shutil.copy(stdlib_module("argparse.py"), workspace / "argparse.py")
    file = read(core, "argparse.py")
    assert file["type"] == "outline"
    sent = file["file"]
    assert sent["tokens"] == outline_tokens(sent)


def check_attachments(result: dict[str, Any]) -> None:
    """Each text attachment's `tokens` is the count of its content, and `used_tokens`
    their sum with each one's header and fences (a few tokens each, counted as sent),
    within the budget."""
    items = result["attachments"]
    assert {item["type"] for item in items} == {"file"}
    for item in items:
        assert item["tokens"] == tiktoken_count(item["content"])
    contents = sum(item["tokens"] for item in items)
    assert contents < result["used_tokens"] <= contents + 60 * len(items)
    assert result["used_tokens"] <= result["budget_tokens"]


def mentioned_files(workspace: Path) -> list[str]:
    write_notebook(workspace / "all.ipynb", every_output_notebook())
    (workspace / "small.pdf").write_bytes(numbered_pdf(2, lines=10))
    shutil.copy(stdlib_module("textwrap.py"), workspace / "textwrap.py")
    shutil.copy(stdlib_module("argparse.py"), workspace / "argparse.py")
    return ["all.ipynb", "small.pdf", "textwrap.py", "argparse.py"]


def test_attachments_tokens_are_their_contents_count(core: Readkeeper, workspace: Path) -> None:
    mentions = mentioned_files(workspace)
    params = AttachmentsParams(types=["file"], mentions=mentions, budget_tokens=60_000)
    result = unstructure(core.attachments(params))
    assert len(result["attachments"]) == 4
    check_attachments(result)


@pytest.fixture
def index() -> Iterator[None]:
    """The token index in the run's cache folder, as a machine has it once readkeeper's
    table has loaded there once (test_token_early.py)."""
    token_index.keep(DEFAULT_ENCODING, tiktoken.get_encoding(DEFAULT_ENCODING), user_cache.shared())
    user_cache.flush()
    token_index.forget()
    yield
    token_index.forget()


@pytest.mark.usefixtures("tiktoken_counts", "index")  # an index is tiktoken's path
def test_before_the_table_loads_notebooks_and_pdfs_are_counted_by_the_index(
    workspace: Path,
) -> None:
    write_notebook(workspace / "all.ipynb", every_output_notebook())
    (workspace / "small.pdf").write_bytes(numbered_pdf(2, lines=10))
    for name, sent in (("all.ipynb", notebook_tokens), ("small.pdf", None)):
        core = Readkeeper(roots=[str(workspace)])
        assert core.tokens.state == "unloaded"
        file = read(core, name)["file"]
        expected = sent(file) if sent else tiktoken_count(file["content"])
        assert file["tokens"] == expected
        assert core.tokens.index_counts >= 1  # not waited for the table: the index counted
        core.close()


# --- over LSP, the server a subprocess ---------------------------------------------------------


async def test_every_kind_is_counted_exactly_through_the_server(
    lsp: Session, workspace: Path
) -> None:
    write_notebook(workspace / "all.ipynb", every_output_notebook())
    shutil.copy(papermill_notebooks() / "test_logging.ipynb", workspace / "log.ipynb")
    for name in ("all.ipynb", "log.ipynb"):
        file = (await lsp.read(name))["file"]
        assert file["tokens"] == notebook_tokens(file)
    (workspace / "small.pdf").write_bytes(numbered_pdf(2, lines=10))
    file = (await lsp.read("small.pdf"))["file"]
    assert file["tokens"] == tiktoken_count(file["content"])
    file = (await lsp.read("small.pdf", pages="1", render=True))["file"]
    assert file["tokens"] == parts_tokens(file)
    path = workspace / "mod.py"
    shutil.copy(stdlib_module("textwrap.py"), path)
    await lsp.read(path)
    changed(path, "def dedent(text):", "def dedent(text, /):")
    delta = await lsp.read(path)
    assert delta["type"] == "file_changed"
    assert delta["file"]["tokens"] == tiktoken_count(delta["file"]["diff"])
    shutil.copy(stdlib_module("argparse.py"), workspace / "argparse.py")
    sent = (await lsp.read("argparse.py"))["file"]
    assert sent["tokens"] == outline_tokens(sent)


async def test_attachments_are_counted_exactly_through_the_server(
    lsp: Session, workspace: Path
) -> None:
    mentions = mentioned_files(workspace)
    params = {"types": ["file"], "mentions": mentions, "budget_tokens": 60_000}
    result = await lsp.client.request("readkeeper/attachments", params)
    assert len(result["attachments"]) == 4
    check_attachments(result)
