"""Which tree-sitter node types are symbols, per language, and how their names are found.

A table rather than each grammar's `tags.scm` query: the shipped queries disagree on
kinds (Go has no struct/interface split, C++ none for methods, Markdown no query at
all), and a walk that only enters the node types listed in `containers` is several
times faster than matching a query over every node (see outline.py).

Each grammar is the `tree-sitter-<language>` wheel's module, imported only when a file
of its language is outlined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ... import quoting

if TYPE_CHECKING:
    from tree_sitter import Node


@dataclass(frozen=True)
class Named:
    """What a rule found: the symbol's name and kind, and how the outline shows it."""

    name: str
    kind: str
    scope: str = ""  # a qualifier written in the code itself: Go's receiver, C++'s A::
    label: str = ""  # the outline's text when not "kind name"


Rule = Callable[["Node", bytes], Named | None]  # (node, the source it was parsed from)


@dataclass(frozen=True)
class Grammar:
    """One language: its wheel, its symbol rules and the node types the walk enters."""

    name: str  # shown to the agent, e.g. "TypeScript"
    module: str  # the wheel's import name
    rules: Mapping[str, Rule]
    containers: frozenset[str]  # node types walked into for nested symbols
    wrappers: frozenset[str] = frozenset()  # decorated_definition, export_statement...
    docs: frozenset[str] = frozenset()  # comments and attributes that lead a symbol
    function: str = "language"  # the wheel's function returning the grammar
    # Words in the own text of every symbol node (Python's `def`, `class`): the walk
    # skips a subtree with none of them in its bytes (no symbol can be in it).
    marks: tuple[bytes, ...] = ()
    marked: frozenset[str] | None = None  # the node types the marks prune (None: all)
    # Node types whose nested symbols can only be in one field (a class's or a
    # function's body: never its name, parameters, bases or decorators): the walk goes
    # straight to that field instead of listing every child. Each field's node is a
    # block of some kind, never a symbol itself.
    bodies: Mapping[str, str] = field(default_factory=dict)


def text(node: Node | None, source: bytes) -> str:
    """A node's source text ("" for none), undecodable bytes replaced. Sliced from the
    source: `node.text` would call the parser's read callback again for every name."""
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def field_named(kind: str, name_field: str = "name") -> Rule:
    """A symbol named by one field of its node (most rules)."""

    def rule(node: Node, source: bytes) -> Named | None:
        name = text(node.child_by_field_name(name_field), source).strip()
        return Named(name or "(anonymous)", kind)

    return rule


def _types(names: str) -> frozenset[str]:
    """Node types, written as one string separated by spaces."""
    return frozenset(names.split())


def _one_line(value: str) -> str:
    return " ".join(value.split())


# --- Python -------------------------------------------------------------------------------

PYTHON = Grammar(
    "Python",
    "tree_sitter_python",
    {"class_definition": field_named("class"), "function_definition": field_named("function")},
    _types(
        "block class_definition function_definition decorated_definition if_statement "
        "elif_clause else_clause try_statement except_clause finally_clause with_statement "
        "for_statement while_statement"
    ),
    wrappers=frozenset({"decorated_definition"}),
    docs=frozenset({"comment"}),
    marks=(b"def", b"class"),
    bodies=dict.fromkeys(("class_definition", "function_definition"), "body"),
)

# --- JavaScript and TypeScript -----------------------------------------------------------

_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}


def _bound(kind: str, name_field: str) -> Rule:
    """`const f = () => ...` or a class field holding a function: a function symbol."""

    def rule(node: Node, source: bytes) -> Named | None:
        value = node.child_by_field_name("value")
        if value is None:
            return None
        if value.type in _FUNCTION_VALUES:
            return Named(text(node.child_by_field_name(name_field), source), kind)
        if value.type == "class":
            return Named(text(node.child_by_field_name(name_field), source), "class")
        return None

    return rule


