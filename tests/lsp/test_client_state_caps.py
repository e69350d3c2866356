"""What the client pushes and the server keeps is capped: diagnostics for files without
end, documents opened without end, workspace folders added without end. The server's
peak memory stays under a generous cap, it keeps answering, and `readkeeper/stats` says
what it did not keep."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from raw_lsp import RawServer

from readkeeper.files.paths import MAX_ROOTS
from readkeeper.lsp.documents import MAX_DOCUMENTS

# The interpreter, the core, the caps' worth of kept state and one message in flight
# (measured: diagnostics 160 MB, documents 190 MB; unbounded, the diagnostics repro
# reached 587 MB and the documents one over 400 MB, both still rising).
PEAK_RSS_CAP_KB = 300_000


def peak_rss_kb(server: RawServer) -> int:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(next(row.split()[1] for row in status.splitlines() if row.startswith("VmHWM:")))


def started(workspace: Path) -> RawServer:
    server = RawServer(real=True)  # its own pid: peak_rss_kb
    server.initialize(workspace, initializationOptions={"watch": False})
    return server


def stats(server: RawServer, id_: int) -> dict[str, Any]:
    reply = server.request(id_, "readkeeper/stats", {})
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def test_diagnostics_for_thousands_of_missing_files_stay_bounded(workspace: Path) -> None:
    server = started(workspace)
    try:
        message = "E" * 2000
        where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
        for batch in range(20):
            items = [
                {
                    "uri": (workspace / f"nofile_{batch}_{i}.py").as_uri(),
                    "diagnostics": [{"range": where, "message": message, "severity": 1}] * 5,
                }
                for i in range(2000)
            ]
            server.notify("readkeeper/didChangeDiagnostics", {"items": items})
            stats(server, 10 + batch)
        reply = server.request(101, "readkeeper/attachments", {})
        assert "result" in reply, reply
        assert peak_rss_kb(server) < PEAK_RSS_CAP_KB
        dropped = stats(server, 100)["total"]["client_state_dropped"]
        assert dropped["diagnostics_files"] > 30_000
    finally:
        server.close()


def open_document(server: RawServer, path: Path, text: str) -> None:
    item = {"uri": path.as_uri(), "languageId": "plaintext", "version": 1, "text": text}
    server.notify("textDocument/didOpen", {"textDocument": item})


def test_open_documents_past_the_caps_are_not_tracked(workspace: Path) -> None:
    server = started(workspace)
    try:
        megabyte = "x" * 1_000_000
        for i in range(300):  # 300 MB of open text, past the 64 MB cap
            open_document(server, workspace / f"big{i}.txt", megabyte)
        for i in range(MAX_DOCUMENTS + 100):  # and more documents than the count cap
            open_document(server, workspace / f"small{i}.txt", "y")
        # A change to a document no longer held is ignored, not an error.
        change = {"textDocument": {"uri": (workspace / "big299.txt").as_uri(), "version": 2}}
        server.notify("textDocument/didChange", {**change, "contentChanges": [{"text": "z"}]})
        answered = stats(server, 10)
        assert peak_rss_kb(server) < PEAK_RSS_CAP_KB
        assert "Failed to handle" not in server.stderr
        assert answered["total"]["client_state_dropped"]["documents"] >= 300 - 64 + 100
    finally:
        server.close()


def test_a_tracked_document_grown_past_the_cap_is_let_go(workspace: Path) -> None:
    server = started(workspace)
    try:
        path = workspace / "grow.txt"
        path.write_text("small\n")
        open_document(server, path, "small\n")
        change = {"textDocument": {"uri": path.as_uri(), "version": 2}}
        grown = "g" * 65_000_000
        server.notify("textDocument/didChange", {**change, "contentChanges": [{"text": grown}]})
        assert stats(server, 10)["total"]["client_state_dropped"] == {"documents": 1}
        # Reads go to the disk again, as for a closed document.
        reply = server.request(11, "readkeeper/read", {"file_path": str(path)})
        assert "small" in str(reply["result"])
    finally:
        server.close()


def test_workspace_folders_added_past_the_cap_are_not_roots(workspace: Path) -> None:
    server = started(workspace)
    try:
        folders = []
        for i in range(MAX_ROOTS + 50):
            folder = workspace / f"f{i}"
            folder.mkdir()
            folders.append({"uri": folder.as_uri(), "name": folder.name})
        event = {"added": folders, "removed": []}
        server.notify("workspace/didChangeWorkspaceFolders", {"event": event})
        dropped = stats(server, 10)["total"]["client_state_dropped"]
        assert dropped == {"workspace_folders": 51}  # the first root is the workspace
        assert len(server.shown_messages()) == 1
    finally:
        server.close()


def test_settings_pushed_with_ever_new_bad_values_stay_bounded(workspace: Path) -> None:
    server = started(workspace)
    try:
        for i in range(300):  # each warning quotes its 1 MB value: 300 MB if all were kept
            bad = f"{i}" + "n" * 1_000_000
            server.notify(
                "workspace/didChangeConfiguration",
                {"settings": {"readkeeper": {"max_tokens": bad}}},
            )
        stats(server, 10)
        assert peak_rss_kb(server) < PEAK_RSS_CAP_KB
        # Each new value is told (the last may still be on its way), each one cut.
        shown = server.shown_messages()
        assert len(shown) >= 250
        assert max(map(len, shown)) < 1_100
    finally:
        server.close()


def test_notebook_documents_are_not_kept(workspace: Path) -> None:
    server = started(workspace)
    try:
        for i in range(300):  # 300 MB of cell text if pygls kept it
            uri = (workspace / f"n{i}.ipynb").as_uri()
            cell = {"uri": f"{uri}#cell1", "languageId": "python", "version": 1}
            server.notify(
                "notebookDocument/didOpen",
                {
                    "notebookDocument": {
                        "uri": uri,
                        "notebookType": "jupyter-notebook",
                        "version": 1,
                        "cells": [{"kind": 2, "document": cell["uri"]}],
                    },
                    "cellTextDocuments": [{**cell, "text": "c" * 1_000_000}],
                },
            )
        stats(server, 10)
        assert peak_rss_kb(server) < PEAK_RSS_CAP_KB
        assert "Failed to handle" not in server.stderr
    finally:
        server.close()


def test_stats_cuts_the_names_of_roots_a_client_named(workspace: Path) -> None:
    """Round 42: 20 folders of 300,000 escaped controls each (missing roots) made
    `stats` a 36 MB answer; each name is now cut as answers cut names."""
    server = RawServer(real=True)  # its own pid: peak_rss_kb
    server.initialize(workspace)  # watching: missing roots are the watcher's to list
    try:
        long = "%01" * 300_000
        base = workspace.parent.as_uri()  # beside the workspace: not within a root
        folders = [{"uri": f"{base}/long{i}{long}", "name": "n"} for i in range(20)]
        event = {"added": folders, "removed": []}
        server.notify("workspace/didChangeWorkspaceFolders", {"event": event})
        answer = stats(server, 10)
        for n in range(11, 300):  # until the watcher has set the roots up
            if answer["watcher"].get("missing_roots"):
                break
            time.sleep(0.1)
            answer = stats(server, n)
        assert len(answer["watcher"]["missing_roots"]) == 20
        assert len(json.dumps(answer)) < 200_000
        assert "characters cut" in json.dumps(answer["watcher"])
    finally:
        server.close()
