"""A settings warning shows every value as it was sent, over LSP as the user wrote it:
JSON (`true`, `"abc"`, `null`, `[]`), never Python's repr (`True`, `'abc'`, `None`,
`()`); an environment variable as the text it was. And a warning too long to show is
marked cut among readkeeper's words before the value, so no value can forge the mark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raw_lsp import RawServer

from helpers import wait_until

ASKED = "the editor does not trust this workspace (restricted mode)"


def _warnings(server: RawServer, count: int) -> list[str]:
    asked = iter(range(100, 10**6))

    def shown() -> list[str]:
        server.request(next(asked), "readkeeper/stats", {})  # reads what came before it
        return [m for m in server.shown_messages() if m.startswith("readkeeper")]

    wait_until(lambda: len(shown()) >= count, f"{count} settings warnings")
    return shown()


def _serve(
    workspace: Path, options: dict[str, Any], pushed: dict[str, Any], **env: str
) -> RawServer:
    server = RawServer(env=env)
    server.initialize(workspace, initializationOptions=options)
    if pushed:
        server.notify("workspace/didChangeConfiguration", {"settings": {"readkeeper": pushed}})
    return server


def test_a_refused_value_and_the_default_are_shown_as_json(workspace: Path) -> None:
    server = _serve(
        workspace,
        {"readAhead": "abc", "maxTokens": True},
        {"defaultLimit": [None], "lineNumbers": False},
        READKEEPER_WATCH_FORCE_POLLING="maybe",
        READKEEPER_WATCH_DEBOUNCE_MS="0",
    )
    try:
        shown = _warnings(server, 6)
        for expected in [
            'setting readkeeper.read_ahead="abc" (expected true or false); '
            "using the next source or the default true",
            "setting readkeeper.max_tokens=true (expected a whole number, not true or false); "
            "using the next source or the default 25000",
            "setting readkeeper.default_limit=[null] (expected a whole number); "
            "using the next source or the default 2000",
            "setting readkeeper.line_numbers=false (expected one of padded, compact); "
            'using the next source or the default "padded"',
            # Environment variables are text: shown as the text they were.
            'environment variable READKEEPER_WATCH_FORCE_POLLING="maybe" (expected true or '
            "false); using the next source or the default false",
            'environment variable READKEEPER_WATCH_DEBOUNCE_MS="0": outside its range 1 to '
            "10,000; using the next source or the default 50",
        ]:
            assert f"readkeeper: ignoring {expected}" in shown, (expected, shown)
        assert not any(word in m for m in shown for word in ("True", "False", "None", "'"))
    finally:
        server.close()


def test_restricted_mode_names_the_held_value_as_json(workspace: Path) -> None:
    server = _serve(
        workspace,
        {"trusted": False, "watcher": "polling", "maxTokens": 99_999},
        {"allowedPaths": ["/elsewhere"]},
    )
    try:
        shown = _warnings(server, 3)
        for expected in [
            f"setting readkeeper.watcher: it runs a program, and {ASKED}. Trust the "
            'workspace to use it; until then it is "inotify".',
            f"setting readkeeper.allowed_paths: it widens the sandbox, and {ASKED}. Trust "
            "the workspace to use it; until then it is [].",
            "setting readkeeper.max_tokens=99999: it is looser than the default 25000, "
            f"and {ASKED}, where a limit may only be tightened. Trust the workspace to use it.",
        ]:
            assert f"readkeeper: ignoring {expected}" in shown, (expected, shown)
    finally:
        server.close()


def test_a_cut_warning_is_marked_before_the_value_which_cannot_forge_the_mark(
    workspace: Path,
) -> None:
    """readkeeper's words come first and end with a colon, `(cut)` among them, as the
    diagnostics' mark (h-fix16d): a value ending in the old mark ` … [cut]`, or holding a
    line break and readkeeper's own words, reads apart from a warning readkeeper cut."""
    forged = "bogus … [cut]"
    broken = "bogus\nreadkeeper (cut): ignoring nothing"
    long = "y" * 1_500 + " … [cut]"
    server = _serve(workspace, {forged: 1, broken: 2, long: 3}, {"maxTokens": "1 … [cut]"})
    try:
        shown = _warnings(server, 4)
        cut = [m for m in shown if "yyy" in m]
        assert len(cut) == 1
        assert cut[0].startswith('readkeeper (cut): ignoring setting readkeeper."yyy'), cut
        assert len(cut[0]) <= 1_000 + len("readkeeper (cut): ")
        assert not cut[0].endswith("[cut]")
        whole = [m for m in shown if "yyy" not in m]
        assert all(m.startswith("readkeeper: ignoring ") for m in whole), whole
        assert all("\n" not in m for m in shown), shown
        said = "\n".join(whole)
        assert 'readkeeper: ignoring setting readkeeper."bogus … [cut]": not a' in said
        assert 'readkeeper."bogus\\nreadkeeper (cut): ignoring nothing": not a' in said
        assert 'readkeeper.max_tokens="1 … [cut]" (expected' in said
    finally:
        server.close()
