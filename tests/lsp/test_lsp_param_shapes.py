"""Params of the wrong shape, for every field of every method (generated from the
protocol's types), and path strings no file name can hold: each is `bad_params` naming
the field, never `internal` and never a silently different request."""

from __future__ import annotations

import os
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import attrs
import pytest
from raw_lsp import RawServer

from readkeeper.calls import METHODS
from readkeeper.protocol import NotebookEditParams


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    root = tmp_path_factory.mktemp("shapes")
    (root / "ok.txt").write_text("inside\n")
    server = RawServer()
    server.initialize(root)
    yield server
    server.close()


def _inner(tp: Any) -> Any:
    """`tp` without its `| None`."""
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def valid(tp: Any) -> Any:
    """A value of type `tp` that structures (not necessarily one the call accepts)."""
    tp = _inner(tp)
    origin = get_origin(tp)
    if origin is Literal:
        return get_args(tp)[0]
    if origin is list:
        return [valid(get_args(tp)[0])]
    if origin is dict:
        return {}
    if isinstance(tp, type) and attrs.has(tp):
        hints = get_type_hints(tp)
        return {f.name: valid(hints[f.name]) for f in attrs.fields(tp)}
    return {str: "ok.txt", int: 1, bool: False}.get(tp, "ok.txt")


def wrong(tp: Any) -> list[Any]:
    """Values of the wrong shape for `tp`: what a confused client sends instead."""
    tp = _inner(tp)
    origin = get_origin(tp)
    if origin is list:
        return ["notalist", {"a": 1}, 7, [[{"nested": 1}]]]
    if origin is dict or (isinstance(tp, type) and attrs.has(tp)):
        return ["notanobject", [1, 2], 7]
    if tp is bool:
        return ["maybe", [True], {"a": 1}]
    if tp is int:
        # and numbers no line, count or offset can be (an index past C's range crashed)
        return ["many", [1], {"a": 1}, 1.5, 2**31, -(2**31) - 1, 2**63 - 1, 2**70]
    return [[1], {"a": 1}, 7]  # str and Literal


def cases() -> Iterator[tuple[str, dict[str, Any], str, Any]]:
    """(method, params, the field made wrong, its wrong value), for every field at any
    depth of every method's params."""
    classes = [(name, m.params) for name, m in METHODS.items()]
    classes.append(("edit", NotebookEditParams))
    for method, cls in classes:
        base = valid(cls)
        if "budget_tokens" in base:
            # A budget that holds a refusal: at 1, readMany refuses the call as too small
            # for its entries' refusals (token_limit) before any entry is looked at.
            base["budget_tokens"] = 4000
        yield from _wrong_fields(method, base, cls, [])


def _wrong_fields(
    method: str, base: dict[str, Any], cls: Any, at: list[str]
) -> Iterator[tuple[str, dict[str, Any], str, Any]]:
    hints = get_type_hints(cls)
    for field in attrs.fields(cls):
        tp = hints[field.name]
        for value in wrong(tp):
            params = _with(base, [*at, field.name], value)
            yield method, params, ".".join([*at, field.name]), value
        inner = _inner(tp)
        if isinstance(inner, type) and attrs.has(inner):
            yield from _wrong_fields(method, base, inner, [*at, field.name])


def _with(base: dict[str, Any], where: list[str], value: Any) -> dict[str, Any]:
    out = dict(base)
    node = out
    for key in where[:-1]:
        node[key] = dict(node[key])
        node = node[key]
    node[where[-1]] = value
    return out


def refusal_data(reply: dict[str, Any]) -> dict[str, Any]:
    """The refusal's data: the call's, or a batch entry's (one bad entry of readMany's
    file_paths is refused alone, the others read: attack round 22)."""
    if "result" in reply and isinstance(reply["result"].get("results"), list):
        refused = [r["error"]["data"] for r in reply["result"]["results"] if "error" in r]
        return refused[0] if refused else {}
    data: dict[str, Any] = reply.get("error", {}).get("data", {})
    return data


