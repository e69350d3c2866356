"""`readkeeper stats --html FILE`: the picture of the running server's session, fetched
over its attach socket, as a self-contained HTML page in which every value from the
repository (file names above all) stays text."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_cli_terminal import _on_a_terminal

from conftest import start_session
from helpers import eventually
from mcp_helpers import mcp_env, private_runtime_dir
from readkeeper.attach import discovery
from readkeeper.attach.client import AttachClient
from readkeeper.errors import ReadkeeperError
from readkeeper.picture import page

# A folder and file name that close the SVG, open a script and break out of quotes.
# (Folders: a name holds no slash, so `</script>` and `</svg>` span two components.)
HOSTILE_DIR = "<script>alert('x')</script>\"q'<"
HOSTILE_FILE = "svg><img src=x onerror=alert(1)>.py"


class Shape(HTMLParser):
    """The elements and the text of a page, as a browser's parser finds them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def shape(html: str) -> Shape:
    parsed = Shape()
    parsed.feed(html)
    parsed.close()
    return parsed


def event(path: str, at_ms: int, tokens: int, saved: int, kind: str = "text") -> dict[str, Any]:
    return {
        "at_ms": at_ms,
        "session": "s",
        "kind": kind,
        "path": path,
        "tokens": tokens,
        "saved": saved,
        "ms": 1.0,
    }


def test_a_hostile_path_is_text_in_every_part_of_the_page() -> None:
    hostile = f"/w/{HOSTILE_DIR}/{HOSTILE_FILE}"
    history = {
        "events": [
            event(hostile, 1_700_000_000_000, 500, 0),
            event(hostile, 1_700_000_060_000, 0, 480, "file_unchanged"),
        ],
        "cap": 5000,
        "dropped": 0,
    }
    html = page({"history": history, "total": {"reads": 2}}, title=f"in {hostile}")
    found = shape(html)
    assert "script" not in found.tags
    assert "img" not in found.tags
    assert not any(name.startswith("on") for name, _ in found.attrs)
    assert found.tags.count("svg") == 1  # the chart, never closed early and reopened
    # The path is shown as it is: in the title, the per-file table and the calls.
    assert sum(hostile in text for text in found.text) >= 3
    # The page loads and runs nothing.
    csp = [v for name, v in found.attrs if name == "content" and v and "default-src" in v]
    assert csp == [
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"
    ]
    assert "<script" not in html


def test_the_chart_draws_sent_and_saved_and_the_page_says_what_was_dropped() -> None:
    history = {
        "events": [event("/w/a.py", 1_000 + n * 1_000, 100, 50) for n in range(10)],
        "cap": 10,
        "dropped": 7,
    }
    html = page({"history": history})
    found = shape(html)
    assert found.tags.count("rect") >= 10  # a sent and a saved bar per call here
    assert any("7 older ones were dropped" in text for text in found.text)
    assert any("Only the newest 10 calls" in text for text in found.text)


def test_no_calls_yet_is_said_not_drawn() -> None:
    found = shape(page({"history": {"events": [], "cap": 5000, "dropped": 0}}))
    assert "svg" not in found.tags
    assert any("No calls yet" in text for text in found.text)


def run_stats(workspace: Path, runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "readkeeper", "stats", *args],
        cwd=workspace,
        env=mcp_env(runtime),
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_stats_html_pictures_the_editor_servers_session(
    workspace: Path, tmp_path: Path
) -> None:
    runtime = private_runtime_dir()
    folder = workspace / HOSTILE_DIR
    folder.mkdir(parents=True)
    hostile = folder / HOSTILE_FILE
    hostile.write_text("".join(f"line_{n} = {n}\n" for n in range(200)))
    session = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
        await eventually(found.exists, f"the editor's server to publish {found}")
        await session.read(hostile)
        await session.read(hostile)  # a stub: what readkeeper saved
        out = tmp_path / "session.html"
        ran = await asyncio.to_thread(run_stats, workspace, runtime, "--html", str(out))
        assert ran.returncode == 0, ran.stderr
        assert "wrote the picture of 2 calls" in ran.stderr
        html = out.read_text()
        parsed = shape(html)
        assert "script" not in parsed.tags
        assert "img" not in parsed.tags
        assert parsed.tags.count("rect") >= 2  # the read's tokens, the stub's saving
        assert any(str(hostile) in text for text in parsed.text)
        assert any("file_unchanged" in text for text in parsed.text)
    finally:
        await session.client.close()


