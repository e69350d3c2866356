"""The shape of the package, checked: no import circles, no module importing a module in a
layer above its own, no module grown past the size one reader can hold.

Every import counts, including those inside functions and under `TYPE_CHECKING`: a lazy
or type-only import of the facade is still a dependency on it. The layers, lowest first,
are the folders of `server/` (and `attachments/`) as the architecture picture in
docs/design/internals.md (Layout) draws them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"readkeeper": ROOT / "server", "readkeeper.attachments": ROOT / "attachments"}

# Lowest first. A module may import modules of its own layer or of layers below it.
LAYERS: list[set[str]] = [
    {
        "errors",
        "quoting",
        "terminal_text",
        "peers",
        "words",
        "loading",
        "progress",
        "exit_status",
        "message_cap",
        "log_lines",
    },
    {
        "protocol",
        "settings",
        "setting_values",
        "render",
        "rendered_tokens",
        "hints",
        "hint_walks",
        "render_many",
        "picture",
    },
    {"files"},
    {"state"},
    {"read"},
    {"edit", "watch", "search"},
    {"attachments"},
    {"core"},
    {"calls"},
    {"lsp", "mcp", "attach", "client", "demo"},
    {"cli", "cli_search", "cli_media", "cli_stats", "cli_numbers", "cli_terminal", "__main__"},
]
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            if name.startswith("readkeeper.attachments") and package == "readkeeper":
                continue
            found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The readkeeper modules `name` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # `from package import module` names a module; `from module import name`
            # names something in it.
            targets = [
                f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                for a in node.names
            ]
        else:
            continue
        out.update(t for t in targets if t in MODULES and t != name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> int:
    parts = name.split(".")
    head = parts[1] if len(parts) > 1 else ""
    for index, layer in enumerate(LAYERS):
        if head in layer:
            return index
    raise AssertionError(f"{name} is in no layer of tests/test_layout.py: add its folder")


def test_every_module_has_a_layer() -> None:
    for name in MODULES:
        if name != "readkeeper":
            _layer(name)


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if name != "readkeeper"
        for target in sorted(targets)
        if target != "readkeeper" and _layer(target) > _layer(name)
    ]
    assert upward == []


def _cycle_from(start: str) -> list[str] | None:
    path: list[str] = []
    on_path: set[str] = set()
    done: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for target in sorted(GRAPH[node]):
            if target == start:
                return [*path, start]
            if target not in on_path and target not in done:
                found = visit(target)
                if found:
                    return found
        on_path.discard(path.pop())
        done.add(node)
        return None

    return visit(start)


def test_no_import_circles() -> None:
    circles = {" -> ".join(c) for name in GRAPH if (c := _cycle_from(name))}
    assert sorted(circles) == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_longer_than_a_reader_can_hold(name: str) -> None:
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)}: {lines} lines"


def test_the_checks_see_the_imports_they_judge() -> None:
    """The graph is not empty by accident: the facade's known dependencies are in it."""
    assert "readkeeper.files.paths" in GRAPH["readkeeper.core"]
    assert "readkeeper.errors" in GRAPH["readkeeper.protocol.convert"]
    assert _cycle_from("readkeeper.errors") is None
