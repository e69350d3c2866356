#!/usr/bin/env python3
"""Mutants cosmic-ray never makes: one name used where another was meant, one half of a
condition dropped, two arguments swapped (tests/mutation runs cosmic-ray's own).

    .venv/bin/python tests/mutation_names.py --list            # the modules, as tests/mutation
    .venv/bin/python tests/mutation_names.py stub-rule readstate
    .venv/bin/python tests/mutation_names.py --plan merge      # count the mutants, run none

The operators (each mutant is one change at one site, made on the source text so the
rest of the file reads as it did):

- `names/ReplaceName`: a name read in a function replaced by another of the same kind
  in the same function: a parameter by another parameter, a local by another local;
  and in `obj.attr`, `attr` by another attribute the function uses on `obj`, or `obj`
  by another parameter or local the function uses `.attr` on (`window.limit` for
  `previous.limit`).
- `names/DropOperand`: one operand of an `and`/`or` dropped, in a condition (`if`,
  `while`, a conditional expression, a comprehension's `if`, `assert`, or a `return` of
  the `and`/`or` itself).
- `names/SwapArguments`: two neighbouring positional arguments of a call swapped.

Written with `ast` rather than as cosmic-ray operators: cosmic-ray's operators work on
parso trees and are found through entry points of an installed distribution (one more
package to build and register), while these three need to know what a name is in its
function (parameter, local, the attributes used on one object), which `ast` gives
directly. The modules, their tests and the scratch copy are tests/mutation's; survivors
listed in tests/mutation-equivalent.md count apart (the same format; the operator may
name the replacement, `names/ReplaceName -> other`, where a line has several mutants).

Each module's mutants run one at a time against only the test files that guard it
(`-x`, no xdist). Results are kept in the work folder: `--keep` goes on where a stopped
run was, `--again` re-runs the survivors after tests were added (refreshing the copy's
tests). Options as tests/mutation: --workdir, --timeout, --sample N.
"""

from __future__ import annotations

import argparse
import ast
import importlib.machinery
import importlib.util
import itertools
import json
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def _cosmic_set_up() -> ModuleType:
    """tests/mutation (a script without a suffix), for its modules and scratch copy."""
    loader = importlib.machinery.SourceFileLoader("mutation_setup", str(REPO / "tests/mutation"))
    spec = importlib.util.spec_from_loader("mutation_setup", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_setup"] = module  # dataclasses look their module up
    loader.exec_module(module)
    return module


setup = _cosmic_set_up()

# Conditions: where dropping an operand changes which way the code goes.
_CONDITION_OWNERS = (ast.If, ast.While, ast.IfExp, ast.Assert)
# `obj.a` becomes `obj.b` only for a `b` the function uses on `obj` this near.
_NEAR_LINES = 5


@dataclass(frozen=True)
class Mutant:
    operator: str
    line: int
    source: str  # the unmutated line, stripped
    function: str
    start: tuple[int, int]  # (line, column) of the span replaced
    end: tuple[int, int]
    replacement: str

    @property
    def key(self) -> str:
        return f"{self.operator}:{self.start[0]}:{self.start[1]}:{self.replacement}"


# --- making the mutants ----------------------------------------------------------------


def _annotation_ids(tree: ast.AST) -> set[int]:
    """The nodes inside annotations: never evaluated (`from __future__ import annotations`)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        roots: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            roots.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            roots.append(node.annotation)
        for root in roots:
            if root is not None:
                inside.update(id(n) for n in ast.walk(root))
    return inside


def _functions(tree: ast.Module, names: tuple[str, ...]) -> Iterator[ast.FunctionDef]:
    """The functions to mutate: those named (top level or methods), or all of them. A
    nested function is mutated as part of the function around it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.Module):
            for child in node.body:
                if isinstance(child, ast.FunctionDef) and (not names or child.name in names):
                    yield child


