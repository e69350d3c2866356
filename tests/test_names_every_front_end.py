"""Names in every renderer follow one rule (quoting.py): a tree whose root, folders and
files are named with characters a reader would not see or that reorder text (a
bidirectional override or isolate, a zero-width space, a byte-order mark, a soft hyphen,
NEL, a line separator, DEL, ESC, a no-break space) is walked by every tool of every front
end (MCP core tools, the MCP drop-in's tools, the LSP methods, the CLI), found, read,
searched, listed, edited, moved and refused, and no answer holds such a character raw in
readkeeper's words: only as its escape. Raw it may stand only in a structured field
that is wholly a name (`file_path`, an entry's `name`: data a caller sends back), never
inside a sentence, a note, a listing's text or a tree's JSON text (the drop-in's
directory_tree built its JSON with json.dumps, which leaves them raw)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from forgery import CONTEXT_NAME, SHAPED_NAMES, UNSEEN_NAMES, bare_shaped_paths, unseen
from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper import calls
from readkeeper.cli import main
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

ROOT = "r\u202eoot"  # the workspace root's own name
NAMES = UNSEEN_NAMES
FOLDER = "sub\u202e"
INNER = f"{FOLDER}/in\u200b.txt"
MISSING = ["safe\u202egnp.s", "missing\u202e", "x\u2066.txt"]  # asked, never made
MADE = ["new\u202e.txt", "d\u2066ir", "m\u202eoved.txt", "w\u202e.txt"]  # made by calls


def _names() -> set[str]:
    """Every name a call may hand back as data: each component the tree holds or a call
    named."""
    parts = [ROOT, *NAMES, FOLDER, *INNER.split("/"), *MISSING, *MADE]
    return set(parts)


def raw_outside_names(value: Any, found: list[str], where: str = "") -> list[str]:
    """The strings of a JSON value holding an unseen character raw where it is not wholly
    a name (a path whose every component holding one is a name of the tree)."""
    if isinstance(value, dict):
        for key, item in value.items():
            raw_outside_names(item, found, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            raw_outside_names(item, found, f"{where}[{index}]")
    elif isinstance(value, str) and unseen(value):
        parts = [part for part in value.split("/") if unseen(part)]
        if not set(parts) <= _names():
            found.append(f"{where}: {value!r}"[:300])
    return found


@pytest.fixture
def tree(workspace: Path) -> Path:
    root = workspace / ROOT
    (root / FOLDER).mkdir(parents=True)
    for name in NAMES:
        (root / name).write_text("hello needle\nline two\n")
    (root / INNER).write_text("needle deep\n")
    (root / "ok.txt").write_text("ok needle\n")
    return root


# The core's methods, each as every front end offers it (relative paths: the root's).
CALLS: list[tuple[str, dict[str, Any]]] = [
    *[("read", {"file_path": name}) for name in NAMES],
    ("read", {"file_path": NAMES[0]}),  # the stub of a file held
    ("read", {"file_path": INNER}),
    ("read", {"file_path": MISSING[0]}),  # did you mean
    ("read", {"file_path": FOLDER}),  # a folder
    ("read", {"file_path": NAMES[0], "offset": 99}),  # past the end
    ("read", {"file_path": NAMES[1], "estimate": True}),
    ("read", {"file_path": NAMES[1], "limit": 1, "force": True}),
    ("readMany", {"file_paths": [*NAMES, INNER, MISSING[1]]}),
    ("grep", {"pattern": "needle"}),
    ("grep", {"pattern": "needle", "context": 1}),
    ("grep", {"pattern": "needle", "output": "files"}),
    ("grep", {"pattern": "needle", "output": "counts"}),
    ("grep", {"pattern": "needle", "max_matches": 1}),
    ("grep", {"pattern": "needle", "path": FOLDER, "glob": "*\u200b*", "max_matches": 1}),
    ("grep", {"pattern": "needle", "path": MISSING[1]}),
    ("glob", {"pattern": "**/*"}),
    ("glob", {"pattern": "**/*", "max_matches": 1}),
    ("glob", {"pattern": "*", "path": FOLDER}),
    ("list", {"path": "."}),
    ("list", {"path": ".", "depth": 2}),
    ("list", {"path": FOLDER}),
    ("edit", {"file_path": NAMES[0], "old_string": "line two", "new_string": "line 2"}),
    ("edit", {"file_path": NAMES[1], "old_string": "nope", "new_string": "x"}),
    ("edit", {"file_path": NAMES[3], "old_string": "e", "new_string": "x"}),  # ambiguous
    ("write", {"file_path": MADE[0], "content": "made\n"}),
    ("write", {"file_path": INNER, "content": "unread\n"}),
    ("undo", {}),
    ("attachments", {"mentions": [NAMES[3], INNER]}),
    ("changes", {}),
    ("stats", {"history": True}),
    ("forget", {"paths": [NAMES[4]]}),
]
# The methods only the drop-in's tools and LSP offer.
LSP_ONLY: list[tuple[str, dict[str, Any]]] = [
    ("stat", {"path": NAMES[0]}),
    ("mkdir", {"path": MADE[1]}),
    ("move", {"source": NAMES[7], "destination": MADE[2]}),
    ("move", {"source": NAMES[8], "destination": NAMES[9]}),  # taken
    ("patch", {"file_path": NAMES[2], "edits": [{"old_string": "nope", "new_string": "x"}]}),
]
_MCP_TOOL = {"readMany": "read_many"}


async def test_every_core_tool_over_mcp_shows_names_escaped(tree: Path) -> None:
    args = ["--root", str(tree), "--standalone"]
    raw: list[str] = []
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for method, params in CALLS:
            answer = await client.call_tool(_MCP_TOOL.get(method, method), params)
            if unseen(text_of(answer)):
                raw.append(f"{method} {params!r}: {text_of(answer)!r}"[:400])
            raw_outside_names(answer.structured_content, raw, f"{method} {params!r}")
    assert not raw, "\n".join(raw)


def _dropin_calls(root: Path) -> list[tuple[str, dict[str, Any]]]:
    def at(name: str) -> str:
        return str(root / name)

    return [
        ("read_text_file", {"path": at(NAMES[0])}),
        ("read_text_file", {"path": at(NAMES[0])}),  # held: unchanged
        ("read_file", {"path": at(NAMES[1]), "head": 1}),
        ("read_text_file", {"path": at(NAMES[1]), "tail": 1}),
        ("read_text_file", {"path": at(MISSING[0])}),
        ("read_text_file", {"path": at(NAMES[0]), "offset": 99}),
        ("read_media_file", {"path": at(NAMES[0])}),
        ("read_multiple_files", {"paths": [at(n) for n in [*NAMES, INNER, MISSING[1]]]}),
        ("edit_file", {"path": at(NAMES[0]), "edits": [{"oldText": "two", "newText": "2"}]}),
        ("edit_file", {"path": at(NAMES[3]), "edits": [{"oldText": "no", "newText": "x"}]}),
        ("write_file", {"path": at(MADE[3]), "content": "x\n"}),
        ("write_file", {"path": at(NAMES[5]), "content": "x\n"}),  # not read
        ("create_directory", {"path": at(MADE[1])}),
        ("create_directory", {"path": at(NAMES[6])}),  # a file
        ("list_directory", {"path": str(root)}),
        ("list_directory_with_sizes", {"path": str(root)}),
        ("directory_tree", {"path": str(root)}),
        ("directory_tree", {"path": at(FOLDER), "excludePatterns": ["passwd"]}),
        ("move_file", {"source": at(NAMES[7]), "destination": at(MADE[2])}),
        ("move_file", {"source": at(NAMES[8]), "destination": at(NAMES[9])}),  # taken
        ("search_files", {"path": str(root), "pattern": "**/*"}),
        ("search_files", {"path": str(root), "pattern": MISSING[2]}),
        ("get_file_info", {"path": at(NAMES[0])}),
        ("get_file_info", {"path": at(MISSING[1])}),
        ("list_allowed_directories", {}),
    ]


async def test_every_drop_in_tool_shows_names_escaped(tree: Path) -> None:
    args = ["--root", str(tree), "--standalone", "--tools", "filesystem"]
    raw: list[str] = []
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for tool, params in _dropin_calls(tree):
            answer = await client.call_tool(tool, params)
            if unseen(text_of(answer)):
                raw.append(f"{tool} {params!r}: {text_of(answer)!r}"[:400])
            raw_outside_names(answer.structured_content, raw, f"{tool} {params!r}")
    assert not raw, "\n".join(raw)
    tree_json = await _tree_json(tree)
    assert {"name": NAMES[0], "type": "file"} in tree_json  # the escapes decode to the names


async def _tree_json(root: Path) -> list[dict[str, Any]]:
    args = ["--root", str(root), "--standalone", "--tools", "filesystem"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        shown = text_of(await client.call_tool("directory_tree", {"path": str(root)}))
    listed: list[dict[str, Any]] = json.loads(shown.partition("\n(readkeeper:")[0])
    return listed


def test_every_lsp_method_shows_names_escaped(tree: Path) -> None:
    server = RawServer()
    raw: list[str] = []
    try:
        server.initialize(tree)
        server.notify("initialized", {})
        for id_, (method, params) in enumerate([*CALLS, *LSP_ONLY], 2):
            reply = server.request(id_, f"readkeeper/{method}", params)
            error = reply.get("error") or {}
            if unseen(str(error.get("message", ""))):
                raw.append(f"{method} {params!r}: {error['message']!r}"[:400])
            raw_outside_names(reply.get("result"), raw, f"{method} {params!r}")
            raw_outside_names(error.get("data"), raw, f"{method} {params!r} data")
        for notice in server.notifications:  # shown messages, logs, progress
            raw_outside_names(notice.get("params"), raw, str(notice.get("method")))
    finally:
        server.close()
    assert not raw, "\n".join(raw)


CLI: list[list[str]] = [
    ["read", NAMES[0]],
    ["read", MISSING[0]],
    ["read", NAMES[0], "--offset", "99"],
    ["read", FOLDER],
    ["grep", "needle"],
    ["grep", "needle", "-C", "1"],
    ["grep", "needle", "--files"],
    ["grep", "needle", "--count"],
    ["grep", "needle", "--max-matches", "1"],
    ["glob", "**/*"],
    ["glob", "**/*", "--offset", "1"],
    ["glob", "**/*", "--offset", "99"],
    ["ls"],
    ["ls", FOLDER],
    ["ls", MISSING[1]],
]


def test_every_cli_command_shows_names_escaped_even_piped(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """To a pipe as to a terminal: a name is readkeeper's word wherever it is printed
    (a file's own lines go as they are to a pipe; these files' lines are plain)."""
    monkeypatch.chdir(tree)
    raw: list[str] = []
    for args in [*CLI, *([*a, "--json"] for a in CLI)]:
        main(args)
        printed = capsys.readouterr()
        for shown in (printed.out, printed.err):
            if unseen(shown):
                raw.append(f"{args!r}: {shown!r}"[:400])
        assert "usage:" not in printed.err, (args, printed.err)
    assert not raw, "\n".join(raw)


def test_a_name_the_message_quoted_already_is_quoted_once(
    core: Readkeeper, workspace: Path
) -> None:
    """The error's backstop quotes a name its data holds where the message left it
    bare; a name the message quoted already is left as it is (it was quoted twice:
    `""/ws/a b.txt""`)."""
    (workspace / "a b.txt").write_text("x\nx\n")
    calls.call(core, "read", {"file_path": "a b.txt"})
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, "edit", {"file_path": "a b.txt", "old_string": "x", "new_string": "y"})
    shown = json.dumps(str(workspace / "a b.txt"))
    assert f"in {shown} (" in caught.value.message, caught.value.message
    assert '""' not in caught.value.message
    error = ReadkeeperError("not_found", "/r t/a b and /r t", file_path="/r t/a b", root="/r t")
    assert error.message == '"/r t/a b" and "/r t"'


# The modules that may write JSON with a name's unseen characters raw, and why: none
# shows it as text. Every other module writes JSON for a reader through quoting.json_text
# (or wire_json), which escapes them.
RAW_JSON_ALLOWED = {
    "quoting.py": "the rule itself",
    "lsp/endpoint.py": "the LSP wire (a decoder reads it; valid_json first)",
    "attach/framing.py": "the attach socket's wire",
    "mcp/line_cap.py": "the MCP wire",
    "mcp/early.py": "the MCP wire",
    "mcp/quick.py": "the MCP wire",
    "mcp/http_limits.py": "the MCP wire",
    "mcp/malformed.py": "the MCP wire",
    "read/readers/outline_cache.py": "a cache file on disk",
    "read/readers/notebook_cost.py": "counted, never shown",
    "mcp/facts.py": "the structured content as the MCP wire sends it: counted, never shown",
    "read/readers/pdf_render.py": "counted, never shown",
    "edit/notebook_splice.py": "the notebook's own bytes, as the file writes them",
}


def test_no_renderer_writes_json_that_leaves_names_raw() -> None:
    """json.dumps(ensure_ascii=False) and orjson leave a name's bidirectional overrides,
    zero-width characters and line separators raw inside its strings: the drop-in's
    directory_tree so showed them. A module outside RAW_JSON_ALLOWED that shows JSON
    uses quoting.json_text."""
    server = Path(__file__).resolve().parent.parent / "server"
    found = []
    for path in sorted(server.rglob("*.py")):
        where = path.relative_to(server).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), where)):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value
            module = owner.id if isinstance(owner, ast.Name) else ""
            if (module, node.func.attr) == ("orjson", "dumps"):
                raw = True
            elif (module, node.func.attr) == ("json", "dumps"):
                ascii_only = [k.value for k in node.keywords if k.arg == "ensure_ascii"]
                raw = bool(ascii_only) and not (
                    isinstance(ascii_only[0], ast.Constant) and ascii_only[0].value is True
                )
            else:
                continue
            if raw and where not in RAW_JSON_ALLOWED:
                found.append(f"{where}:{node.lineno}")
    assert not found, found


async def test_a_name_shaped_as_a_line_is_quoted_by_every_front_end(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """grep (every output), glob, list, the drop-in's listings and the CLI show a name
    shaped as a line they print (`auth.py-4-x`, `a-1`, `x@`, `--`) quoted, relative or
    absolute."""
    folder = workspace / CONTEXT_NAME.rpartition("/")[0]
    folder.mkdir(parents=True)
    for name in SHAPED_NAMES:
        (workspace / name).write_text("needle\n")
    named = [*SHAPED_NAMES, CONTEXT_NAME.partition("/")[0]]
    texts: list[str] = []
    args = ["--root", str(workspace), "--standalone"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for tool, params in [
            ("grep", {"pattern": "needle", "context": 1}),
            ("grep", {"pattern": "needle", "output": "files"}),
            ("grep", {"pattern": "needle", "output": "counts"}),
            ("glob", {"pattern": "**/*"}),
            ("list", {"path": ".", "depth": 3}),
        ]:
            texts.append(text_of(await client.call_tool(tool, params)))
    args = [*args, "--tools", "filesystem"]
    async with stdio_client(args, mcp_env(private_runtime_dir())) as client:
        for tool, params in [
            ("list_directory", {"path": str(workspace)}),
            ("list_directory_with_sizes", {"path": str(workspace)}),
            ("search_files", {"path": str(workspace), "pattern": "**/*"}),
        ]:
            texts.append(text_of(await client.call_tool(tool, params)))
    monkeypatch.chdir(workspace)
    for command in (["grep", "needle", "-C", "1"], ["grep", "needle", "-l"], ["glob", "**/*"]):
        main(command)
        texts.append(capsys.readouterr().out)
    main(["ls"])
    texts.append(capsys.readouterr().out)
    for text in texts:
        assert not bare_shaped_paths(text, named, str(workspace)), text
        assert not bare_shaped_paths(text, named, ""), text
