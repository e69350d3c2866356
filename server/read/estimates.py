"""What a read would cost (`estimate=true`): the answer without the content, and with
nothing recorded, so the read itself is never answered with a stub."""

from __future__ import annotations

from .. import words
from ..protocol import EstimateFile, EstimateResult, TextFile
from .readers import DocumentView


def text_estimate(file: TextFile) -> EstimateResult:
    """What a text read with these parameters would cost."""
    return EstimateResult(
        EstimateFile(
            file_path=file.file_path,
            tokens=file.tokens,
            num_lines=file.num_lines,
            total_lines=file.total_lines,
            partial=file.partial,
            note=(
                "A read with these parameters would send "
                f"{words.count(file.num_lines, 'line', grouped=True)}, "
                f"{words.count(file.tokens, 'token', grouped=True)}. Nothing was recorded: "
                "the read itself is not a stub."
            ),
        )
    )


def document_estimate(path: str, document: DocumentView) -> EstimateResult:
    """What a read of an image, PDF or notebook with these parameters would cost."""
    return EstimateResult(
        EstimateFile(
            file_path=path,
            tokens=document.tokens,
            num_lines=0,
            total_lines=None,
            partial=document.partial,
            note=f"A read with these parameters would send a {document.result.type} result "
            f"of {document.tokens:,} tokens. Nothing was recorded.",
        )
    )