def test_every_wrong_shape_of_every_field_is_bad_params_naming_it(raw: RawServer) -> None:
    failures = []
    for id_, (method, params, field, value) in enumerate(cases(), start=100):
        reply = raw.request(id_, f"readkeeper/{method}", params)
        data = refusal_data(reply)
        if data.get("kind") != "bad_params" or not str(data.get("field", "")).startswith(field):
            failures.append((method, field, value, reply.get("error") or "accepted"))
    assert not failures, "\n".join(map(str, failures[:20]))


def test_forget_with_paths_as_a_string_forgets_nothing_and_says_so(raw: RawServer) -> None:
    listed = raw.request(1, "readkeeper/readMany", {"file_paths": ["ok.txt", 7]})
    assert "result" in listed["result"]["results"][0]  # the other entry is read
    assert refusal_data(listed)["field"] == "file_paths[1]"
    reply = raw.request(2, "readkeeper/forget", {"paths": "notalist"})
    assert reply["error"]["data"]["kind"] == "bad_params"
    assert reply["error"]["data"]["field"] == "paths"
    assert "expected a list" in reply["error"]["message"]


def test_a_bad_selection_is_named(raw: RawServer) -> None:
    params = {"active_editor": {"file_path": "ok.txt", "selection": "line 3"}}
    reply = raw.request(3, "readkeeper/attachments", params)
    assert reply["error"]["data"]["kind"] == "bad_params"
    assert reply["error"]["data"]["field"] == "active_editor.selection"
    assert "string indices" not in reply["error"]["message"]


PATH_CALLS = [
    ("read", {"file_path": "{p}"}, "file_path"),
    ("edit", {"file_path": "{p}", "old_string": "a", "new_string": "b"}, "file_path"),
    ("write", {"file_path": "{p}", "content": "x"}, "file_path"),
    ("readMany", {"file_paths": ["ok.txt", "{p}"]}, "file_paths[1]"),
    ("grep", {"pattern": "x", "path": "{p}"}, "path"),
    ("grep", {"pattern": "x", "glob": "{p}"}, "glob"),
    ("glob", {"pattern": "*", "path": "{p}"}, "path"),
    ("list", {"path": "{p}"}, "path"),
    ("forget", {"paths": ["{p}"]}, "paths[0]"),
    ("attachments", {"mentions": ["{p}"]}, "mentions[0]"),
    ("attachments", {"active_editor": {"file_path": "{p}"}}, "active_editor.file_path"),
]


def _filled(value: Any, path: str) -> Any:
    if isinstance(value, dict):
        return {k: _filled(v, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, path) for v in value]
    return value.replace("{p}", path) if isinstance(value, str) else value


@pytest.mark.parametrize("bad", ["\ud800.txt", "a\udfff", "nul\x00.txt"])
@pytest.mark.parametrize(("method", "params", "field"), PATH_CALLS)
def test_a_path_no_file_can_have_is_bad_params(
    raw: RawServer, method: str, params: dict[str, Any], field: str, bad: str
) -> None:
    reply = raw.request(4, f"readkeeper/{method}", _filled(params, bad))
    assert refusal_data(reply)["kind"] == "bad_params", reply
    assert refusal_data(reply)["field"] == field


def test_a_name_in_bytes_that_are_not_utf8_still_reads(tmp_path: Path) -> None:
    # Python spells the byte 0xFF of a file name as U+DCFF; that path names a real file.
    (tmp_path / os.fsdecode(b"\xff.txt")).write_text("odd name\n")
    server = RawServer()
    try:
        server.initialize(tmp_path)
        reply = server.request(2, "readkeeper/read", {"file_path": "\udcff.txt"})
        assert "result" in reply, reply
        assert "odd name" in reply["result"]["file"]["content"]
    finally:
        server.close()
