"""Edits of several files in one call (`readkeeper/edit` with `files`): every file or
none, with real failures half way (a file swapped by another program, a write the
system refuses), and one undo for all."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from helpers import rewrite_before_every_swap, run_python
from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError


def call(core: Readkeeper, name: str, **params: Any) -> Any:
    return calls.call(core, name, params)


def refused(core: Readkeeper, **params: Any) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        call(core, "edit", **params)
    return caught.value


def three_files(core: Readkeeper, workspace: Path) -> list[Path]:
    paths = []
    for name in ("a.py", "b.py", "c.py"):
        path = workspace / name
        path.write_text(f"{name[0]} = 1\nkeep = True\n")
        call(core, "read", file_path=name)
        paths.append(path)
    return paths


def test_a_multi_file_edit_lands_in_every_file_and_one_undo_takes_all_back(
    core: Readkeeper, workspace: Path
) -> None:
    a, b, c = three_files(core, workspace)
    anchored = call(core, "read", file_path="c.py", line_format="anchors", force=True)
    first = anchored["file"]["content"].split("\n")[0].split("\t")[0]
    result = call(
        core,
        "edit",
        files=[
            {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"},
            {"file_path": "b.py", "edits": [{"old_string": "b = 1", "new_string": "b = 2"}]},
            {"file_path": "c.py", "anchor_edits": [{"op": "delete", "start": first}]},
        ],
    )
    assert [f["file_path"] for f in result["files"]] == [str(a), str(b), str(c)]
    assert result["replacements"] == 3
    assert a.read_text() == "a = 2\nkeep = True\n"
    assert b.read_text() == "b = 2\nkeep = True\n"
    assert c.read_text() == "keep = True\n"
    undone = call(core, "undo")
    assert len(undone["files"]) == 3
    assert [p.read_text() for p in (a, b, c)] == [
        "a = 1\nkeep = True\n",
        "b = 1\nkeep = True\n",
        "c = 1\nkeep = True\n",
    ]


def test_a_later_file_refused_puts_the_earlier_ones_back_with_their_read_state(
    core: Readkeeper, workspace: Path
) -> None:
    a, b, _ = three_files(core, workspace)
    refusal = refused(
        core,
        files=[
            {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"},
            {"file_path": "b.py", "old_string": "not there", "new_string": "x"},
        ],
    )
    assert refusal.kind == "no_match"
    assert refusal.data["files_index"] == 1
    assert "put back" in refusal.message
    assert a.read_text() == "a = 1\nkeep = True\n"
    assert b.read_text() == "b = 1\nkeep = True\n"
    # The read-state is the one before the call: a re-read is the stub of that read.
    assert call(core, "read", file_path="a.py")["type"] == "file_unchanged"


def test_the_same_file_twice_is_bad_params_even_through_a_link(
    core: Readkeeper, workspace: Path
) -> None:
    a, _, _ = three_files(core, workspace)
    (workspace / "link.py").symlink_to(a)
    refusal = refused(
        core,
        files=[
            {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"},
            {"file_path": "link.py", "old_string": "keep", "new_string": "kept"},
        ],
    )
    assert refusal.kind == "bad_params"
    assert refusal.data["files"] == [0, 1]
    assert a.read_text() == "a = 1\nkeep = True\n"


def test_every_file_is_checked_before_any_is_written(core: Readkeeper, workspace: Path) -> None:
    a, _, _ = three_files(core, workspace)
    (workspace / "unread.py").write_text("u = 1\n")
    before = a.stat().st_mtime_ns
    refusal = refused(
        core,
        files=[
            {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"},
            {"file_path": "unread.py", "old_string": "u = 1", "new_string": "u = 2"},
        ],
    )
    assert refusal.kind == "not_read"
    assert refusal.data["files_index"] == 1
    assert a.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    "params",
    [
        {"files": []},
        {"files": [{"file_path": "a.py"}]},
        {"files": [{"file_path": "a.py", "old_string": "a"}]},
        {"files": [{"file_path": "a.py", "old_string": "a", "new_string": "b", "edits": []}]},
        {"files": [{"file_path": "a.py", "old_string": "a", "new_string": "b"}], "old_string": "a"},
    ],
)
def test_malformed_multi_file_edits_are_bad_params(
    core: Readkeeper, workspace: Path, params: dict[str, Any]
) -> None:
    a, _, _ = three_files(core, workspace)
    assert refused(core, **params).kind == "bad_params"
    assert a.read_text() == "a = 1\nkeep = True\n"


def test_a_file_swapped_by_another_program_mid_batch_puts_the_first_back(
    core: Readkeeper, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, _ = three_files(core, workspace)
    rewrite_before_every_swap(
        monkeypatch, b, lambda text, n: text if "b = 1" not in text else text + f"# {n}\n"
    )
    refusal = refused(
        core,
        files=[
            {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"},
            {"file_path": "b.py", "old_string": "b = 1", "new_string": "b = 2"},
        ],
    )
    assert refusal.kind == "stale"
    assert refusal.data["files_index"] == 1
    assert a.read_text() == "a = 1\nkeep = True\n"
    assert b.read_text().startswith("b = 1\nkeep = True\n# ")


def test_a_write_the_system_refuses_half_way_puts_the_first_back(workspace: Path) -> None:
    """A real failure of the second commit: the process may not write files over 4 KB
    (RLIMIT_FSIZE binds root too), and the second file's edit makes it larger."""
    (workspace / "a.py").write_text("a = 1\n")
    (workspace / "b.py").write_text("b = 1\n")
    script = textwrap.dedent(
        """
        import json, resource, signal, sys
        from readkeeper import calls
        from readkeeper.core import Readkeeper
        from readkeeper.errors import ReadkeeperError

        core = Readkeeper(roots=[sys.argv[1]])
        for name in ("a.py", "b.py"):
            calls.call(core, "read", {"file_path": name})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        files = [
            {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"},
            {"file_path": "b.py", "old_string": "b = 1", "new_string": "b = 1" + "#" * 8000},
        ]
        try:
            calls.call(core, "edit", {"files": files})
            print(json.dumps({"kind": None}))
        except ReadkeeperError as exc:
            print(json.dumps({"kind": exc.kind, "message": exc.message, "data": exc.data}))
        """
    )
    done = run_python(script, str(workspace))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["kind"] is not None
    assert answer["data"]["files_index"] == 1
    assert answer["data"]["put_back"] is True
    assert (workspace / "a.py").read_text() == "a = 1\n"
    assert (workspace / "b.py").read_text() == "b = 1\n"


async def test_a_multi_file_edit_says_where_each_file_changed(workspace: Path) -> None:
    from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of

    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.txt").write_text("three\n")
    async with stdio_client(["--root", str(workspace)], mcp_env(private_runtime_dir())) as client:
        for name in ("a.txt", "b.txt"):
            await client.call_tool("read", {"file_path": str(workspace / name)})
        answer = await client.call_tool(
            "edit",
            {
                "files": [
                    {"file_path": str(workspace / "a.txt"), "old_string": "two", "new_string": "2"},
                    {
                        "file_path": str(workspace / "b.txt"),
                        "old_string": "three",
                        "new_string": "3",
                    },
                ]
            },
        )
    said = text_of(answer)
    assert "None" not in said
    assert f"{workspace / 'a.txt'}: 1 replacement at line 2 on disk" in said
    assert f"{workspace / 'b.txt'}: 1 replacement at line 1 on disk" in said
