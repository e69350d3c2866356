"""Every whole-number setting has a range, held wherever settings are resolved: a value
from any source outside it is refused (below) or held at the most it allows (above),
with a warning naming the setting, its range and what is used instead."""

from __future__ import annotations

import math
from typing import Any

import pytest

from readkeeper.setting_values import MAX_WAIT_MS, MAX_WATCH_WAIT_MS
from readkeeper.settings import SETTINGS, SettingSpec, resolve_settings

NUMBERS = [s for s in SETTINGS if s.minimum is not None]
# What the attacker sent (and more): each must leave a setting in its range.
HOSTILE: list[Any] = [0, -1, 2**31, 2**63, 10**13, 1e308, -1e308, 2.5, "1e3", "", [], {}]
NON_FINITE: list[Any] = [math.nan, math.inf, -math.inf, "nan", "inf", "Infinity"]


def test_every_whole_number_setting_has_a_range_that_holds_its_default() -> None:
    assert len(NUMBERS) == 32
    for spec in NUMBERS:
        assert spec.maximum is not None, spec.name
        assert spec.minimum <= spec.default <= spec.maximum, spec.name
    # A wait past the platform's time_t ends the thread that waits (watch/worker.py).
    waits = {s.name: s.maximum for s in NUMBERS if s.name.endswith("_ms")}
    # A quiet time and a poll, not a watcher that never tells.
    assert waits.pop("watch_debounce_ms") == MAX_WATCH_WAIT_MS == 10_000
    assert waits.pop("watch_poll_interval_ms") == MAX_WATCH_WAIT_MS
    assert set(waits.values()) == {MAX_WAIT_MS}


def _in_range(spec: SettingSpec, value: Any) -> bool:
    assert spec.minimum is not None
    assert spec.maximum is not None
    return isinstance(value, int) and spec.minimum <= value <= spec.maximum


@pytest.mark.parametrize("trusted", [True, False])
@pytest.mark.parametrize("raw", HOSTILE + NON_FINITE, ids=repr)
def test_no_source_sets_a_number_outside_its_range(raw: Any, trusted: bool) -> None:
    client = {s.name: raw for s in NUMBERS}
    env = {s.env_var: str(raw) for s in NUMBERS}
    for given, environ in ((client, {}), ({}, env)):
        settings, warnings = resolve_settings(given, env=environ, trusted=trusted)
        for spec in NUMBERS:
            assert _in_range(spec, getattr(settings, spec.name)), (spec.name, raw)
        for warning in warnings:
            assert warning.startswith("readkeeper: ignoring "), warning


def test_the_warning_names_the_setting_its_range_and_what_is_used() -> None:
    settings, warnings = resolve_settings({"git_timeout_ms": 10**13}, env={})
    assert settings.git_timeout_ms == MAX_WAIT_MS
    assert warnings == [
        "readkeeper: ignoring setting readkeeper.git_timeout_ms=10000000000000: "
        "outside its range 1 to 3,600,000; using 3,600,000, the most it allows"
    ]
    settings, warnings = resolve_settings({}, env={"READKEEPER_WATCH_DEBOUNCE_MS": "0"})
    assert settings.watch_debounce_ms == 50
    assert warnings == [
        'readkeeper: ignoring environment variable READKEEPER_WATCH_DEBOUNCE_MS="0": '
        "outside its range 1 to 10,000; using the next source or the default 50"
    ]
    # Below the range, the next source wins, as for any invalid value.
    settings, _ = resolve_settings({"max_tokens": 77}, env={"READKEEPER_MAX_TOKENS": "-1"})
    assert settings.max_tokens == 77


def test_restricted_mode_holds_a_tighter_wait_in_its_range_too() -> None:
    """A workspace may tighten a limit (a longer poll interval), never past the range."""
    settings, warnings = resolve_settings(
        {"watch_poll_interval_ms": 10**13, "watch_debounce_ms": 2**63}, env={}, trusted=False
    )
    assert (settings.watch_poll_interval_ms, settings.watch_debounce_ms) == (10_000, 10_000)
    assert len(warnings) == 2
    assert all("outside its range" in w for w in warnings)


def test_whole_numbers_in_any_spelling_are_taken() -> None:
    settings, warnings = resolve_settings(
        {"max_tokens": 300.0, "default_limit": " 12 "}, env={"READKEEPER_PDF_MAX_PAGES": "3"}
    )
    assert (settings.max_tokens, settings.default_limit, settings.pdf_max_pages) == (300, 12, 3)
    assert warnings == []
    settings, warnings = resolve_settings({"progress_after_ms": 0}, env={})
    assert settings.progress_after_ms == 0
    assert warnings == []
