"""Write the server's settings table into package.json (`contributes.configuration`).

The server's `readkeeper.settings.SETTINGS` is the one source of truth: this script
renders it as the VS Code section titled "Server" (camelCase keys under `readkeeper.`,
the server's defaults and descriptions, `machine` scope for a user-only setting), leaving
the extension's own section alone, and lists every user-only setting in
`capabilities.untrustedWorkspaces.restrictedConfigurations`; and it writes which way
each limit is tighter (`SettingSpec.tighter`) into src/common/limits.json, which the
extension's settings reader uses so that a workspace may only tighten a limit.
tests/editors/test_vscode_extension.py fails when either file is out of date.

    .venv/bin/python extension/vscode/scripts/sync_settings.py          # rewrite
    .venv/bin/python extension/vscode/scripts/sync_settings.py --check  # exit 1 if stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from readkeeper.settings import SETTINGS, SettingSpec

PACKAGE_JSON = Path(__file__).resolve().parent.parent / "package.json"
LIMITS_JSON = PACKAGE_JSON.parent / "src" / "common" / "limits.json"
SERVER_SECTION_TITLE = "Server"


def schema_for(spec: SettingSpec) -> dict[str, Any]:
    default = spec.default
    entry: dict[str, Any]
    if isinstance(default, bool):
        entry = {"type": "boolean", "default": default}
    elif isinstance(default, int):
        entry = {"type": "integer", "default": default}
        if spec.minimum is not None:
            entry["minimum"] = spec.minimum
        if spec.maximum is not None:
            entry["maximum"] = spec.maximum
    elif isinstance(default, tuple | list):
        entry = {"type": "array", "items": {"type": "string"}, "default": list(default)}
    elif isinstance(default, str):
        entry = {"type": "string", "default": default}
        if spec.choices:
            entry["enum"] = list(spec.choices)
    else:
        entry = {"default": default}
    if spec.user_only:
        # Widens the sandbox or names a program or data: the user's alone (SECURITY.md).
        entry["scope"] = "machine"
    entry["markdownDescription"] = (
        f"{spec.description} (server setting `{spec.name}`; "
        f"the environment variable `{spec.env_var}` overrides it.)"
    )
    return entry


def server_section() -> dict[str, Any]:
    return {
        "title": SERVER_SECTION_TITLE,
        "properties": {f"readkeeper.{spec.camel_name}": schema_for(spec) for spec in SETTINGS},
    }


def synced(package: dict[str, Any]) -> dict[str, Any]:
    sections = package["contributes"]["configuration"]
    others = [s for s in sections if s.get("title") != SERVER_SECTION_TITLE]
    package["contributes"]["configuration"] = [*others, server_section()]
    # Restricted mode ignores every user-only setting's workspace value, whichever
    # section declares it (the extension's own `interpreter` among them).
    user_only = [
        key
        for section in package["contributes"]["configuration"]
        for key, schema in section["properties"].items()
        if schema.get("scope") in ("machine", "application")
    ]
    untrusted = package["capabilities"]["untrustedWorkspaces"]
    untrusted["restrictedConfigurations"] = user_only
    return package


def limits() -> dict[str, str]:
    """camelCase key (without `readkeeper.`) of each server limit: which way is tighter."""
    return {spec.camel_name: spec.tighter for spec in SETTINGS if spec.tighter}


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = PACKAGE_JSON.read_text(encoding="utf-8")
    stale = 0
    for path, wanted in (
        (PACKAGE_JSON, _json(synced(json.loads(text)))),
        (LIMITS_JSON, _json(limits())),
    ):
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if wanted == current:
            continue
        if "--check" in argv:
            print(f"{path} is out of date: run {Path(__file__).name}", file=sys.stderr)
            stale = 1
        else:
            path.write_text(wanted, encoding="utf-8")
            print(f"updated {path}")
    return stale


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
