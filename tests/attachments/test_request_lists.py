"""Every list a request holds is bounded before any work (protocol/convert.py): a call
names at most 1,000 different paths, and a list holds at most 10,000 entries; repeated
mentions are read once, and the `dropped` list an answer carries stays short however
much was dropped (attack round 8, finding 8: 50,000 mentions made an 11 MB answer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.attachments.model import DROPPED_SHOWN, Dropped, dropped_shown
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import AttachmentsParams, structure
from readkeeper.protocol.batch import ReadManyParams
from readkeeper.protocol.convert import MAX_LIST_ITEMS, MAX_PATHS


def test_a_call_naming_too_many_paths_is_refused_before_any_work() -> None:
    many = [f"f{n}.txt" for n in range(MAX_PATHS + 1)]
    for cls, field in ((AttachmentsParams, "mentions"), (ReadManyParams, "file_paths")):
        with pytest.raises(ReadkeeperError) as refused:
            structure({field: many}, cls)
        assert refused.value.kind == "too_large"
        assert f"names {MAX_PATHS + 1:,} different paths" in refused.value.message
        assert "then the rest in another call" in refused.value.message


def test_repeats_count_once_toward_the_cap() -> None:
    params = structure({"mentions": ["a.txt"] * (MAX_PATHS * 5)}, AttachmentsParams)
    assert params.mentions is not None


def test_any_list_over_the_cap_is_refused_naming_its_field() -> None:
    with pytest.raises(ReadkeeperError) as refused:
        structure({"types": ["file"] * (MAX_LIST_ITEMS + 1)}, AttachmentsParams)
    assert refused.value.kind == "bad_params"
    assert refused.value.data.get("field") == "types"
    assert "send it in parts" in refused.value.message


def test_the_dropped_list_names_the_first_and_counts_the_rest() -> None:
    dropped = [Dropped("file", f"/w/f{n}", f"over the budget: read f{n}", 10) for n in range(5000)]
    shown = dropped_shown(dropped)
    assert len(shown) == DROPPED_SHOWN + 1
    assert shown[-1] == {
        "type": "file",
        "source": None,
        "reason": f"{5000 - DROPPED_SHOWN:,} more of this type were dropped, not listed one "
        "by one to keep this answer small: ask for fewer at a time, or with a larger "
        "budget_tokens",
        "count": 5000 - DROPPED_SHOWN,
    }


def test_repeated_mentions_are_read_once(core: Readkeeper, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    result = core.attachments(AttachmentsParams(types=["file"], mentions=["a.txt"] * 5000))
    assert len(result["attachments"]) == 1
    assert result["dropped"] == []


async def test_mcp_attachments_of_many_mentions_stay_small(workspace: Path) -> None:
    for n in range(60):
        (workspace / f"f{n}.txt").write_text(f"file {n}\n" * 400)
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        repeated = ["f0.txt"] * (MAX_LIST_ITEMS - 1)
        result = await client.call_tool("attachments", {"mentions": repeated, "types": ["file"]})
        assert not result.is_error, text_of(result)[:300]
        assert text_of(result).count("=== file from") == 1
        # Sixty files over a small budget: most are dropped, and the list stays short.
        names = [f"f{n}.txt" for n in range(60)]
        answer = await call(
            client, "attachments", mentions=names, types=["file"], budget_tokens=2000
        )
        assert len(answer["dropped"]) <= DROPPED_SHOWN + 5  # + one per type
        assert sum(d.get("count", 1) for d in answer["dropped"]) + len(
            answer["attachments"]
        ) == len(names)
        many = [f"g{n}.txt" for n in range(MAX_PATHS + 1)]
        refused = await client.call_tool("attachments", {"mentions": many})
        assert error_kind(refused) == "too_large"
        flood = await client.call_tool("attachments", {"mentions": ["f0.txt"] * 50_000})
        assert error_kind(flood) == "bad_params"


async def test_the_dropin_read_multiple_files_is_held_to_the_same_cap(workspace: Path) -> None:
    from mcp_helpers import dropin_client

    async with dropin_client(workspace) as client:
        many = [f"g{n}.txt" for n in range(MAX_PATHS + 1)]
        refused = await client.call_tool("read_multiple_files", {"paths": many})
        assert refused.is_error
        assert f"{MAX_PATHS + 1:,} different paths" in text_of(refused)
