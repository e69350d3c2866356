"""The walk enters only what can hold an outlined symbol (issue 34): expressions nested
thousands deep inside a function body change neither the outline nor the walk's cost,
in every language with function bodies (Markdown has none)."""

from __future__ import annotations

import pytest

from readkeeper.read.readers import outline

DEEP = 5_000
# Each language's file: a function whose body holds `{open}` x N, a value, `{close}` x
# N, among symbols nested as the language allows.
SOURCES = {
    "box.py": (
        "class Box:\n    def run(self, defaults):\n        return {open}defaults{close}\n\n"
        "    def other(self):\n        pass\n\n\ndef after():\n    pass\n",
        "(",
        ")",
    ),
    "box.js": (
        "class Box {{\n  run() {{\n    return {open}1{close};\n  }}\n  other() {{}}\n}}\n"
        "function after() {{}}\n",
        "[",
        "]",
    ),
    "box.ts": (
        "class Box {{\n  run(): number {{\n    return {open}1{close};\n  }}\n"
        "  other(): void {{}}\n}}\nfunction after(): void {{}}\n",
        "(",
        ")",
    ),
    "box.go": (
        "package box\n\ntype Box struct{{}}\n\nfunc (b *Box) Run() int {{\n"
        "\treturn {open}1{close}\n}}\n\nfunc After() {{}}\n",
        "(",
        ")",
    ),
    "box.rs": (
        "struct Boxed;\nimpl Boxed {{\n    fn run(&self) -> i32 {{\n"
        "        {open}1{close}\n    }}\n}}\nfn after() {{}}\n",
        "(",
        ")",
    ),
    "Box.java": (
        "class Box {{\n  int run() {{\n    return {open}1{close};\n  }}\n  void other() {{}}\n}}\n",
        "(",
        ")",
    ),
    "box.c": (
        "int run(void) {{\n  return {open}1{close};\n}}\nint after(void) {{ return 1; }}\n",
        "(",
        ")",
    ),
    "box.cpp": (
        "class Box {{\n public:\n  int run() {{\n    return {open}1{close};\n  }}\n}};\n"
        "int after() {{ return 1; }}\n",
        "(",
        ")",
    ),
}


def shape(found: list[outline.Symbol]) -> list[tuple[int, str, str, int, int, str]]:
    return [
        (depth, s.kind, s.qualified_name, s.start_line, s.end_line, s.label)
        for depth, s in outline.walk(found)
    ]


def source(name: str, depth: int) -> str:
    template, opening, closing = SOURCES[name]
    return template.format(open=opening * depth, close=closing * depth)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_deep_nesting_in_a_function_body_changes_no_symbol(name: str) -> None:
    grammar = outline.grammar_for(name)
    assert grammar is not None
    shallow = shape(outline.symbols(source(name, 1), grammar))
    assert len(shallow) >= 2
    assert shape(outline.symbols(source(name, DEEP), grammar)) == shallow


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_walk_does_not_enter_the_nested_expressions(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The walk looks at its deadline every 4,096 nodes: with the deadline already
    # passed, it finishes only if it visits fewer, so not the 5,000-deep expression.
    grammar = outline.grammar_for(name)
    assert grammar is not None
    text = source(name, DEEP)
    tree = outline._parse(text.encode(), grammar)
    monkeypatch.setattr(outline, "WALK_SECONDS", -1.0)
    found, _ = outline._walk(tree.root_node, grammar, text.encode())
    assert shape(found) == shape(outline.symbols(source(name, 1), grammar))
