"""The advice an error gives is true: following it works, and asks for no less than needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams


def _source(lines: int) -> str:
    # Indented code: the line break and the next line's number prefix often merge into
    # one token, so per-line counts overstate the joined text.
    return "".join(
        f"    def method_{i}(self, value: int) -> int:  # step {i}\n" for i in range(lines)
    )


@pytest.mark.parametrize("offset", [1, 37])
def test_largest_limit_is_the_largest_range_that_fits(workspace: Path, offset: int) -> None:
    (workspace / "mod.py").write_text(_source(900))
    core = Readkeeper(roots=[str(workspace)], client_settings={"max_tokens": 2000})
    with pytest.raises(ReadkeeperError) as caught:
        core.read(ReadParams(file_path="mod.py", offset=offset, limit=600))
    error = caught.value
    assert error.kind == "token_limit"
    largest = error.data["largest_limit"]
    assert f"offset={offset}, limit={largest}." in error.message
    # Following the advice works...
    fitted = core.read(ReadParams(file_path="mod.py", offset=offset, limit=largest))
    assert fitted.file.num_lines == largest  # type: ignore[union-attr]
    assert fitted.file.tokens <= 2000  # type: ignore[union-attr]
    # ...and one line more does not: it is the largest.
    with pytest.raises(ReadkeeperError) as again:
        core.read(ReadParams(file_path="mod.py", offset=offset, limit=largest + 1, force=True))
    assert again.value.kind == "token_limit"
