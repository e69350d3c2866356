"""`readkeeper/readMany`: several reads in one call, each as `read` answers it, one error
never failing the others, within one shared token budget."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from document_samples import numbered_pdf

from conftest import Session
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def read_many(core: Readkeeper, **params: Any) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = calls.call(core, "readMany", params)["results"]
    return result


def test_each_file_is_read_in_order_and_an_error_stays_its_own(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    results = read_many(core, file_paths=["a.txt", "missing.txt", "b.txt"])
    assert [r["file_path"] for r in results] == ["a.txt", "missing.txt", "b.txt"]
    assert results[0]["result"]["file"]["content"] == "     1\talpha"
    assert results[1]["error"]["data"]["kind"] == "not_found"
    assert results[2]["result"]["file"]["content"] == "     1\tbeta"
    again = read_many(core, file_paths=["a.txt", "b.txt"])
    assert [r["result"]["type"] for r in again] == ["file_unchanged", "file_unchanged"]


def test_the_budget_is_shared_and_a_file_past_it_is_not_read(
    core: Readkeeper, workspace: Path
) -> None:
    (workspace / "small.txt").write_text("one line\n")
    (workspace / "big.txt").write_text("word " * 2000 + "\n")
    result = calls.call(
        core, "readMany", {"file_paths": ["small.txt", "big.txt"], "budget_tokens": 200}
    )
    small, big = result["results"]
    assert small["result"]["type"] == "text"
    assert big["error"]["data"]["kind"] == "token_limit"
    assert big["error"]["message"] == "Over budget_tokens: not read."
    assert "readkeeper/read" in result["note"]  # the read that gets it, named once
    assert core.read_states.get("", str(workspace / "big.txt")) is None
    assert 0 < result["budget_tokens_left"] < 200


def test_a_file_past_the_budget_is_named_with_the_pages_or_lines_asked_for(
    core: Readkeeper, workspace: Path
) -> None:
    # The read it names is the one the agent asked for: a PDF's pages, a file's lines.
    (workspace / "book.pdf").write_bytes(numbered_pdf(40, lines=30))
    (workspace / "big.txt").write_text("word " * 2000 + "\n")
    result = calls.call(
        core, "readMany", {"file_paths": ["book.pdf"], "pages": "3-6", "budget_tokens": 150}
    )
    [pdf] = result["results"]
    assert pdf["error"]["data"]["kind"] == "token_limit"
    assert 'readkeeper/read {"file_path": "book.pdf", "pages": "3-6"}' in result["note"]
    result = calls.call(
        core,
        "readMany",
        {"file_paths": ["big.txt"], "offset": 1, "limit": 1, "budget_tokens": 150},
    )
    [text] = result["results"]
    assert text["error"]["data"]["kind"] == "token_limit"
    assert '"offset": 1, "limit": 1}' in result["note"]


@pytest.mark.parametrize(
    "params",
    [{"file_paths": []}, {"file_paths": ["a"] * 101}, {"file_paths": ["a"], "budget_tokens": 0}],
)
def test_bad_params(core: Readkeeper, params: dict[str, Any]) -> None:
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "readMany", params)
    assert caught.value.kind == "bad_params"


async def test_read_many_over_lsp(lsp: Session, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    result = await lsp.client.request("readkeeper/readMany", {"file_paths": ["a.txt", "nope.txt"]})
    assert result["results"][0]["result"]["type"] == "text"
    assert result["results"][1]["error"]["data"]["kind"] == "not_found"


def test_a_cancel_during_a_pdf_stops_the_rest_and_answers_what_was_read(
    core: Readkeeper, workspace: Path
) -> None:
    """The client's cancel stops the PDF worker a readMany waits for (worker.py): the
    files read before it are held, so the answer is theirs, with the rest not read
    (never an exception that answers `cancelled` for reads that were recorded)."""
    from readkeeper.read.readers import worker

    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "doc.pdf").write_bytes(numbered_pdf(1))
    (workspace / "b.txt").write_text("beta\n")
    stop = threading.Event()
    stop.set()  # cancelled: the first wait for the PDF worker gives up
    paths = ["a.txt", "doc.pdf", "b.txt"]
    results = worker.cancellable(stop, lambda: read_many(core, file_paths=paths))
    assert [r["file_path"] for r in results] == paths
    assert results[0]["result"]["file"]["content"] == "     1\talpha"
    assert [r["error"]["data"]["kind"] for r in results[1:]] == ["cancelled", "cancelled"]
    assert "Read it again" in results[2]["error"]["message"]
    # What the answer says is what the session holds.
    again = read_many(core, file_paths=["a.txt", "b.txt"])
    assert [r["result"]["type"] for r in again] == ["file_unchanged", "text"]


@pytest.mark.parametrize("bad", ["b\x00c", "\ud800.txt", 5, None, ["a.txt"], "c" * 5000])
def test_one_entry_no_file_name_can_be_is_refused_alone(
    core: Readkeeper, workspace: Path, bad: Any
) -> None:
    # A NUL (or a value that is no string) refused the whole batch (attack round 22).
    (workspace / "a.txt").write_text("alpha\n")
    first, second, third = read_many(core, file_paths=["a.txt", bad, "a.txt"], force=True)
    assert first["result"]["file"]["content"] == "     1\talpha"
    assert third["result"]["type"] == "text"
    assert second["error"]["data"]["kind"] == "bad_params", second
    assert second["error"]["data"]["field"] in ("file_paths[1]", "file_path")
    assert "\x00" not in str(second["file_path"])  # the entry as given, escaped


def test_a_name_no_file_can_have_is_never_a_quick_read(core: Readkeeper) -> None:
    # With the token table loaded, a lone surrogate raised out of the quick check and the
    # LSP server never answered the read (found while fixing the batch above).
    assert core.tokens.loaded
    assert calls.quick(core, "read", {"file_path": "\ud800.txt"}) is False


@pytest.mark.parametrize("budget", [None, 20_000])
def test_a_fault_in_one_file_is_that_files_entry_alone(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    # Any exception of a read (a library's limit readkeeper did not foresee) fails its
    # own entry `internal`; it failed the whole call (attack round 27).
    from readkeeper.read import pipeline

    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "bad.txt").write_text("bad\n")
    real = pipeline.read

    def faulty(services: Any, params: Any) -> Any:
        if params.file_path.endswith("bad.txt"):
            raise ValueError("a limit nobody foresaw")
        return real(services, params)

    monkeypatch.setattr(pipeline, "read", faulty)
    params: dict[str, Any] = {"file_paths": ["bad.txt", "a.txt"]}
    if budget is not None:
        params["budget_tokens"] = budget
    bad, good = calls.call(core, "readMany", params)["results"]
    assert bad["error"]["data"]["kind"] == "internal"
    assert "a limit nobody foresaw" in bad["error"]["message"]
    assert good["result"]["file"]["content"] == "     1\talpha"


def test_its_ways_on_name_the_session_as_its_caller_named_it(
    core: Readkeeper, workspace: Path
) -> None:
    # A caller other than the editor (an HTTP MCP client, an attached one) has its
    # sessions kept under a key of its own; the notes named that key ("\u0000http-a\u0000
    # s1"), a session name every call refuses (NUL).
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("".join(f"row {i}\n" for i in range(1, 3001)))
    params = {"file_paths": ["a.txt", "b.txt"], "session": "s1", "budget_tokens": 30_000}
    result = calls.run(core, "readMany", calls.params_for("readMany", params), "http-a")
    said = str(result)
    assert "http-a" not in said, said[-600:]
    assert "\\x00" not in said, said[-600:]
    assert '"session": "s1"' in result["results"][0]["result"]["file"]["note"]
    assert '"session": "s1"' in result["note"], result["note"]


def test_without_a_budget_a_file_past_max_tokens_is_not_read_nor_held(
    core: Readkeeper, workspace: Path
) -> None:
    # Without budget_tokens, max_tokens bounds the answer (round 36, B3: six files of
    # 3,000 lines sent 149,291 tokens). The files are read in order; one whose entry no
    # longer fits is said in a short sentence, and the session does not hold it.
    core.configure({"max_tokens": 2000})
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("".join(f"{name} line {i} word word\n" for i in range(120)))
    result = calls.call(core, "readMany", {"file_paths": ["a.txt", "b.txt"]})
    first, second = result["results"]
    assert first["result"]["type"] == "text"
    assert second["error"]["message"] == "Over max_tokens: not read."
    assert "which bounds a readMany without budget_tokens" in result["note"]
    assert "budget_tokens_left" not in result
    assert core.read_states.get("", str(workspace / "b.txt")) is None
    assert core.read_states.get("", str(workspace / "a.txt")) is not None
    again = calls.call(core, "read", {"file_path": "b.txt"})
    assert again["type"] == "text", again  # not a stub: it was never sent
