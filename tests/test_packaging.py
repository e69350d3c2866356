"""The packages: `python -m build` makes an sdist and a wheel, and the wheel alone, in a
fresh virtual environment, gives a working `readkeeper`.

The wheel is built the way `python -m build` builds it (the sdist first, then the wheel
from the unpacked sdist), so a file the build needs but the sdist leaves out fails here.
It is built without build isolation (the backend from this environment, a test extra):
no download, and the same backend every run.

The fresh environment is `python -m venv` without system site-packages, so only the
wheel and the dependencies its metadata declares are in it. They come from a wheelhouse:
a cache folder of dependency wheels, filled from the package index only when the
offline install cannot resolve (the first run, or after a dependency changed), then
installed with `--no-index`. So a run is fast and needs no network, and still resolves
every dependency from the wheel's own metadata: a dependency missing from pyproject.toml
fails the smoke runs, as it would for a user. The environment is made `--without-pip`
and pip is this environment's, pointed at it with `pip --python` (the same pip, without
the ten seconds ensurepip takes on a small machine).

Everything runs from a folder outside the source tree, with PYTHONPATH cleared, and the
test asserts that `readkeeper` is imported from the fresh environment.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from raw_lsp import RawServer

REPO = Path(__file__).resolve().parent.parent
# Source folder -> the import package it becomes (pyproject.toml's package-dir).
SOURCES = {REPO / "server": "readkeeper", REPO / "attachments": "readkeeper/attachments"}
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
STEP_TIMEOUT_S = 300  # a cold wheelhouse downloads ~40 MB of dependencies
STARTUP_TIMEOUT_S = 60  # a server's first start on a busy two-core machine


def _wheelhouse() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "readkeeper-tests" / "wheelhouse"


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One test run at a time fills or reads the wheelhouse (several checkouts may share
    it)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
    )
    assert proc.returncode == 0, (
        f"{' '.join(map(str, command))} exited with {proc.returncode}:\n"
        f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def _install(wheel: Path, venv_python: Path, cwd: Path) -> None:
    install = [
        *PIP,
        "--python",
        venv_python,
        "install",
        "--no-compile",
        "--no-index",
        "--find-links",
        _wheelhouse(),
        wheel,
    ]
    with _locked(_wheelhouse()):
        offline = subprocess.run(
            [str(c) for c in install],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
        )
        if offline.returncode == 0:
            return
        # A dependency is not in the wheelhouse yet: fetch wheels for all of them (the
        # index this machine's pip is set up with), then install offline again.
        _run(*PIP, "wheel", "--quiet", "--wheel-dir", _wheelhouse(), wheel, cwd=cwd)
        for ours in _wheelhouse().glob("readkeeper-*.whl"):
            ours.unlink()  # only dependencies are kept: the wheel under test is `wheel`
        _run(*install, cwd=cwd)


def _expected_modules() -> set[str]:
    """Every module and data file of the source packages, as wheel paths."""
    expected = set()
    for folder, package in SOURCES.items():
        for path in folder.rglob("*"):
            wanted = path.suffix == ".py" or path.name == "py.typed"
            if wanted and path.is_file() and "__pycache__" not in path.parts:
                expected.add(f"{package}/{path.relative_to(folder).as_posix()}")
    return expected


@pytest.mark.ci_required
@pytest.mark.timeout(900)  # a cold wheelhouse downloads; a warm run takes ~30 s
def test_wheel_installs_and_runs_in_a_fresh_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user's shell: nothing points Python at the source tree or at this environment.
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSAFEPATH"):
        monkeypatch.delenv(name, raising=False)
    env = dict(os.environ)
    try:
        importlib.metadata.version("build")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("`build` is not installed (a test extra: .venv/bin/pip install -e '.[test]')")
    outside = tmp_path / "elsewhere"  # the working folder of every step
    outside.mkdir()
    dist = tmp_path / "dist"

    # 1. `python -m build`: the sdist, then the wheel from it.
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, REPO, cwd=outside)
    wheels = list(dist.glob("readkeeper-*.whl"))
    sdists = list(dist.glob("readkeeper-*.tar.gz"))
    assert len(wheels) == 1, wheels
    assert len(sdists) == 1, sdists
    wheel = wheels[0]

    # Everything the source packages hold is in the wheel (a subpackage left out of
    # pyproject.toml's `packages` would be missing), and the console script is declared.
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(
            archive.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")
        )
    missing = _expected_modules() - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    assert "readkeeper = readkeeper.cli:main" in entry_points, entry_points
    # The MIT license travels with the wheel (PEP 639: dist-info/licenses/), and the
    # metadata names it and the platforms the project supports.
    licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert licenses, f"LICENSE is not in the wheel: {sorted(names)[:20]}"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(licenses[0]) == (REPO / "LICENSE").read_bytes()
        metadata = next(
            archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA")
        )
    assert "License-Expression: MIT" in metadata, metadata[:2000]
    assert "License-File: LICENSE" in metadata, metadata[:2000]
    for platform in ("Operating System :: POSIX :: Linux", "Operating System :: MacOS"):
        assert f"Classifier: {platform}" in metadata, metadata[:2000]
    with tarfile.open(sdists[0]) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    for needed in ("pyproject.toml", "README.md", "LICENSE", "server/py.typed", "server/cli.py"):
        assert needed in members, f"{needed} is not in the sdist"

    # 2. A fresh venv with the wheel and its declared dependencies only.
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=outside)
    python = venv / "bin" / "python"
    _install(wheel, python, outside)

    # The package, its subpackages and the console script come from the fresh venv.
    imported = _run(
        python,
        "-c",
        "import readkeeper, readkeeper.read.readers, readkeeper.attachments, readkeeper.cli\n"
        "print(readkeeper.__file__)",
        cwd=outside,
        env=env,
    ).strip()
    assert Path(imported).resolve().is_relative_to(venv.resolve()), imported
    if sys.platform.startswith("linux"):  # the watcher reads inotify itself: no watchdog
        spec = "import importlib.util; print(importlib.util.find_spec('watchdog'))"
        assert _run(python, "-c", spec, cwd=outside, env=env).strip() == "None"
    readkeeper = venv / "bin" / "readkeeper"
    assert readkeeper.read_text().startswith(f"#!{python}"), readkeeper.read_text()[:200]

    # 3. The commands a user runs first.
    assert "usage: readkeeper" in _run(readkeeper, "--help", cwd=outside, env=env)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("def restock(sku):\n    return sku\n")
    shown = _run(readkeeper, "read", "app.py", "--root", workspace, cwd=outside, env=env)
    assert "def restock(sku):" in shown, shown

    # 4. `readkeeper serve` answers initialize and a read over LSP on stdio.
    server = RawServer(str(readkeeper), "serve", env=env, cwd=outside)
    try:
        # Deadlines, not delays: the first start imports (and compiles) every module.
        reply = server.request(
            1,
            "initialize",
            {"processId": os.getpid(), "rootUri": workspace.resolve().as_uri(), "capabilities": {}},
            timeout=STARTUP_TIMEOUT_S,
        )
        assert reply.get("result", {}).get("serverInfo", {}).get("name") == "readkeeper", reply
        server.notify("initialized", {})
        read = server.request(
            2, "readkeeper/read", {"file_path": "app.py"}, timeout=STARTUP_TIMEOUT_S
        )
        assert read.get("result", {}).get("type") == "text", read
        assert read["result"]["file"]["content"].startswith("     1\tdef restock(sku):"), read
    finally:
        server.close()
