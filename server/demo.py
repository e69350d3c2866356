"""`readkeeper demo`: a short agent session against the real server, printed as it goes.

It starts `readkeeper serve` as a subprocess on a throwaway workspace and speaks LSP to
it exactly as an editor would; nothing here calls the core directly.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from .client import JsonRpcException, ReadkeeperClient
from .terminal_text import show, terminal
from .words import count as _count

BOLD, PLAIN = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")


def _say(text: str) -> None:
    """Print a line of the session: what the server said may hold a file's name or text,
    so on a terminal its controls and unseen characters are escaped (terminal_text.show)."""
    show(text, sys.stdout)


def _heading(label: str) -> None:
    """A step's heading, bold on a terminal: only the bold is the demo's own escape."""
    shown = terminal(label) if BOLD else label
    print(f"\n{BOLD}{shown}{PLAIN}")


APP = textwrap.dedent(
    '''\
    """A tiny inventory service."""

    from dataclasses import dataclass


    @dataclass
    class Item:
        sku: str
        name: str
        quantity: int = 0


    class Inventory:
        def __init__(self) -> None:
            self._items: dict[str, Item] = {}

        def add(self, item: Item) -> None:
            self._items[item.sku] = item

        def restock(self, sku: str, amount: int) -> int:
            item = self._items[sku]
            item.quantity += amount
            return item.quantity

        def low_stock(self, threshold: int = 5) -> list[Item]:
            return [i for i in self._items.values() if i.quantity < threshold]
    '''
)


def _make_workspace(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "inventory.py").write_text(APP)
    rng = random.Random(7)
    words = ["GET", "POST", "/api/items", "/api/orders", "200", "404", "503", "cache", "miss"]
    lines = [
        f"2026-11-30T08:{i // 60 % 60:02d}:{i % 60:02d}Z worker-{rng.randint(1, 8)} "
        + " ".join(rng.choice(words) for _ in range(12))
        + f" latency_ms={rng.randint(1, 900)} request_id={rng.getrandbits(64):016x}"
        for i in range(1500)
    ]
    (root / "server.log").write_text("\n".join(lines) + "\n")


def _show(label: str, params: dict[str, Any], outcome: Any) -> None:
    """Print one read's step."""
    _heading(label)
    _say(f"  → readkeeper/read {json.dumps(params)}")
    if isinstance(outcome, JsonRpcException):
        data = outcome.data or {}
        _say(f"  ← error {data.get('kind')}: {outcome.message}")
        if data.get("suggestions"):
            _say(f"    suggestions: {data['suggestions']}")
        return
    size = len(json.dumps(outcome))
    file = outcome["file"]
    if outcome["type"] == "file_unchanged":
        _say(f"  ← {json.dumps(outcome)}   ({size} bytes)")
        return
    keys = ("start_line", "num_lines", "total_lines", "tokens", "partial", "next_offset")
    summary = ", ".join(f"{k}={file[k]}" for k in keys if k in file)
    _say(f"  ← text: {summary}   ({size} bytes)")
    shown = file["content"].split("\n")
    for line in shown[:4]:
        _say(f"    {line[:96]}")
    if len(shown) > 4:
        _say(f"    … {len(shown) - 4} more lines")
    if file.get("note"):
        _say(f"    note: {file['note']}")


async def _request(client: ReadkeeperClient, method: str, params: dict[str, Any]) -> Any:
    _say(f"  → {method} {json.dumps(params)}")
    try:
        return await client.request(method, params)
    except JsonRpcException as exc:
        data = exc.data or {}
        first, *rest = exc.message.split("\n")
        _say(f"  ← error {data.get('kind')}: {first}")
        if rest:
            _say(textwrap.indent("\n".join(rest), "      "))
        return None


