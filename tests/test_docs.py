"""The documentation: its generated pages are current, the site builds with `mkdocs
build --strict` (broken links and anchors fail it), every error kind has its
troubleshooting entry, the README stays a two-minute read, and the release workflow
passes actionlint.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

from readkeeper import errors

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 150


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_gen", ROOT / "docs" / "gen.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tool(name: str) -> Path:
    """A command installed in this environment (a test extra), or a skip saying so."""
    found = Path(sys.executable).parent / name
    if not found.exists():
        pytest.skip(f"`{name}` is not installed (a test extra: .venv/bin/pip install -e '.[test]')")
    return found


@pytest.mark.parametrize("page", ["settings", "protocol"])
def test_the_generated_reference_pages_are_current(page: str) -> None:
    gen = _gen()
    path = ROOT / "docs" / "reference" / f"{page}.md"
    wanted = {"settings": gen.settings_page, "protocol": gen.protocol_page}[page]()
    assert path.read_text(encoding="utf-8") == wanted, (
        f"{path.relative_to(ROOT)} is stale: run .venv/bin/python docs/gen.py"
    )


def test_the_protocol_page_names_every_method_and_error_kind() -> None:
    from readkeeper.calls import METHODS

    text = (ROOT / "docs" / "reference" / "protocol.md").read_text(encoding="utf-8")
    for name, method in METHODS.items():
        assert f"| `readkeeper/{name}` | [{method.params.__name__}]" in text
        assert f"### {method.params.__name__}\n" in text
    for kind in typing.get_args(errors.ErrorKind):
        assert f"[`{kind}`](../troubleshooting.md#{kind})" in text


def test_every_error_kind_has_a_troubleshooting_entry() -> None:
    text = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    headings = re.findall(r"^### (\w+)$", text, flags=re.MULTILINE)
    assert headings == list(typing.get_args(errors.ErrorKind)), (
        "docs/troubleshooting.md has one '### kind' entry per ErrorKind, in its order"
    )


@pytest.mark.ci_required
@pytest.mark.timeout(300)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = _tool("mkdocs")
    built = subprocess.run(
        [mkdocs, "build", "--strict", "--config-file", ROOT / "mkdocs.yml", "-d", tmp_path],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    for page in ("index", "reference/settings", "reference/protocol", "security-rules"):
        assert (tmp_path / page / "index.html").exists() or page == "index"
    assert (tmp_path / "index.html").exists()


def test_the_site_links_every_page_in_its_nav() -> None:
    """A page left out of the nav is built but found by no one (mkdocs only says so at
    INFO level)."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    hooks = (ROOT / "docs" / "hooks.py").read_text(encoding="utf-8")
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    pages |= set(re.findall(r'^\s+"([\w/-]+\.md)": "', hooks, flags=re.MULTILINE))
    listed = set(re.findall(r":\s+([\w/-]+\.md)\s*$", nav, flags=re.MULTILINE))
    assert pages == listed
    assert "filesystem-server.md" in listed


def test_the_readme_is_a_two_minute_read() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < README_MAX_LINES
    # The two commands: set-up and run, and the tests (the one .ci/run runs).
    assert (
        "```sh\npython3 -m venv .venv && .venv/bin/pip install -e . && "
        ".venv/bin/readkeeper demo\n```" in readme
    )
    assert "```sh\nbash tests/run\n```" in readme
    assert "bash tests/run" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for front_end in ("VS Code", "Neovim", "MCP"):
        assert f"## Use it in {front_end}" in readme or f"({front_end})" in readme
    for client in ("Claude Code", "Claude Desktop", "Cursor", "Codex", ".vscode/mcp.json"):
        assert client in readme


def test_the_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


@pytest.mark.ci_required
def test_the_release_workflow_passes_actionlint() -> None:
    actionlint = _tool("actionlint")
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert ROOT / ".github" / "workflows" / "release.yml" in workflows
    # shellcheck checks the `run:` scripts when it is on PATH; here it may not be.
    checked = subprocess.run(
        [actionlint, "-no-color", *workflows],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    if shutil.which("shellcheck") is None:
        print("actionlint ran without shellcheck (not on PATH): run: scripts not linted")
