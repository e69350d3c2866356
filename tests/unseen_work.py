"""Another program's change the agent never saw, shared by the tests of the rules that
keep it unseen (a merge, SECURITY.md's "A merge never counts as seeing the other
change"; a partial read, "A read never counts as seeing what it did not show"), and the
core calls they make."""

from __future__ import annotations

from typing import Any

import pytest

from readkeeper import calls
from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError

# A file of 100 lines, and the same after another program rewrote line 80.
ORIGINAL = "".join(f"line {i}\n" for i in range(1, 101))
THEIRS = ORIGINAL.replace("line 80\n", "line 80 THEIR UNSEEN WORK\n")


def call(core: Readkeeper, name: str, **params: Any) -> Any:
    """A core call that must succeed; its JSON-ready result."""
    return calls.call(core, name, params)


def refused(core: Readkeeper, name: str, **params: Any) -> ReadkeeperError:
    """A core call that must be refused; the refusal."""
    with pytest.raises(ReadkeeperError) as caught:
        calls.call(core, name, params)
    return caught.value
