"""PDFs and damaged files through `readkeeper mcp`: the text of pages, pages rendered as
image content, and the errors a document read can give."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from mcp_helpers import call, error_kind, mcp_env, private_runtime_dir, stdio_client, text_of


def make_pdf(path: Path, pages: int) -> None:
    with PdfPages(path) as pdf:
        for number in range(1, pages + 1):
            figure = Figure()
            figure.text(0.1, 0.5, f"page {number} says hello")
            pdf.savefig(figure)


async def test_pdf_pages_as_text_and_as_images_and_document_errors(workspace: Path) -> None:
    make_pdf(workspace / "long.pdf", 30)
    make_pdf(workspace / "short.pdf", 2)
    (workspace / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20)
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        whole = await client.call_tool("read", {"file_path": "long.pdf"})
        assert error_kind(whole) == "pages_required"
        assert '"pages": "1-20"}' in text_of(whole)

        some = await client.call_tool("read", {"file_path": "long.pdf", "pages": "3-4"})
        assert not some.is_error, text_of(some)
        assert "page 3 says hello" in text_of(some)
        assert "pages 3-4 of 30" in text_of(some)

        rendered = await client.call_tool(
            "read", {"file_path": "short.pdf", "pages": "1-2", "render": True}
        )
        assert not rendered.is_error, text_of(rendered)
        images = [b for b in rendered.content if isinstance(b, types.ImageContent)]
        assert len(images) == 2
        assert all(image.mime_type == "image/png" for image in images)
        assert rendered.structured_content is not None
        assert rendered.structured_content["type"] == "parts"

        assert error_kind(await client.call_tool("read", {"file_path": "broken.png"})) == (
            "corrupt"
        )
        assert (await call(client, "stats"))["total"]["errors"]["corrupt"] == 1


async def test_pages_rendered_for_an_answer_are_never_change_notices(workspace: Path) -> None:
    # Attack round 21, finding 4: the page the server wrote and sent was reported
    # "modified ... Read it again" by changes and by attachments' changes.
    make_pdf(workspace / "short.pdf", 1)
    args, env = ["--root", str(workspace)], mcp_env(private_runtime_dir())
    async with stdio_client(args, env) as client:
        rendered = await client.call_tool(
            "read", {"file_path": "short.pdf", "pages": "1", "render": True}
        )
        assert not rendered.is_error, text_of(rendered)
        assert "page-0001.png" in text_of(rendered)
        changes = await client.call_tool("changes", {})
        assert "page-0001.png" not in text_of(changes), text_of(changes)
        (workspace / "note.txt").write_text("hello\n")
        mentioned = await client.call_tool("attachments", {"mentions": ["note.txt"]})
        assert not mentioned.is_error, text_of(mentioned)
        assert "page-0001.png" not in text_of(mentioned), text_of(mentioned)
