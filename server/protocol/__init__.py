"""The protocol: the contract's request and result types, and their conversion at the edge.

This package is the one source of the contract's types: the LSP, MCP and CLI front ends
take them from here, and the VS Code extension's `src/protocol.ts` is generated from the
modules below, in this order (`extension/vscode/scripts/gen_protocol.py`):

- `reads`: `readkeeper/read` params and its text, stub, diff, estimate and outline
  results; `forget` and `stats` params;
- `documents`: image, PDF and notebook results, and `ReadResult`, the union of them all;
- `session`: `readkeeper/attachments` params and the results sent as built;
- `changes`: edits, writes, notebook cell edits and change notices;
- `convert`: loose JSON params structured into these types (`bad_params` naming the
  field otherwise), and results unstructured to JSON with absent fields left out.

The types of `documents` are imported when first named (`__getattr__`): they are a
third of the contract's classes, and a server answers `initialize` without them.
Everything else is imported with the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .changes import (
    AnchorEdit,
    ChangeKind,
    ChangesParams,
    ChangesResult,
    DidChangeReadFilesParams,
    EditBatchParams,
    EditFilesParams,
    EditParams,
    EditResult,
    ExternalChange,
    FileChange,
    FileEdit,
    NotebookEditParams,
    NotebookEditResult,
    PlainEdit,
    ReadStateInfo,
    Relocation,
    WriteParams,
    WriteResult,
)
from .convert import converter, structure, unstructure
from .reads import (
    ChangedFile,
    ChangedResult,
    EstimateFile,
    EstimateResult,
    ForgetParams,
    OutlineFile,
    OutlineResult,
    ReadParams,
    StatsParams,
    TextFile,
    TextResult,
    UnchangedFile,
    UnchangedResult,
)

if TYPE_CHECKING:
    from .documents import (
        ImageDimensions,
        ImageFile,
        ImageResult,
        NotebookCell,
        NotebookFile,
        NotebookImage,
        NotebookOutput,
        NotebookResult,
        PartsFile,
        PartsResult,
        PdfFile,
        PdfResult,
        ReadResult,
    )

from .session import (
    ActiveEditor,
    AttachmentsParams,
    AttachmentsResult,
    DiagnosticsParams,
    ForgetResult,
    Position,
    Range,
    StatsResult,
)

# The contract's modules, in the order the TypeScript types are generated from them.
MODULES = ("reads", "documents", "session", "changes")


def __getattr__(name: str) -> Any:
    """A type of `documents` (the one module imported when first named), imported now
    and kept in the package."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import documents

    value = getattr(documents, name)
    globals()[name] = value
    return value


__all__ = [
    "ActiveEditor",
    "AnchorEdit",
    "AttachmentsParams",
    "AttachmentsResult",
    "ChangeKind",
    "ChangedFile",
    "ChangedResult",
    "ChangesParams",
    "ChangesResult",
    "DiagnosticsParams",
    "DidChangeReadFilesParams",
    "EditBatchParams",
    "EditFilesParams",
    "EditParams",
    "EditResult",
    "EstimateFile",
    "EstimateResult",
    "ExternalChange",
    "FileChange",
    "FileEdit",
    "ForgetParams",
    "ForgetResult",
    "ImageDimensions",
    "ImageFile",
    "ImageResult",
    "NotebookCell",
    "NotebookEditParams",
    "NotebookEditResult",
    "NotebookFile",
    "NotebookImage",
    "NotebookOutput",
    "NotebookResult",
    "OutlineFile",
    "OutlineResult",
    "PartsFile",
    "PartsResult",
    "PdfFile",
    "PdfResult",
    "PlainEdit",
    "Position",
    "Range",
    "ReadParams",
    "ReadResult",
    "ReadStateInfo",
    "Relocation",
    "StatsParams",
    "StatsResult",
    "TextFile",
    "TextResult",
    "UnchangedFile",
    "UnchangedResult",
    "WriteParams",
    "WriteResult",
    "converter",
    "structure",
    "unstructure",
]