async def _edits_and_context(client: ReadkeeperClient, root: Path) -> None:
    _heading("6. The agent edits the file it read")
    edit = {
        "file_path": "src/inventory.py",
        "old_string": "item.quantity += amount",
        "new_string": "item.quantity = max(0, item.quantity + amount)",
    }
    result = await _request(client, "readkeeper/edit", edit)
    if result:
        _say(f"  ← {result['replacements']} replacement; the snippet around it:")
        _say(textwrap.indent(result["snippet"], "    "))

    path = root / "src" / "inventory.py"
    _heading("7. Someone changes another line; the agent's edit still applies")
    path.write_text(path.read_text().replace("threshold: int = 5", "threshold: int = 10"))
    _say("  (outside readkeeper: the default threshold goes from 5 to 10)")
    merged = await _request(
        client,
        "readkeeper/edit",
        {
            "file_path": "src/inventory.py",
            "old_string": "if i.quantity < threshold]",
            "new_string": "if i.quantity <= threshold]",
        },
    )
    if merged:
        note = textwrap.fill(merged.get("note", ""), 88, subsequent_indent="    ")
        _say(f"  ← applied, merged={merged.get('merged')}: {note}")

    _heading("8. Someone rewrites the line the agent is about to edit: caught")
    path.write_text(
        path.read_text().replace(
            "[i for i in self._items.values() if i.quantity",
            "[item for item in self._items.values() if item.quantity",
        )
    )
    _say("  (outside readkeeper: a refactoring renames the comprehension variable)")
    await _request(
        client,
        "readkeeper/edit",
        {
            "file_path": "src/inventory.py",
            "old_string": "return [i for i in self._items.values()",
            "new_string": "return [i for i in sorted(self._items.values())",
        },
    )

    _heading("9. Context for the next turn, fitted to a budget")
    (root / "AGENTS.md").write_text("Keep functions small. Run the tests before committing.\n")
    client.protocol.notify(
        "readkeeper/didChangeDiagnostics",
        {
            "items": [
                {
                    "uri": path.as_uri(),
                    "diagnostics": [
                        {
                            # True of the code: restock has no docstring.
                            "range": {
                                "start": {"line": 19, "character": 8},
                                "end": {"line": 19, "character": 15},
                            },
                            "severity": 2,
                            "source": "ruff",
                            "code": "D102",
                            "message": "Missing docstring in public method",
                        }
                    ],
                }
            ]
        },
    )
    # The watcher reports the outside change as it happens; give it a moment to arrive.
    for _ in range(100):
        if client.change_notices:
            break
        await asyncio.sleep(0.05)
    attached = await _request(client, "readkeeper/attachments", {"budget_tokens": 4000})
    if attached:
        for item in attached["attachments"]:
            first = item["content"].split("\n")
            _say(f"  ← {item['type']} ({_count(item['tokens'], 'token')}): {first[0][:80]}")
            for line in _preview(first[1:]):
                _say(f"      {line[:90]}")
        _say(
            f"  used {attached['used_tokens']} of {attached['budget_tokens']} tokens, "
            f"{len(attached['dropped'])} dropped"
        )


def _preview(lines: list[str]) -> list[str]:
    """Up to three lines of an attachment under its title; of a diff, the changed lines
    (its file header says nothing the title does not)."""
    if any(line.startswith("@@") for line in lines):
        changed = [line for line in lines if line[:1] in "-+" and line[:3] not in ("---", "+++")]
        return changed[:4]
    return lines[:2]


async def run_demo() -> int:
    """Play the demo session against a new server on a throwaway workspace, printing
    each step; returns the exit status."""
    with tempfile.TemporaryDirectory(prefix="readkeeper-demo-") as tmp:
        root = Path(tmp)
        _make_workspace(root)
        client = ReadkeeperClient()
        await client.start_server()
        try:
            await client.open_workspace(root)
            _say(f"readkeeper demo: a real server on a throwaway workspace at {root}")
            steps: list[tuple[str, dict[str, Any]]] = [
                ("1. The agent reads a source file", {"file_path": "src/inventory.py"}),
                (
                    "2. It reads it again: nothing changed, so a stub",
                    {"file_path": "src/inventory.py"},
                ),
                (
                    "3. It reads just the restock method",
                    {"file_path": "src/inventory.py", "offset": 20, "limit": 4},
                ),
                (
                    "4. A log far over the token budget comes back cut, with where to go on",
                    {"file_path": "server.log"},
                ),
                ("5. A typo in the path gets a suggestion", {"file_path": "src/inventroy.py"}),
            ]
            for label, params in steps:
                try:
                    outcome = await client.request("readkeeper/read", params)
                except JsonRpcException as exc:
                    outcome = exc
                _show(label, params, outcome)
            await _edits_and_context(client, root)
            stats = await client.request("readkeeper/stats", {})
            total = stats["total"]
            saved = total["tokens_saved_by_stubs"] + total["tokens_saved_by_budgets"]
            _say(
                f"\nstats: {_count(total['reads'], 'read')}, "
                f"{_count(total['dedup_hits'], 'stub')}, "
                f"{total['tokens_returned']} tokens returned, "
                f"{saved} saved, "
                f"{_count(total['edits'], 'edit')}, "
                f"{_count(total['stale_edits_caught'], 'stale edit')} caught"
            )
        finally:
            await client.close()
    return 0


def main() -> int:
    """`readkeeper demo`: the demo session, run to the end."""
    return asyncio.run(run_demo())
