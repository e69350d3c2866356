"""The core: one object that serves every front end (LSP, CLI, and later MCP).

It owns the settings, the workspace, the read-state of every session and the counters,
and it is plain Python: no pygls here, so every rule is testable in-process. Front ends
convert their params with `protocol.structure`, call a method, and unstructure the result.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import attrs

from .errors import ReadkeeperError
from .fileio import OpenedFile, digest, open_regular, read_at_most
from .paths import Workspace
from .protocol import (
    ForgetParams,
    ReadParams,
    ReadResult,
    StatsParams,
    TextResult,
    UnchangedFile,
    UnchangedResult,
)
from .readers import text as text_reader
from .readstate import ReadRecord, ReadStates, Scope, Source
from .settings import Settings, resolve_settings
from .stats import Stats
from .tokens import TokenCounter

# What a `file_unchanged` stub costs the agent, roughly: {"type":"file_unchanged",...}.
STUB_TOKENS = 12


@dataclass(frozen=True)
class Buffer:
    """An editor's in-memory copy of a document."""

    text: str
    version: int | None


class Buffers(Protocol):
    """Where the core learns about open editor documents (the LSP front end)."""

    def get(self, real_path: str) -> Buffer | None: ...


class NoBuffers:
    def get(self, real_path: str) -> Buffer | None:
        return None