async def test_stats_shows_the_user_every_agents_sessions_and_changes_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each door's sessions are its own (state/sessions.py): the editor's chat and an
    # attached agent both name "chat-1"; `readkeeper stats`, the user's own view, shows
    # both, the attached one labelled with its connection, and may call nothing else.
    runtime = private_runtime_dir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    (workspace / "a.txt").write_text("a\n")
    session = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
        await eventually(found.exists, f"the editor's server to publish {found}")
        await session.read(workspace / "a.txt", session="chat-1")
        agent = AttachClient.connect([str(workspace)])
        assert agent is not None
        agent.call("read", {"file_path": "a.txt", "session": "chat-1"})
        agent.close()
        ran = await asyncio.to_thread(run_stats, workspace, runtime)
        assert ran.returncode == 0, ran.stderr
        named = [e["session"] for e in json.loads(ran.stdout)["history"]["events"]]
        assert named[0] == "chat-1"
        assert named[1].startswith("attach-")
        assert named[1].endswith(":chat-1")
        viewer = AttachClient.connect([str(workspace)], viewer=True)
        assert viewer is not None
        with pytest.raises(ReadkeeperError) as refused:
            viewer.call("forget", {"session": "chat-1"})
        assert refused.value.kind == "unsupported"
        viewer.close()
    finally:
        await session.client.close()


def test_stats_without_a_running_server_says_what_to_do(workspace: Path) -> None:
    ran = run_stats(workspace, private_runtime_dir(), "--html", "unused.html")
    assert ran.returncode == 2
    assert ran.stderr.startswith(f"readkeeper: no readkeeper serves {workspace.resolve()}")
    assert "Open the folder in the editor" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
    assert not (workspace / "unused.html").exists()