def _module(node: Node, source: bytes) -> Named | None:
    name = text(node.child_by_field_name("name"), source).strip("'\"")
    return Named(name, "namespace" if node.type == "internal_module" else "module")


def _namespace_iife(node: Node, source: bytes) -> Named | None:
    """`(function (Position) { ... })(Position || (exports.Position = {}))`: how
    TypeScript compiles a namespace or an enum, named by its parameter."""
    function = node.child_by_field_name("function")
    while function is not None and function.type == "parenthesized_expression":
        function = function.named_children[0] if function.named_child_count else None
    arguments = node.child_by_field_name("arguments")
    if function is None or arguments is None or function.type not in _FUNCTION_VALUES:
        return None
    parameters = function.child_by_field_name("parameters")
    names = parameters.named_children if parameters is not None else []
    first = arguments.named_children[0] if arguments.named_child_count else None
    if len(names) != 1 or names[0].type != "identifier" or first is None:
        return None
    name = text(names[0], source)
    if not text(first, source).replace(" ", "").startswith(name + "||"):
        return None
    return Named(name, "namespace")


_JS_RULES: dict[str, Rule] = {
    "class_declaration": field_named("class"),
    "function_declaration": field_named("function"),
    "generator_function_declaration": field_named("function"),
    "method_definition": field_named("method"),
    "variable_declarator": _bound("function", "name"),
    "field_definition": _bound("method", "property"),
    "call_expression": _namespace_iife,
}
_TS_RULES: dict[str, Rule] = {
    **_JS_RULES,
    "abstract_class_declaration": field_named("class"),
    "function_signature": field_named("function"),
    "method_signature": field_named("method"),
    "abstract_method_signature": field_named("method"),
    "public_field_definition": _bound("method", "name"),
    "interface_declaration": field_named("interface"),
    "type_alias_declaration": field_named("type"),
    "enum_declaration": field_named("enum"),
    "internal_module": _module,
    "module": _module,
}
_JS_CONTAINERS = _types(
    # Declarations, and the expressions that wrap them in scripts: IIFEs, UMD wrappers,
    # `module.exports = ...`, callbacks.
    "export_statement class_declaration class class_body function_declaration "
    "generator_function_declaration function_expression function generator_function "
    "arrow_function method_definition statement_block lexical_declaration "
    "variable_declaration variable_declarator expression_statement call_expression "
    "arguments parenthesized_expression return_statement if_statement else_clause "
    "try_statement catch_clause finally_clause"
)
_TS_CONTAINERS = _JS_CONTAINERS | _types(
    "abstract_class_declaration interface_declaration interface_body object_type "
    "internal_module module ambient_declaration"
)
_JS_DOCS = frozenset({"comment", "decorator"})

# Expressions hold a symbol only with a function or a class in them (a method is in
# a class body, never in an expression by itself): the walk skips nested parentheses
# and arguments without one.
_JS_MARKS = (b"function", b"=>", b"class")
_JS_MARKED = _types("arguments parenthesized_expression call_expression return_statement")

JAVASCRIPT = Grammar(
    "JavaScript",
    "tree_sitter_javascript",
    _JS_RULES,
    _JS_CONTAINERS,
    wrappers=frozenset({"export_statement"}),
    docs=_JS_DOCS,
    marks=_JS_MARKS,
    marked=_JS_MARKED,
)
TYPESCRIPT = Grammar(
    "TypeScript",
    "tree_sitter_typescript",
    _TS_RULES,
    _TS_CONTAINERS,
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    docs=_JS_DOCS,
    function="language_typescript",
    marks=_JS_MARKS,
    marked=_JS_MARKED,
)
TSX = Grammar(
    "TSX",
    "tree_sitter_typescript",
    _TS_RULES,
    _TS_CONTAINERS,
    wrappers=TYPESCRIPT.wrappers,
    docs=_JS_DOCS,
    function="language_tsx",
    marks=_JS_MARKS,
    marked=_JS_MARKED,
)