class Readkeeper:
    def __init__(
        self,
        roots: list[str] | None = None,
        client_settings: Mapping[str, Any] | None = None,
        buffers: Buffers | None = None,
    ) -> None:
        self.workspace = Workspace()
        self.workspace.set_roots(roots or [])
        self.read_states = ReadStates()
        self.stats = Stats()
        self.buffers: Buffers = buffers or NoBuffers()
        self._settings_lock = threading.Lock()
        self.settings = Settings()
        self.tokens = TokenCounter(self.settings.token_encoding)
        self.configure(client_settings)

    # --- settings -----------------------------------------------------------------------

    def configure(self, client_settings: Mapping[str, Any] | None) -> list[str]:
        """Apply client settings (env still wins); returns warnings for the user."""
        settings, warnings = resolve_settings(client_settings)
        with self._settings_lock:
            self.settings = settings
            self.workspace.allowed = settings.allowed_paths
            if settings.token_encoding != self.tokens.encoding_name:
                self.tokens = TokenCounter(settings.token_encoding)
        return warnings

    # --- read ---------------------------------------------------------------------------

    def read(self, params: ReadParams) -> ReadResult:
        try:
            return self._read(params)
        except ReadkeeperError as exc:
            self.stats.error(params.session, exc.kind)
            raise

    def _read(self, params: ReadParams) -> ReadResult:
        settings = self.settings
        window = _window(params, settings)
        path = self.workspace.resolve(params.file_path, params.session)
        with open_regular(path) as opened:
            if opened.size > settings.max_size_bytes:
                if not window.ranged:
                    raise _too_large(opened, settings)
                return self._read_large(opened, window, params)
            data = read_at_most(opened.fd, settings.max_size_bytes + 1)
        if len(data) > settings.max_size_bytes:  # grew while we looked
            raise _too_large(opened, settings, len(data))
        content_digest = digest(data)
        text, encoding = text_reader.decode_text(data, path)
        source: Source = "disk"
        version: int | None = None
        buffer = self.buffers.get(path)
        if buffer is not None and buffer.text != text:
            # Unsaved changes in the editor: the agent sees what the person sees.
            text, source, version = buffer.text, "buffer", buffer.version
            content_digest = digest(text.encode("utf-8", "surrogatepass"))

        previous = self.read_states.get(params.session, path)
        if (
            not params.force
            and previous is not None
            and not previous.partial
            and previous.scope == "file"
            and previous.source == source
            and previous.digest == content_digest
            and previous.same_view(window.offset, params.limit)
        ):
            self.stats.add(
                params.session,
                reads=1,
                dedup_hits=1,
                tokens_saved_by_stubs=max(0, previous.tokens - STUB_TOKENS),
            )
            self._remember(
                params.session,
                window,
                params,
                opened,
                content_digest,
                "file",
                False,
                previous.tokens,
                source,
                version,
            )
            return UnchangedResult(UnchangedFile(path))

        view = text_reader.view(text, path, encoding, window, content_digest, settings, self.tokens)
        file = view.file
        if source == "buffer":
            file = attrs.evolve(file, unsaved=True, buffer_version=version)
        self._remember(
            params.session,
            window,
            params,
            opened,
            content_digest,
            "file",
            file.partial,
            file.tokens,
            source,
            version,
        )
        self.stats.add(
            params.session,
            reads=1,
            tokens_returned=file.tokens,
            tokens_saved_by_budgets=view.tokens_left_out,
        )
        return TextResult(file)

    def _read_large(
        self, opened: OpenedFile, window: text_reader.Window, params: ReadParams
    ) -> ReadResult:
        view, range_digest = text_reader.stream_range(opened, window, self.settings, self.tokens)
        previous = self.read_states.get(params.session, opened.path)
        if (
            not params.force
            and previous is not None
            and previous.scope == "range"
            and previous.digest == range_digest
            and previous.same_view(window.offset, params.limit)
        ):
            self.stats.add(
                params.session,
                reads=1,
                dedup_hits=1,
                tokens_saved_by_stubs=max(0, previous.tokens - STUB_TOKENS),
            )
            return UnchangedResult(UnchangedFile(opened.path))
        self._remember(
            params.session,
            window,
            params,
            opened,
            range_digest,
            "range",
            False,
            view.file.tokens,
            "disk",
            None,
        )
        self.stats.add(params.session, reads=1, tokens_returned=view.file.tokens)
        return TextResult(view.file)

    def _remember(
        self,
        session: str,
        window: text_reader.Window,
        params: ReadParams,
        opened: OpenedFile,
        content_digest: str,
        scope: Scope,
        partial: bool,
        tokens: int,
        source: Source,
        version: int | None,
    ) -> None:
        self.read_states.put(
            session,
            ReadRecord(
                path=opened.path,
                digest=content_digest,
                scope=scope,
                mtime_ns=opened.mtime_ns,
                size=opened.size,
                offset=window.offset,
                limit=params.limit,
                partial=partial,
                tokens=tokens,
                source=source,
                buffer_version=version,
            ),
        )

    # --- read-state and counters --------------------------------------------------------

    def forget(self, params: ForgetParams) -> dict[str, Any]:
        paths = None
        if params.paths is not None:
            paths = [os.path.realpath(self.workspace.absolute(p)) for p in params.paths]
        dropped = self.read_states.forget(params.session, paths)
        if paths is None:
            self.workspace.forget_grants(params.session)
        return {"session": params.session, "forgotten": dropped}

    def stats_for(self, params: StatsParams) -> dict[str, Any]:
        result = self.stats.snapshot(params.session)
        result["files_in_read_state"] = self.read_states.count(params.session)
        return result


def _window(params: ReadParams, settings: Settings) -> text_reader.Window:
    if params.offset is not None and params.offset < 0:
        raise ReadkeeperError(
            "bad_params",
            f"offset must be 1 or more (the first line is 1), got {params.offset}.",
            field="offset",
        )
    if params.limit is not None and params.limit < 1:
        raise ReadkeeperError(
            "bad_params", f"limit must be 1 or more, got {params.limit}.", field="limit"
        )
    return text_reader.Window(
        offset=max(1, params.offset or 1),
        limit=params.limit or settings.default_limit,
        ranged=params.offset is not None or params.limit is not None,
    )


def _too_large(opened: OpenedFile, settings: Settings, size: int | None = None) -> ReadkeeperError:
    size = size or opened.size
    return ReadkeeperError(
        "too_large",
        f"{opened.path} is {_human(size)} ({size} bytes), over the "
        f"{_human(settings.max_size_bytes)} limit for reading a file whole. "
        "Read it in ranges: offset=1, limit=500 "
        "(or search it first, e.g. grep, to find the lines you need).",
        file_path=opened.path,
        size=size,
        max_size_bytes=settings.max_size_bytes,
        tokens_estimate=(size + 3) // 4,
    )


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


__all__ = ["Buffer", "Buffers", "Readkeeper"]
