"""A malformed request names the field, what was wrong, and how to write it right."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Session
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import EditParams, ReadParams, WriteParams, structure


def refusal(raw: Any, cls: type[Any]) -> ReadkeeperError:
    with pytest.raises(ReadkeeperError) as caught:
        structure(raw, cls)
    assert caught.value.kind == "bad_params"
    return caught.value


@pytest.mark.parametrize(
    ("raw", "cls", "field", "fix"),
    [
        ({"file_path": "a.py", "offset": "forty-two"}, ReadParams, "offset", "e.g. 42."),
        ({"file_path": "a.py", "limit": "all"}, ReadParams, "limit", "e.g. 200,"),
        ({}, ReadParams, "file_path", 'e.g. "src/app.py".'),
        ({"file_path": 3}, ReadParams, "file_path", 'e.g. "src/app.py".'),
        ({"file_path": "a.py", "pages": 3.5}, ReadParams, "pages", '"3", "1-5" or "2,4-6".'),
        ({"file_path": "a.py", "symbol": 3}, ReadParams, "symbol", '"Class.method" or "function".'),
        ({"file_path": "a.py", "session": 3}, ReadParams, "session", 'e.g. "chat-1".'),
        ({"file_path": "a.py", "force": "maybe"}, ReadParams, "force", "true or false"),
        ({"file_path": "a.py", "new_string": "x"}, EditParams, "old_string", "exactly"),
        ({"file_path": "a.py"}, WriteParams, "content", "whole new content"),
    ],
)
def test_each_bad_param_names_its_fix(
    raw: dict[str, Any], cls: type[Any], field: str, fix: str
) -> None:
    error = refusal(raw, cls)
    assert error.data["field"] == field
    assert error.message.startswith(f"Invalid params: {field} ")
    assert fix in error.message, error.message
    # The example is a value, never `name=value` (a way on only hints.again writes).
    assert f"{field}=" not in error.message, error.message


async def test_a_read_without_a_path_through_the_server_says_what_to_send(
    lsp: Session,
) -> None:
    error = await lsp.error("readkeeper/read", {"offset": "forty-two"})
    assert error.data["kind"] == "bad_params"
    assert 'e.g. "src/app.py".' in error.message
    assert "file_path=" not in error.message
