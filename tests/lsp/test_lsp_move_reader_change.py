"""`readkeeper/move` over LSP with a real server: a file a read at its new path reads
another way carries nothing the session read of it (attack round 31, B1). A notebook
read as cells 1-2 and renamed to .txt past max_size_bytes was told it could be edited
without reading again, then every edit was refused `not_read` naming a read of every
cell, which was refused `too_large`."""

from __future__ import annotations

import json
from pathlib import Path

from notebook_cells import numbered_notebook

from conftest import start_session

NOTEBOOK = numbered_notebook(60, secret=False)


async def test_a_notebook_renamed_txt_past_the_cap_carries_no_read_and_names_the_way_back(
    workspace: Path,
) -> None:
    notebook, text = workspace / "nb.ipynb", workspace / "nb.txt"
    notebook.write_text(NOTEBOOK)
    assert len(NOTEBOOK) > 4096
    lsp = await start_session(workspace, settings={"max_size_bytes": 4096})
    try:
        read = await lsp.read(notebook, limit=2)
        assert read["type"] == "notebook"
        moved = await lsp.client.request(
            "readkeeper/move", {"source": str(notebook), "destination": str(text)}
        )
        assert moved["read_state_followed"] == 0
        note = moved["note"]
        assert "without reading again" not in note, note
        assert "(as text, not as a notebook)" in note, note
        back = json.dumps({"source": str(text), "destination": str(notebook)})
        assert f"readkeeper/move {back}" in note, note
        assert "readkeeper/read" not in note, note
        error = await lsp.error(
            "readkeeper/edit",
            {"file_path": str(text), "old_string": "x = 0\\n", "new_string": "x = 9\\n"},
        )
        assert error.data["kind"] == "too_large", error.message
        # The way back: moved again, a notebook again, read and edited as one.
        moved = await lsp.client.request(
            "readkeeper/move", {"source": str(text), "destination": str(notebook)}
        )
        assert "(as a notebook, not as text): read it before" in moved["note"]
        await lsp.read(notebook)
        await lsp.client.request(
            "readkeeper/edit",
            {"file_path": str(notebook), "old_string": "x = 0\\n", "new_string": "x = 9\\n"},
        )
        assert "x = 9\\n" in notebook.read_text()
    finally:
        await lsp.client.close()
