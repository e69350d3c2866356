"""Generate the extension's src/protocol.ts from the server's protocol (server/protocol/).

`readkeeper.protocol` is the one source of the contract's types: every attrs class in its
modules (`protocol.MODULES`) becomes a TypeScript interface, and every type alias
(`ReadResult = TextResult | ...`, `ChangeKind = Literal[...]`) a TypeScript type, in
their order, with the comments
and docstrings that explain the fields. tests/editors/test_vscode_extension.py fails when the
committed file differs from what this prints.

    .venv/bin/python extension/vscode/scripts/gen_protocol.py          # rewrite
    .venv/bin/python extension/vscode/scripts/gen_protocol.py --check  # exit 1 if stale

Which fields are optional follows what crosses the wire. Params the client sends may
leave out any field that has a default. Results the server sends leave out a field whose
value is None (`protocol.unstructure`), except the few whose null means something
(`_MEANINGFUL_NULLS`, e.g. `total_lines`: unknown), which are always there.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

import attrs

from readkeeper import protocol

OUTPUT = Path(__file__).resolve().parent.parent / "src" / "protocol.ts"

# Params sent by the server, not the client: their fields are as in results.
SERVER_SENT_PARAMS = frozenset({"DidChangeReadFilesParams"})

# Longer type aliases are written one member a line.
WIDTH = 100

SCALARS = {
    "str": "string",
    "int": "number",
    "float": "number",
    "bool": "boolean",
    "Any": "unknown",
    "None": "null",
}

HEADER = """\
// GENERATED from server/protocol/ by scripts/gen_protocol.py: do not edit by hand.
// After a change to server/protocol/, regenerate (from the repository's root):
//   .venv/bin/python extension/vscode/scripts/gen_protocol.py
// tests/editors/test_vscode_extension.py fails while this file differs from what it generates.
// What the server sends that protocol/ does not type yet is in src/agent/contract.ts.
"""


class Generator:
    """TypeScript for the protocol package, from its modules' source (annotations,
    comments and order as written) and its attrs classes (names and defaults)."""

    def __init__(self, package: Any) -> None:
        # The package's modules read as one source, in its order: the names, comments
        # and order of the output are theirs; the classes are taken from the package.
        self.module = package
        self.source = "\n".join(
            inspect.getsource(importlib.import_module(f"{package.__name__}.{name}"))
            for name in package.MODULES
        )
        self.lines = self.source.splitlines()
        self.tree = ast.parse(self.source)
        self.meaningful_nulls: frozenset[str] = package.convert._MEANINGFUL_NULLS
        self.classes = {
            node.name
            for node in self.tree.body
            if isinstance(node, ast.ClassDef)
            and isinstance(getattr(package, node.name, None), type)
            and attrs.has(getattr(package, node.name))
        }
        self.aliases = {
            node.targets[0].id: node.value
            for node in self.tree.body
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and self._is_type(node.value)
        }
        self.sent = self._sent_by_client()

    def _sent_by_client(self) -> frozenset[str]:
        """The classes a client sends: its params and every class inside them."""
        sent: set[str] = set()
        todo = [
            name
            for name in self.classes
            if name.endswith("Params") and name not in SERVER_SENT_PARAMS
        ]
        while todo:
            name = todo.pop()
            if name in sent:
                continue
            sent.add(name)
            node = next(n for n in self.tree.body if isinstance(n, ast.ClassDef) and n.name == name)
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign):
                    todo.extend(
                        n.id
                        for n in ast.walk(stmt.annotation)
                        if isinstance(n, ast.Name) and n.id in self.classes
                    )
        return frozenset(sent)

    # --- what is a type -------------------------------------------------------------------

    def _is_type(self, node: ast.expr) -> bool:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._is_type(node.left) and self._is_type(node.right)
        if isinstance(node, ast.Subscript):
            return isinstance(node.value, ast.Name) and node.value.id == "Literal"
        return isinstance(node, ast.Name) and node.id in self.classes

    def ts_type(self, node: ast.expr) -> str:
        """The TypeScript of one annotation."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return f"{self.ts_type(node.left)} | {self.ts_type(node.right)}"
        if isinstance(node, ast.Constant):
            if node.value is None:
                return "null"
            return _ts_literal(node.value)
        if isinstance(node, ast.Name):
            if node.id in SCALARS:
                return SCALARS[node.id]
            if node.id in self.classes or node.id in self.aliases:
                return node.id
            raise ValueError(f"no TypeScript for the type {node.id!r} (add it to SCALARS)")
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            name = node.value.id
            if name == "Literal":
                return " | ".join(self.ts_type(a) for a in args)
            if name in ("list", "Sequence") or (
                name == "tuple" and len(args) == 2 and isinstance(args[1], ast.Constant)
            ):  # tuple[X, ...]
                inner = self.ts_type(args[0])
                return f"({inner})[]" if " | " in inner else f"{inner}[]"
            if name == "tuple":
                return "[" + ", ".join(self.ts_type(a) for a in args) + "]"
            if name in ("dict", "Mapping"):
                return f"Record<{self.ts_type(args[0])}, {self.ts_type(args[1])}>"
        raise ValueError(f"no TypeScript for the annotation {ast.unparse(node)!r}")

    # --- comments -------------------------------------------------------------------------

    def comments_before(self, lineno: int) -> list[str]:
        """The `#` lines right above line `lineno` (1-based)."""
        found: list[str] = []
        index = lineno - 2
        while index >= 0 and self.lines[index].strip().startswith("#"):
            found.insert(0, self.lines[index].strip().removeprefix("#").strip())
            index -= 1
        return found

    def trailing_comment(self, node: ast.stmt) -> str | None:
        line = self.lines[(node.end_lineno or node.lineno) - 1]
        rest = line[node.end_col_offset or len(line) :].strip()
        return rest.removeprefix("#").strip() if rest.startswith("#") else None

    # --- output ---------------------------------------------------------------------------

    def interface(self, node: ast.ClassDef) -> list[str]:
        cls = getattr(self.module, node.name)
        defaults = {f.name: f.default for f in attrs.fields(cls)}
        sent_by_client = node.name in self.sent
        out = _doc(ast.get_docstring(node) or "", "")
        out.append(f"export interface {node.name} {{")
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            name = stmt.target.id
            if name not in defaults:  # a ClassVar, not a field
                continue
            ts = self.ts_type(stmt.annotation)
            nullable = ts == "null" or ts.endswith(" | null") or ts.startswith("null | ")
            has_default = defaults[name] is not attrs.NOTHING
            if sent_by_client:
                optional = has_default
            else:
                optional = nullable and name not in self.meaningful_nulls
            if optional and nullable:
                ts = _without_null(ts)
            note = [*self.comments_before(stmt.lineno)]
            trailing = self.trailing_comment(stmt)
            if trailing:
                note.append(trailing)
            out.extend(_doc(" ".join(note), "  "))
            out.append(f"  {name}{'?' if optional else ''}: {ts};")
        out.append("}")
        return out

    def alias(self, name: str, value: ast.expr) -> list[str]:
        ts = self.ts_type(value)
        if len(f"export type {name} = {ts};") <= WIDTH:
            return [f"export type {name} = {ts};"]
        members = [f"  | {part}" for part in ts.split(" | ")]
        members[-1] += ";"
        return [f"export type {name} =", *members]

    def render(self) -> str:
        blocks: list[list[str]] = []
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and node.name in self.classes:
                blocks.append(self.interface(node))
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in self.aliases
            ):
                blocks.append(self.alias(node.targets[0].id, node.value))
        return HEADER + "".join("\n" + "\n".join(block) + "\n" for block in blocks)


def _ts_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _without_null(ts: str) -> str:
    return " | ".join(part for part in ts.split(" | ") if part != "null")


def _doc(text: str, indent: str) -> list[str]:
    """A JSDoc comment, or nothing."""
    words = " ".join(text.split())
    if not words:
        return []
    lines: list[str] = []
    line = ""
    for word in words.split(" "):
        if line and len(indent) + 4 + len(line) + 1 + len(word) > 92:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {ln}" for ln in lines), f"{indent} */"]


def generate() -> str:
    """The text src/protocol.ts should have."""
    return Generator(protocol).render()


def main(argv: list[str]) -> int:
    wanted = generate()
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if "--check" in argv:
        if wanted != current:
            print(f"{OUTPUT} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    if wanted != current:
        OUTPUT.write_text(wanted, encoding="utf-8")
        print(f"updated {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
