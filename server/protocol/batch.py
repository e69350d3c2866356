"""The contract's type for reading several files in one call: `readkeeper/readMany`
(its result is sent as built: `{results: [{file_path, result?, error?}]}`)."""

from __future__ import annotations

from typing import Literal

import attrs

from .contract import Contract


@attrs.frozen(repr=False, eq=False)
class ReadManyParams(Contract):
    """`readkeeper/readMany`: files read as `readkeeper/read` reads each, in order, within
    an optional total token budget."""

    file_paths: list[str]
    offset: int | None = None
    limit: int | None = None
    pages: str | None = None
    session: str = ""
    force: bool = False
    budget_tokens: int | None = None
    line_format: Literal["cat-n", "anchors"] | None = None
