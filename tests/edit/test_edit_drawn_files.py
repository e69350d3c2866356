"""An edit never changes a file whose read showed something drawn from its bytes rather
than the bytes (attack round 26): a PDF whose every byte is text decoded as text, and an
edit whose old_string matched its page's words rewrote the content stream (its /Length
left wrong, the PDF broken), the answer's snippet showing bytes the agent never saw.
Such a file is refused `binary`, read or not (never `not_read`: no read would allow it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from document_samples import pdf_of

from helpers import read
from mcp_helpers import dropin_client, error_kind, ok, text_of
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams


def edit_refused(core: Readkeeper, path: Path) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        core.edit(EditParams(str(path), "Hello words", "HACKED"))
    return caught.value


STREAM = b"BT /F1 24 Tf 72 700 Td (Hello words) Tj ET"


def ascii_pdf() -> bytes:
    """A one-page PDF of text bytes only (no NUL, no compressed stream)."""
    return pdf_of(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n%s\nendstream" % (len(STREAM), STREAM),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def test_a_pdf_of_text_bytes_is_never_edited(core: Readkeeper, workspace: Path) -> None:
    path = workspace / "words.pdf"
    path.write_bytes(ascii_pdf())
    before = path.read_bytes()
    unread = edit_refused(core, path)
    assert unread.kind == "binary", unread.message  # not `not_read`: no read would do
    shown = read(core, path)
    assert "Hello words" in str(shown["file"]["content"])  # type: ignore[index]  # the page's text, drawn from the stream
    error = edit_refused(core, path)
    assert error.kind == "binary"
    assert "PDF" in error.message
    assert path.read_bytes() == before


async def test_the_drop_in_refuses_it_and_keeps_every_byte(workspace: Path) -> None:
    path = workspace / "words.pdf"
    path.write_bytes(ascii_pdf())
    before = path.read_bytes()
    async with dropin_client(workspace) as client:
        assert "Hello words" in await ok(client, "read_text_file", path=str(path))
        for dry in (True, False):
            edits = [{"oldText": "Hello words", "newText": "HACKED"}]
            done = await client.call_tool(
                "edit_file", {"path": str(path), "edits": edits, "dryRun": dry}
            )
            if dry:  # the dry run answers what the call would do: be refused
                assert "will be refused (binary)" in text_of(done), text_of(done)
            else:
                assert done.is_error, text_of(done)
                assert error_kind(done) == "binary", text_of(done)
            assert "/Length" not in text_of(done)  # no byte of the file's own shown
    assert path.read_bytes() == before
