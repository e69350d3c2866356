"""A refusal's next glob call, built from a file's name, matches that name as it is,
end to end through the official SDK client: a missing file's "find the file by name"
and a too-long name's "glob finds a file by part of its name" escape every character
the glob syntax reads as more than itself (files/globcost.literal). A name `a[1].py`
was hinted as `**/a[1].py`, which finds `a1.py` and never `a[1].py`; `*x*.py` found
every name with an x; `{a,b}.py` found `a.py` and `b.py`; a trailing space was dropped.

The files lie in `build/`, a folder the did-you-mean guesses skip (files/guesses.py)
while a glob lists it: so no guess is offered and the refusal names the glob call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_helpers import core_client, dropin_client, error_kind, named_call, ok
from mcp_helpers import text_of as text

# Each odd name, then names its pattern read as a glob would find instead.
ODD_NAMES = {
    "a[1].py": ["a1.py"],
    "*x*.py": ["zxz.py"],
    "{a,b}.py": ["a.py", "b.py"],
    "a?.py": ["ab.py"],
    "*a*b*c.py": ["zazbzc.py"],  # escaped stars are no wildcards: never too costly
    "back\\slash.py": ["backslash.py"],
    "sp.py ": ["sp.py"],
    "#h.py": [],
    "!n.py": ["n.py"],
}


def _plant(workspace: Path) -> Path:
    build = workspace / "build"
    build.mkdir()
    for name, others in ODD_NAMES.items():
        for each in [name, *others]:
            (build / each).write_text("x\n")
    (workspace / "src").mkdir()
    return build


async def _hinted(
    client: Client, tool: str, arguments: dict[str, Any], kind: str, hinted: str
) -> dict[str, Any]:
    """The arguments of the `hinted` call named by `tool`'s refusal (of `kind`)."""
    refusal = await client.call_tool(tool, arguments)
    assert error_kind(refusal) == kind
    return named_call(text(refusal), hinted)


def _found(listing: str) -> set[str]:
    """The paths a search_files answer lists (each as quoting.name shows it)."""
    lines = [line for line in listing.splitlines() if "/build/" in line]
    return {json.loads(line) if line.startswith('"') else line for line in lines}


@pytest.mark.parametrize("name", list(ODD_NAMES))
async def test_a_missing_file_s_glob_hint_finds_exactly_it(workspace: Path, name: str) -> None:
    _plant(workspace)
    async with core_client(workspace) as client:
        asked = await _hinted(client, "read", {"file_path": f"src/{name}"}, "not_found", "glob")
        result = await client.call_tool("glob", asked)
        assert not result.is_error, text(result)
        assert isinstance(result.structured_content, dict)
        assert result.structured_content["paths"] == [str(workspace / "build" / name)]


@pytest.mark.parametrize("name", ["a[1].py", "*x*.py", "sp.py "])
async def test_the_dropin_s_search_files_hint_finds_exactly_it(workspace: Path, name: str) -> None:
    _plant(workspace)
    async with dropin_client(workspace) as client:
        path = {"path": f"src/{name}"}
        asked = await _hinted(client, "read_text_file", path, "not_found", "search_files")
        asked.setdefault("path", str(workspace))
        shown = await ok(client, "search_files", **asked)
        assert _found(shown) == {str(workspace / "build" / name)}


async def test_a_too_long_name_s_glob_hint_finds_the_file_its_start_names(
    workspace: Path,
) -> None:
    build = _plant(workspace)
    start = "*[x]{a,b}?" + "y" * 30  # the 40 characters the hint keeps
    (build / (start + ".py")).write_text("x\n")
    (build / ("qxak" + "y" * 30 + "-other.py")).write_text("x\n")  # its start as a glob
    async with core_client(workspace) as client:
        path = {"file_path": "src/" + start + "z" * 300}
        asked = await _hinted(client, "read", path, "bad_params", "glob")
        result = await client.call_tool("glob", asked)
        assert isinstance(result.structured_content, dict), text(result)
        assert result.structured_content["paths"] == [str(build / (start + ".py"))]


def test_literal_alone_matches_its_name_and_no_other() -> None:
    from readkeeper.files.globcost import literal
    from readkeeper.search.globs import Glob

    names = [*ODD_NAMES, *(o for others in ODD_NAMES.values() for o in others)]
    names += ["!", "#", "tab\t", "wide\u3000", " lead.py", "a,b.py", "x]y", "a**b"]
    for name in names:
        glob = Glob(literal(name))
        assert [n for n in names if glob.matches(n)] == [name], (name, literal(name))
        assert Glob("**/" + literal(name)).matches(f"d/{name}")
