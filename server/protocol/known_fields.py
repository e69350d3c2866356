"""Each method takes its own parameters and no others.

A parameter a method does not have was silently dropped: `read` with `head: 3` read the
whole file, and the caller believed it had three lines. So a request's top-level fields
are held to an allowlist, the fields of the params class it is structured into (the
contract's fields, DESIGN.md, optional ones such as `session` among them), and any other
is refused `bad_params` naming it and, where one does that job, the parameter to send
instead. Nested objects (a diagnostic an editor forwards, with whatever its language
server put in it) are not held to it: only what a method is called with.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import attrs

from ..errors import ReadkeeperError

# Names other tools use for a job one of readkeeper's parameters does: each is offered
# only when the method has that parameter and not the name sent.
_INSTEAD = {
    "head": "limit",
    "tail": "offset",
    "lines": "limit",
    "max_lines": "limit",
    "line": "offset",
    "start_line": "offset",
    "path": "file_path",
    "file": "file_path",
    "filename": "file_path",
    "filePath": "file_path",
    "paths": "file_paths",
    "old_str": "old_string",
    "new_str": "new_string",
    "oldText": "old_string",
    "newText": "new_string",
    "text": "content",
    "query": "pattern",
    "regex": "pattern",
    "include": "glob",
    "limit": "max_matches",
    "max_results": "max_matches",
    "maxResults": "max_matches",
    "head_limit": "max_matches",
    "ignore_case": "case_sensitive",
    "excludePatterns": "exclude",
    "max_depth": "depth",
}


# LSP's own fields of any request (its progress tokens, which lsp/progress.py reads):
# the protocol's, not a method's, so every call may carry them.
_TRANSPORT = frozenset({"workDoneToken", "partialResultToken"})


@cache
def fields_of(cls: type) -> frozenset[str]:
    """The parameters `cls` (a contract params class) takes."""
    return frozenset(field.name for field in attrs.fields(cls))


def check_known(params: dict[str, Any], cls: type) -> None:
    """Refuse the first parameter of `params` that `cls` has no field for."""
    known = fields_of(cls)
    unknown = sorted(str(key) for key in params if key not in known and key not in _TRANSPORT)
    if not unknown:
        return
    from ..errors import shown_name

    extra = unknown[0]
    shown = shown_name(extra)  # cut in its middle when long, as every name is
    taken = ", ".join(sorted(known))
    instead = _INSTEAD.get(extra)
    if instead in known:
        raise ReadkeeperError(
            "bad_params",
            f"This call has no parameter {shown}: {instead} does that job; send "
            f"{instead} instead. Its parameters are {taken}.",
            field=extra,
            instead=instead,
        )
    raise ReadkeeperError(
        "bad_params",
        f"This call has no parameter {shown}, so it would be ignored; send only its "
        f"parameters: {taken}.",
        field=extra,
    )


# The entries of a call's lists whose keys are held to their fields as a call's params
# are (`check_known`): a typo there was dropped silently, and the edit applied without
# it (`replace_al`, round 38). Objects the editor sends (diagnostics, ranges) keep what
# else they carry.
_STRICT_ENTRIES = frozenset({"PlainEdit", "AnchorEdit", "FileEdit", "Replacement"})


def check_entry_fields(value: dict[str, Any], cls: type) -> None:
    """Refuse (ValueError, the converter's) a key of an entry `cls` has no field for."""
    if cls.__name__ not in _STRICT_ENTRIES:
        return
    unknown = sorted(str(key) for key in value if key not in fields_of(cls))
    if unknown:
        from ..errors import shown_name

        taken = ", ".join(sorted(fields_of(cls)))
        raise ValueError(f"has no field {shown_name(unknown[0])}; its fields are {taken}")
