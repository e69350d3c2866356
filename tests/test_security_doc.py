"""SECURITY.md names, under each rule, the tests that try to break it: every one of them
exists, so a renamed or deleted test cannot leave a rule standing on nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_NAMED = re.compile(r"^\s*- (tests/[\w/]+\.py)::(\w+)\s*$", re.MULTILINE)


def _named_tests() -> list[tuple[str, str]]:
    return _NAMED.findall((ROOT / "SECURITY.md").read_text(encoding="utf-8"))


def _defined(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_rule_names_tests() -> None:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    rules = [part for part in re.split(r"^## ", text, flags=re.MULTILINE)[1:]]
    bare = [rule.splitlines()[0] for rule in rules if not _NAMED.search(rule)]
    assert bare == ["Who is trusted", "Known limits"], f"sections naming no test: {bare}"


def test_every_test_security_md_names_exists() -> None:
    named = _named_tests()
    assert len(named) > 20
    missing = [
        f"{path}::{name}"
        for path, name in named
        if not (ROOT / path).is_file() or name not in _defined(ROOT / path)
    ]
    assert not missing, f"SECURITY.md names tests that do not exist: {missing}"
