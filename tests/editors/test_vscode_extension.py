"""The VS Code extension (extension/vscode), run from `bash tests/run`.

- its settings in package.json are the server's settings table (one source of truth);
- its protocol types (src/protocol.ts) are generated from server/protocol/;
- lint (`tsc --noEmit`, strict) and the esbuild bundle;
- its unit tests (node's test runner, the `vscode` API stubbed) and its end-to-end test
  (the extension's tool handlers, diagnostics forwarder and chat participant against
  this Python's live readkeeper, over vscode-jsonrpc).

The node tests need `npm ci` in extension/vscode (`bash tests/run` and .ci/run do it);
without node_modules they skip and say so, except in CI (READKEEPER_NO_SKIP=1), where
that skip is a failure. The heavy test in a real VS Code (code-server + Chromium) is
extension/vscode/test/e2e-code-server.sh, run by .ci/run after this suite.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from readkeeper.settings import SETTINGS

EXTENSION = Path(__file__).resolve().parents[2] / "extension" / "vscode"
SYNC = EXTENSION / "scripts" / "sync_settings.py"
GEN_PROTOCOL = EXTENSION / "scripts" / "gen_protocol.py"

_no_node = pytest.mark.skipif(
    shutil.which("npm") is None or not (EXTENSION / "node_modules").is_dir(),
    reason="npm or extension/vscode/node_modules missing: install Node 20+ and run "
    "`bash tests/run` (it runs `npm ci` in extension/vscode), or .ci/run",
)


def needs_node(test: Callable[[], None]) -> Callable[[], None]:
    """Skips without node; in CI (READKEEPER_NO_SKIP=1) that skip is a failure."""
    marked: Callable[[], None] = pytest.mark.ci_required(_no_node(test))
    return marked


def test_package_json_settings_mirror_the_server() -> None:
    sync = runpy.run_path(str(SYNC))
    package = json.loads((EXTENSION / "package.json").read_text())
    assert sync["synced"](json.loads(json.dumps(package))) == package, (
        "extension/vscode/package.json is out of date with server/settings.py: run "
        ".venv/bin/python extension/vscode/scripts/sync_settings.py"
    )
    server_section = next(
        s for s in package["contributes"]["configuration"] if s["title"] == "Server"
    )
    assert set(server_section["properties"]) == {f"readkeeper.{s.camel_name}" for s in SETTINGS}
    limits = json.loads((EXTENSION / "src" / "common" / "limits.json").read_text())
    assert limits == sync["limits"](), "src/common/limits.json is stale: run sync_settings.py"


def test_protocol_ts_is_generated_from_protocol_py() -> None:
    generator = runpy.run_path(str(GEN_PROTOCOL))
    committed = (EXTENSION / "src" / "protocol.ts").read_text(encoding="utf-8")
    wanted: str = generator["generate"]()
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            wanted.splitlines(keepends=True),
            "src/protocol.ts (committed)",
            "src/protocol.ts (from server/protocol/)",
        )
    )
    assert not diff, (
        "extension/vscode/src/protocol.ts is out of date with server/protocol/: run "
        f".venv/bin/python extension/vscode/scripts/gen_protocol.py\n{diff}"
    )


@contextlib.contextmanager
def _one_at_a_time() -> Iterator[None]:
    """The npm scripts all compile into the same out/ and dist/ folders: parallel workers
    (or two test runs on one machine) take turns, by a lock on the extension's folder."""
    fd = os.open(EXTENSION, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _npm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    env["READKEEPER_PYTHON"] = sys.executable
    with _one_at_a_time():
        return subprocess.run(
            ["npm", "run", "--silent", *args],
            cwd=EXTENSION,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _check(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


@needs_node
def test_lint_and_build() -> None:
    _check(_npm("lint"))
    _check(_npm("build"))
    assert (EXTENSION / "dist" / "extension.js").is_file()


@needs_node
# Compiling the tests, then real `python -m venv` and pip runs (the extension's private
# environment, tests/unit/environment.test.ts): over the suite's default on a busy machine.
@pytest.mark.timeout(300)
def test_unit_tests() -> None:
    proc = _npm("test:unit")
    _check(proc)
    assert re.search(r"\bpass [1-9]", proc.stdout), proc.stdout


@needs_node
def test_end_to_end_against_the_live_server() -> None:
    proc = _npm("test:e2e")
    _check(proc)
    assert re.search(r"\bpass [1-9]", proc.stdout), proc.stdout
    # A protocol method missing from the server skips its case: that is a failure here.
    assert re.search(r"\bskipped 0\b", proc.stdout), proc.stdout