async def test_stats_on_a_terminal_shows_a_file_names_controls_escaped(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = private_runtime_dir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    named = workspace / "a\x9b31mred\x1b]0;pwned\x07.txt"
    named.write_text("x\n")
    session = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
        await eventually(found.exists, f"the editor's server to publish {found}")
        await session.read(named)
        status, shown = await asyncio.to_thread(_on_a_terminal, "stats", cwd=workspace)
        assert status == 0, shown
        assert "a\\u009b31mred" in shown  # JSON's own escape of the C1 CSI
        assert "\x9b" not in shown
        assert "\x1b" not in shown
    finally:
        await session.client.close()


# What a name may hold that must never reach the page raw: a byte that is not UTF-8
# (os.fsdecode's lone surrogate, which no encoder writes), the bidirectional overrides
# and isolates, the marks and the zero-width characters (each makes a name read as
# another one).
UNSEEN = ["\udcff", "\u202a", "\u202e", "\u2066", "\u2069", "\u200e", "\u200f", "\u200b"]


def test_a_names_unseen_characters_are_shown_escaped_in_the_page() -> None:
    tricky = "/w/x" + "".join(UNSEEN) + "gnp.exe.txt"
    history = {"events": [event(tricky, 1_700_000_000_000, 10, 0)], "cap": 5000, "dropped": 0}
    html = page({"history": history, "total": {}}, title=f"in {tricky}")
    html.encode("utf-8")  # a lone surrogate would raise here
    assert not any(char in html for char in UNSEEN)
    text = "".join(shape(html).text)
    assert "\\udcff\\u202a\\u202e\\u2066\\u2069\\u200e\\u200f\\u200bgnp.exe.txt" in text


def test_the_page_replaces_its_file_whole_or_not_at_all(tmp_path: Path) -> None:
    from readkeeper.cli_stats import write_whole

    out = tmp_path / "session.html"
    out.write_text("the earlier picture\n")
    with pytest.raises(UnicodeEncodeError):
        write_whole(str(out), "half \udcff")
    assert out.read_text() == "the earlier picture\n"
    assert [p.name for p in tmp_path.iterdir()] == ["session.html"]  # no temporary left
    write_whole(str(out), "the new picture\n")
    assert out.read_text() == "the new picture\n"


async def test_stats_html_of_a_name_that_is_not_utf8_writes_the_page(
    workspace: Path, tmp_path: Path
) -> None:
    runtime = private_runtime_dir()
    named = Path(os.fsdecode(bytes(workspace) + b"/x\xffy\xe2\x80\xaetxt.exe.txt"))
    named.write_text("hello\n" * 50)
    out = tmp_path / "session.html"
    out.write_text("the earlier picture\n")
    session = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
        await eventually(found.exists, f"the editor's server to publish {found}")
        await session.read(named)
        ran = await asyncio.to_thread(run_stats, workspace, runtime, "--html", str(out))
        assert ran.returncode == 0, ran.stderr
        assert "Traceback" not in ran.stderr
        html = out.read_text(encoding="utf-8")
        assert "x\\udcffy\\u202etxt.exe.txt" in html
        assert "\u202e" not in html
        # A folder that is not there: refused by the CLI's rule, on one line.
        missing = tmp_path / "nowhere" / "session.html"
        ran = await asyncio.to_thread(run_stats, workspace, runtime, "--html", str(missing))
        assert ran.returncode == 2
        assert ran.stderr.startswith("readkeeper: cannot write ")
        assert len(ran.stderr.strip().splitlines()) == 1
    finally:
        await session.client.close()


async def test_stats_on_a_terminal_shows_a_names_format_characters_escaped(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # JSON leaves a bidirectional override and a zero-width character raw; on a
    # terminal the name would read reversed (attack round 8, finding 12(b)).
    runtime = private_runtime_dir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    named = workspace / "x\u202egnp.exe\u200b.txt"
    named.write_text("x\n")
    session = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
        await eventually(found.exists, f"the editor's server to publish {found}")
        await session.read(named)
        status, shown = await asyncio.to_thread(_on_a_terminal, "stats", cwd=workspace)
        assert status == 0, shown
        assert "\u202e" not in shown
        assert "\u200b" not in shown
        assert "x\\u202egnp.exe\\u200b.txt" in shown
    finally:
        await session.client.close()


# What a terminal acts on or shows reordered or hidden that JSON leaves raw inside a
# string: a C1 control (CSI), DEL, the bidirectional override and isolates, a zero-width
# character, NEL and the line separator (attack round 9, finding 3).
RAW_IN_JSON = ["\x9b", "\x7f", "\u202e", "\u2066", "\u2069", "\u200b", "\x85", "\u2028"]


async def test_stats_json_holds_no_character_a_terminal_acts_on_even_piped(
    workspace: Path,
) -> None:
    # Piped to `less -R`, a file or a log, then shown: JSON's own escapes say the same
    # name to a program, and nothing in them moves a cursor or reverses a line.
    runtime = private_runtime_dir()
    named = workspace / ("n" + "".join(RAW_IN_JSON) + "gnp.exe.txt")
    named.write_text("x\n")
    session = await start_session(workspace, env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        found = Path(discovery.discovery_path(str(runtime / "readkeeper"), str(workspace)))
        await eventually(found.exists, f"the editor's server to publish {found}")
        await session.read(named)
        ran = await asyncio.to_thread(run_stats, workspace, runtime)
        assert ran.returncode == 0, ran.stderr
        assert not [char for char in RAW_IN_JSON if char in ran.stdout], repr(ran.stdout)
        assert str(named) in json.dumps(json.loads(ran.stdout), ensure_ascii=False)
    finally:
        await session.client.close()


def test_stats_says_a_hostile_folder_name_escaped_on_a_terminal(workspace: Path) -> None:
    # The folder is the current one or --root: a name the user may never have typed.
    odd = workspace / "w\x9b31m\u202ex"
    odd.mkdir()
    status, shown = _on_a_terminal("stats", cwd=odd)
    assert status == 2
    assert "no readkeeper serves" in shown
    assert not [char for char in RAW_IN_JSON if char in shown], repr(shown)
    missing = workspace / "gone\x9b\u2066"
    status, shown = _on_a_terminal("stats", "--root", str(missing), cwd=workspace)
    assert status == 2
    assert "does not exist" in shown
    assert not [char for char in RAW_IN_JSON if char in shown], repr(shown)