def _kinds(function: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """Its parameters and its locals (names it assigns), `self` and `cls` left out."""
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    params = {a.arg for a in every} - {"self", "cls"}
    assigned: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assigned.add(node.id)
        elif isinstance(node, ast.arg) and node not in every:
            assigned.add(node.arg)  # a lambda's or nested function's own parameters
    return params, assigned - params


def _attributes(function: ast.FunctionDef) -> dict[str, dict[str, list[int]]]:
    """By object name: the attributes the function uses on it, with the lines."""
    found: dict[str, dict[str, list[int]]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.setdefault(node.value.id, {}).setdefault(node.attr, []).append(node.lineno)
    return found


def _parameter_order(function: ast.FunctionDef) -> list[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [a.arg for a in every if a.arg not in ("self", "cls")]


def _neighbours(order: list[str], name: str) -> list[str]:
    """The parameters next to `name` in the signature: the ones a slip confuses it with
    (every other pairing multiplies the mutants, rarely the bugs)."""
    at = order.index(name)
    return [order[i] for i in (at - 1, at + 1) if 0 <= i < len(order)]


def _assignments(function: ast.FunctionDef) -> list[tuple[int, str]]:
    """(line, name) of each local the function assigns, in line order."""
    found = [
        (node.lineno, node.id)
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    ]
    return sorted(found)


def _latest_before(assigned: list[tuple[int, str]], name: str, line: int) -> list[str]:
    """The other local assigned last before `line` (the one in hand when `name` is
    written): one alternative per site."""
    before = [other for at, other in assigned if at <= line and other != name]
    return before[-1:]


def _source(lines: list[str], node: ast.AST) -> str:
    segment = ast.get_source_segment("\n".join(lines), node)
    assert segment is not None
    return segment


def mutants_of(path: Path, names: tuple[str, ...]) -> list[Mutant]:
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    skip = _annotation_ids(tree)
    found: list[Mutant] = []

    def add(operator: str, node: ast.AST, replacement: str, function: str) -> None:
        start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        source = lines[start[0] - 1].strip()
        found.append(Mutant(operator, start[0], source, function, start, end, replacement))

    for function in _functions(tree, names):
        params, local = _kinds(function)
        order = _parameter_order(function)
        assigned = _assignments(function)
        used_on = _attributes(function)
        # `obj` of `obj.attr` is only swapped for another object with that attribute.
        owners = {id(node.value) for node in ast.walk(function) if isinstance(node, ast.Attribute)}
        for node in ast.walk(function):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if id(node) in owners:
                    continue
                if node.id in params:
                    others = _neighbours(order, node.id)
                elif node.id in local:
                    others = _latest_before(assigned, node.id, node.lineno)
                else:
                    others = []
                for other in others:
                    add("names/ReplaceName", node, other, function.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                owner = node.value.id
                if isinstance(node.ctx, ast.Load):
                    near = used_on.get(owner, {})
                    for other in sorted(near):
                        if other != node.attr and any(
                            abs(line - node.lineno) <= _NEAR_LINES for line in near[other]
                        ):
                            add("names/ReplaceName", node, f"{owner}.{other}", function.name)
                # `other.attr` for `obj.attr`: an object with that attribute, or one in
                # use nearby (`previous.limit` for `window.limit`).
                for other in sorted((params | local) - {owner}):
                    near = used_on.get(other, {})
                    if node.attr in near or any(
                        abs(line - node.lineno) <= _NEAR_LINES // 2
                        for lines in near.values()
                        for line in lines
                    ):
                        add("names/ReplaceName", node.value, other, function.name)
            elif isinstance(node, ast.Call):
                positional = [a for a in node.args if not isinstance(a, ast.Starred)]
                if len(positional) == len(node.args):
                    for first, second in itertools.pairwise(positional):
                        a, b = _source(lines, first), _source(lines, second)
                        if a != b:
                            swapped = ast.Tuple(elts=[first, second])
                            swapped.lineno, swapped.col_offset = first.lineno, first.col_offset
                            swapped.end_lineno = second.end_lineno
                            swapped.end_col_offset = second.end_col_offset
                            between = _between(lines, first, second)
                            add("names/SwapArguments", swapped, b + between + a, function.name)
        for condition in _conditions(function):
            if id(condition) in skip:
                continue
            joiner = " and " if isinstance(condition.op, ast.And) else " or "
            for dropped in range(len(condition.values)):
                kept = [_source(lines, v) for i, v in enumerate(condition.values) if i != dropped]
                add("names/DropOperand", condition, f"({joiner.join(kept)})", function.name)
    unique = {m.key: m for m in found}  # `obj` of `obj.attr` is reached two ways
    return list(unique.values())


def _between(lines: list[str], first: ast.expr, second: ast.expr) -> str:
    """The text between two neighbouring arguments (the comma, spaces, a line break)."""
    assert first.end_lineno is not None
    assert first.end_col_offset is not None
    if first.end_lineno == second.lineno:
        return lines[second.lineno - 1][first.end_col_offset : second.col_offset]
    head = lines[first.end_lineno - 1][first.end_col_offset :]
    middle = lines[first.end_lineno : second.lineno - 1]
    tail = lines[second.lineno - 1][: second.col_offset]
    return "\n".join([head, *middle, tail])


def _conditions(function: ast.FunctionDef) -> Iterator[ast.BoolOp]:
    """Every `and`/`or` inside a condition: the tests of if/while/assert/a conditional
    expression, a comprehension's ifs, and a `return` of a BoolOp (a predicate)."""
    roots: list[ast.expr] = []
    for node in ast.walk(function):
        if isinstance(node, _CONDITION_OWNERS):
            roots.append(node.test)
        elif isinstance(node, ast.comprehension):
            roots.extend(node.ifs)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.BoolOp):
            roots.append(node.value)
    seen: set[int] = set()
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.BoolOp) and id(node) not in seen:
                seen.add(id(node))
                yield node


def placed(text: str, mutant: Mutant) -> Mutant:
    """`mutant` where its line is in `text` now: a mutant kept from an earlier run
    (`--again`) has that run's positions, and a line added above it since would put the
    replacement on another line (a mutant that no test was meant to kill, or a syntax
    error), so it moves with its line; one whose line is gone stops the run."""
    lines = text.splitlines()
    if 0 < mutant.line <= len(lines) and lines[mutant.line - 1].strip() == mutant.source:
        return mutant
    found = [n for n, line in enumerate(lines, 1) if line.strip() == mutant.source]
    if not found:
        sys.exit(f"{mutant.line}: `{mutant.source}` is no longer in the file: run afresh")
    shift = min(found, key=lambda n: abs(n - mutant.line)) - mutant.line
    return replace(
        mutant,
        line=mutant.line + shift,
        start=(mutant.start[0] + shift, mutant.start[1]),
        end=(mutant.end[0] + shift, mutant.end[1]),
    )


def mutated(text: str, mutant: Mutant) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        line, column = position
        # ast columns count UTF-8 bytes
        return starts[line - 1] + len(lines[line - 1].encode()[:column].decode())

    return text[: offset(mutant.start)] + mutant.replacement + text[offset(mutant.end) :]


# --- running them ----------------------------------------------------------------------


def run_module(name: str, tree: Path, workdir: Path, args: argparse.Namespace) -> dict[str, int]:
    module = setup.MODULES[name]
    target = tree / module.path
    original = (REPO / module.path).read_text()
    results_path = workdir / f"names-{name}.json"
    results: dict[str, dict[str, object]] = {}
    if args.keep and results_path.exists():
        results = json.loads(results_path.read_text())
    if args.report or args.again:  # the mutants run before (the code is unchanged since)
        fields = Mutant.__dataclass_fields__
        mutants = [
            Mutant(
                **{k: tuple(v) if isinstance(v, list) else v for k, v in r.items() if k in fields}
            )
            for r in results.values()
        ]
    else:
        mutants = mutants_of(REPO / module.path, module.functions)
        if args.sample and len(mutants) > args.sample:
            step = len(mutants) / args.sample
            mutants = [mutants[int(i * step)] for i in range(args.sample)]
    if args.again:
        results = {k: v for k, v in results.items() if v["outcome"] != "survived"}
    if args.plan:
        print(f"{name}: {len(mutants)} mutants ({len(mutants) - len(results)} to run)")
        return {}
    if args.report:  # what a stopped run got through, run no more
        return report(name, module.path, mutants, results, 0.0)
    target.write_text(original)  # a stopped run may have left a mutant in the copy
    env = setup.environment(tree)
    started = time.monotonic()
    took = setup.unmutated_run(name, module, tree, env)
    timeout = args.timeout or max(60.0, 4 * took)
    command = shlex.split(setup.test_command(module, timeout))
    print(f"{name}: {len(mutants)} mutants; unmutated tests pass in {took:.0f} s", flush=True)
    try:
        for mutant in mutants:
            if mutant.key in results:
                continue
            target.write_text(mutated(original, placed(original, mutant)))
            try:
                done = subprocess.run(
                    command, cwd=tree, env=env, capture_output=True, timeout=timeout * 1.5
                )
                outcome = "survived" if done.returncode == 0 else "killed"
            except subprocess.TimeoutExpired:
                outcome = "killed"
            results[mutant.key] = {**asdict(mutant), "outcome": outcome}
            results_path.write_text(json.dumps(results, indent=1))
    finally:
        target.write_text(original)
    return report(name, module.path, mutants, results, time.monotonic() - started)


def report(
    name: str,
    path: str,
    mutants: list[Mutant],
    results: dict[str, dict[str, object]],
    seconds: float,
) -> dict[str, int]:
    equivalents = setup.load_equivalents()
    killed = equivalent = 0
    survivors = []
    for mutant in mutants:
        if results[mutant.key]["outcome"] == "killed":
            killed += 1
            continue
        why = None
        # An entry names the replacement (`names/ReplaceName -> other`) where one line has
        # several mutants of one operator, or only the operator for all of them.
        for operator in (f"{mutant.operator} -> {mutant.replacement}", mutant.operator):
            key = (path, operator, mutant.source)
            why = why or equivalents.get((*key, mutant.function)) or equivalents.get((*key, None))
        if why:
            equivalent += 1
        else:
            survivors.append(mutant)
    print(
        f"\n== {name} ({path}): {len(mutants)} mutants, {killed} killed, {equivalent} "
        f"equivalent, {len(survivors)} survived, {seconds:.0f} s"
    )
    original = (REPO / path).read_text()
    for m in survivors:
        # The line as mutated, not only the replacement: `-> 'path'` alone was once read
        # as replacing the line's first name when it replaced its second.
        here = placed(original, m)
        changed = mutated(original, here).splitlines()[here.start[0] - 1].strip()
        print(f"  SURVIVED {path}:{m.line} {m.operator} in {m.function}\n    `{m.source}`")
        print(f"      -> `{changed}` ({m.replacement!r} at {m.start}-{m.end})")
    return {
        "mutants": len(mutants),
        "killed": killed,
        "equivalent": equivalent,
        "survived": len(survivors),
        "seconds": round(seconds),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="names from --list (default: all)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--plan", action="store_true", help="count the mutants, run none")
    parser.add_argument("--sample", type=int, default=0, help="at most N mutants per module")
    parser.add_argument("--timeout", type=float, default=0, help="seconds per mutant")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="go on where a run stopped")
    parser.add_argument("--again", action="store_true", help="re-run the survivors only")
    parser.add_argument("--report", action="store_true", help="report the kept results only")
    args = parser.parse_args()
    if args.list:
        for name, module in setup.MODULES.items():
            print(f"{name:12} {module.path}")
        return 0
    unknown = [m for m in args.modules if m not in setup.MODULES]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; see --list")
    workdir = args.workdir or Path(tempfile.gettempdir()) / "readkeeper-mutation-names"
    tree = workdir / "tree"
    args.keep = args.keep or args.again or args.report or args.plan
    if not (args.keep and tree.is_dir()):
        workdir.mkdir(parents=True, exist_ok=True)
        setup.copy_tree(tree)
    elif args.again:
        setup.copy_tests(tree)
    table = {}
    for name in args.modules or list(setup.MODULES):
        table[name] = run_module(name, tree, workdir, args)
    if not args.plan:
        print("\n| module | mutants | killed | equivalent | survived | time (s) |")
        print("|---|---|---|---|---|---|")
        for name, row in table.items():
            print(
                f"| {name} | {row['mutants']} | {row['killed']} | {row['equivalent']} | "
                f"{row['survived']} | {row['seconds']} |"
            )
    return 0


if __name__ == "__main__":
    python = REPO / ".venv" / "bin" / "python"
    if Path(sys.prefix).resolve() != (REPO / ".venv").resolve() and python.exists():
        import os

        os.execv(str(python), [str(python), __file__, *sys.argv[1:]])
    sys.exit(main())