# --- Go ------------------------------------------------------------------------------------


def _go_type(node: Node, source: bytes) -> Named | None:
    shape = node.child_by_field_name("type")
    kinds = {"struct_type": "struct", "interface_type": "interface"}
    kind = kinds.get(shape.type if shape is not None else "", "type")
    return Named(text(node.child_by_field_name("name"), source), kind)


def _go_method(node: Node, source: bytes) -> Named | None:
    receiver = text(node.child_by_field_name("receiver"), source)
    # "(r *Reader[T])" -> "Reader": the last word before any type arguments.
    words = receiver.strip("()").split("[")[0].replace("*", " ").split()
    scope = words[-1] if words else ""
    name = text(node.child_by_field_name("name"), source)
    return Named(name, "method", scope=scope, label=f"method ({scope}) {name}")


GO = Grammar(
    "Go",
    "tree_sitter_go",
    {
        "function_declaration": field_named("function"),
        "method_declaration": _go_method,
        "type_spec": _go_type,
        "type_alias": field_named("type"),
        "method_elem": field_named("method"),
    },
    frozenset({"type_declaration", "type_spec", "interface_type"}),
    wrappers=frozenset({"type_declaration"}),
    docs=frozenset({"comment"}),
)

# --- Rust ----------------------------------------------------------------------------------


def _rust_impl(node: Node, source: bytes) -> Named | None:
    target = node.child_by_field_name("type")
    base = target.child_by_field_name("type") if target is not None else None
    name = text(base if base is not None and target is not None else target, source)
    trait = text(node.child_by_field_name("trait"), source)
    shown = _one_line(text(target, source))
    label = f"impl {_one_line(trait)} for {shown}" if trait else f"impl {shown}"
    return Named(name, "impl", label=label)


RUST = Grammar(
    "Rust",
    "tree_sitter_rust",
    {
        "function_item": field_named("function"),
        "function_signature_item": field_named("function"),
        "struct_item": field_named("struct"),
        "enum_item": field_named("enum"),
        "union_item": field_named("union"),
        "trait_item": field_named("trait"),
        "impl_item": _rust_impl,
        "mod_item": field_named("module"),
        "macro_definition": field_named("macro"),
        "type_item": field_named("type"),
    },
    frozenset({"declaration_list", "impl_item", "trait_item", "mod_item"}),
    docs=frozenset({"line_comment", "block_comment", "attribute_item"}),
)

# --- Java ----------------------------------------------------------------------------------

JAVA = Grammar(
    "Java",
    "tree_sitter_java",
    {
        "class_declaration": field_named("class"),
        "interface_declaration": field_named("interface"),
        "enum_declaration": field_named("enum"),
        "record_declaration": field_named("record"),
        "annotation_type_declaration": field_named("annotation"),
        "method_declaration": field_named("method"),
        "constructor_declaration": field_named("constructor"),
        "compact_constructor_declaration": field_named("constructor"),
    },
    _types(
        "class_declaration interface_declaration enum_declaration record_declaration "
        "annotation_type_declaration class_body interface_body enum_body "
        "enum_body_declarations annotation_type_body"
    ),
    docs=frozenset({"block_comment", "line_comment"}),
)

# --- C and C++ -----------------------------------------------------------------------------

_DECLARATORS = {
    "pointer_declarator",
    "reference_declarator",
    "function_declarator",
    "parenthesized_declarator",
    "attributed_declarator",
}


def _declared(node: Node) -> tuple[Node | None, bool]:
    """The name at the end of a declarator chain (`*f(int)`, `A::m() const`,
    `(*handler)(int)`), and whether the chain declares a function."""
    declarator = node.child_by_field_name("declarator")
    is_function = False
    while declarator is not None and declarator.type in _DECLARATORS:
        is_function = is_function or declarator.type == "function_declarator"
        inner = declarator.child_by_field_name("declarator")
        if inner is None:  # parenthesized_declarator: the one named child
            inner = declarator.named_children[0] if declarator.named_child_count else None
        declarator = inner
    return declarator, is_function


