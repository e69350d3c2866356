"""Write the server's settings table into package.json (`contributes.configuration`).

The server's `readkeeper.settings.SETTINGS` is the one source of truth: this script
renders it as the VS Code section titled "Server" (camelCase keys under `readkeeper.`,
the server's defaults and descriptions, `machine` scope for a user-only setting), leaving
the extension's own section alone, and lists every user-only setting in
`capabilities.untrustedWorkspaces.restrictedConfigurations`.
tests/editors/test_vscode_extension.py fails when package.json is out of date.

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


def main(argv: list[str]) -> int:
    text = PACKAGE_JSON.read_text(encoding="utf-8")
    wanted = json.dumps(synced(json.loads(text)), indent=2, ensure_ascii=False) + "\n"
    if "--check" in argv:
        if wanted != text:
            print(f"{PACKAGE_JSON} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    if wanted != text:
        PACKAGE_JSON.write_text(wanted, encoding="utf-8")
        print(f"updated {PACKAGE_JSON}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