def _function(kind: str) -> Rule:
    """A function definition or prototype; declarations of anything else are not
    symbols."""

    def rule(node: Node, source: bytes) -> Named | None:
        declarator, is_function = _declared(node)
        if declarator is None or not is_function:
            return None
        name = _one_line(text(declarator, source))
        scope, _, last = name.rpartition("::")
        return Named(last, kind, scope=scope.replace("::", "."))

    return rule


def _tagged(kind: str) -> Rule:
    """struct/union/enum/class with a body (a bare `struct s;` declares nothing new)."""

    def rule(node: Node, source: bytes) -> Named | None:
        if node.child_by_field_name("body") is None:
            return None
        return field_named(kind)(node, source)

    return rule


def _typedef(node: Node, source: bytes) -> Named | None:
    declarator, _ = _declared(node)
    return Named(_one_line(text(declarator, source)), "typedef")


def _macro(node: Node, source: bytes) -> Named | None:
    if node.type == "preproc_def" and node.child_by_field_name("value") is None:
        return None  # include guards and flags: noise in an outline
    return Named(text(node.child_by_field_name("name"), source), "macro")


_C_RULES: dict[str, Rule] = {
    "function_definition": _function("function"),
    "declaration": _function("function"),
    "struct_specifier": _tagged("struct"),
    "union_specifier": _tagged("union"),
    "enum_specifier": _tagged("enum"),
    "type_definition": _typedef,
    "preproc_def": _macro,
    "preproc_function_def": _macro,
}
_C_CONTAINERS = _types(
    # Conditional compilation, struct bodies, and extern "C" { ... } (which C headers
    # open inside an #ifdef).
    "preproc_if preproc_ifdef preproc_else preproc_elif preproc_elifdef struct_specifier "
    "union_specifier field_declaration_list linkage_specification declaration_list"
)

C = Grammar("C", "tree_sitter_c", _C_RULES, _C_CONTAINERS, docs=frozenset({"comment"}))
CPP = Grammar(
    "C++",
    "tree_sitter_cpp",
    {
        **_C_RULES,
        "class_specifier": _tagged("class"),
        "namespace_definition": field_named("namespace"),
        "field_declaration": _function("function"),
    },
    _C_CONTAINERS | _types("class_specifier namespace_definition template_declaration"),
    wrappers=frozenset({"template_declaration"}),
    docs=frozenset({"comment"}),
)

# --- Markdown ------------------------------------------------------------------------------


def _section(node: Node, source: bytes) -> Named | None:
    heading = node.named_children[0] if node.named_child_count else None
    if heading is None or heading.type not in ("atx_heading", "setext_heading"):
        return None
    level = 1
    for child in heading.named_children:
        if child.type.startswith("atx_h") and child.type.endswith("_marker"):
            level = int(child.type[5])
        elif child.type == "setext_h2_underline":
            level = 2
    name = _one_line(text(heading.child_by_field_name("heading_content"), source).rstrip("# \t"))
    return Named(name, "heading", label=f"{'#' * level} {quoting.name(name[:60])}")


MARKDOWN = Grammar(
    "Markdown",
    "tree_sitter_markdown",
    {"section": _section},
    frozenset({"section"}),
)

# --- files ---------------------------------------------------------------------------------

BY_EXTENSION: dict[str, Grammar] = {
    **dict.fromkeys((".py", ".pyi", ".pyw"), PYTHON),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), JAVASCRIPT),
    **dict.fromkeys((".ts", ".mts", ".cts"), TYPESCRIPT),
    ".tsx": TSX,
    ".go": GO,
    ".rs": RUST,
    ".java": JAVA,
    ".c": C,
    ".h": C,
    **dict.fromkeys(
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp", ".inl"),
        CPP,
    ),
    **dict.fromkeys((".md", ".markdown"), MARKDOWN),
}
