"""The handshake's answers, made by the SDK itself: `python -m readkeeper.mcp.handshake`
writes `handshake_answers.py`, which early.py answers from while the SDK loads.

Each tool set (`VARIANTS`: the arguments of `readkeeper mcp` that choose it) is started
once per protocol version the SDK speaks, with a `ping` first (so that nothing is
answered early and every answer below is the SDK's), and asked what a client asks
first: `initialize` and then `tools/list` in each handshake version, `server/discover`
and `tools/list` in each version without a handshake. The results are kept as the
SDK wrote them, by tool set, method and version. tests/mcp/test_mcp_early.py makes
them again and compares: a change of the tools, their schemas, the instructions or
the SDK that would change an answer fails it until this is run again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# Tool sets, by the name early.py is given, and the `readkeeper mcp` arguments that serve them.
VARIANTS: dict[str, list[str]] = {"readkeeper": [], "filesystem": ["--tools", "filesystem"]}

TARGET = Path(__file__).resolve().with_name("handshake_answers.py")
_CLIENT = {"name": "readkeeper-handshake", "version": "1"}
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def generate(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The versions and every answer, as `handshake_answers.py` holds them."""
    from mcp_types.version import (
        HANDSHAKE_PROTOCOL_VERSIONS,
        LATEST_HANDSHAKE_VERSION,
        MODERN_PROTOCOL_VERSIONS,
    )

    jobs = [
        (variant, args, version, version in MODERN_PROTOCOL_VERSIONS)
        for variant, args in VARIANTS.items()
        for version in (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
    ]
    results: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        for found in pool.map(lambda job: _answers(*job, env=env), jobs):
            results.update(found)
    return {
        "HANDSHAKE_VERSIONS": tuple(HANDSHAKE_PROTOCOL_VERSIONS),
        "LATEST_HANDSHAKE": LATEST_HANDSHAKE_VERSION,
        "RESULTS": dict(sorted(results.items())),
    }


def _answers(
    variant: str, args: list[str], version: str, modern: bool, *, env: dict[str, str] | None
) -> dict[str, str]:
    """The SDK's results for one tool set and version, by key."""
    asked: list[tuple[str, dict[str, Any]]]
    if modern:
        meta: dict[str, Any] = {
            _VERSION_KEY: version,
            "io.modelcontextprotocol/clientInfo": _CLIENT,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        asked = [("server/discover", {"_meta": meta}), ("tools/list", {"_meta": meta})]
        ping: dict[str, Any] = {"_meta": meta}
    else:
        hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": _CLIENT}
        asked = [("initialize", hello), ("tools/list", {})]
        ping = {}
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "ping", "params": ping}]
    for n, (method, params) in enumerate(asked, 1):
        lines.append({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        if method == "initialize":
            lines.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    stdin = "".join(json.dumps(line) + "\n" for line in lines).encode()
    command = [sys.executable, "-m", "readkeeper", "mcp", "--standalone", *args]
    done = subprocess.run(
        command, input=stdin, capture_output=True, env=env, timeout=300, check=False
    )
    replies: dict[Any, bytes] = {}
    for written in done.stdout.splitlines():
        replies[json.loads(written).get("id")] = written
    found = {}
    for n, (method, _) in enumerate(asked, 1):
        line = replies.get(n)
        prefix = b'{"jsonrpc":"2.0","id":%d,"result":' % n
        if line is None or not line.startswith(prefix) or not line.endswith(b"}"):
            raise RuntimeError(
                f"{method} ({version}, {variant}) got no result: {line!r}; "
                f"stderr: {done.stderr[-2000:]!r}"
            )
        found[f"{variant}|{method}|{version}"] = line[len(prefix) : -1].decode("utf-8")
    return found


def render(answers: dict[str, Any]) -> str:
    """The source of `handshake_answers.py`."""
    results = answers["RESULTS"].items()
    rows = "".join(f"    {_str(key)}: {_str(value)},\n" for key, value in results)
    return (
        '"""The results of the SDK\'s first answers, by tool set, method and protocol\n'
        "version: made by `python -m readkeeper.mcp.handshake` (handshake.py), not by hand.\n"
        '"""\n\n'
        "# ruff: noqa: E501\n\n"
        f"HANDSHAKE_VERSIONS = ({', '.join(map(_str, answers['HANDSHAKE_VERSIONS']))})\n"
        f"LATEST_HANDSHAKE = {_str(answers['LATEST_HANDSHAKE'])}\n"
        f"RESULTS: dict[str, str] = {{\n{rows}}}\n"
    )


def _str(text: str) -> str:
    """`text` as a Python literal the way ruff's formatter writes it (the file is checked
    by `ruff format --check`): double quotes, unless the text holds more of them than of
    single quotes (a JSON answer), where repr's single quotes escape fewer."""
    if text.count('"') > text.count("'"):
        return repr(text)
    return '"' + repr(text)[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'


def main() -> int:
    """Write `handshake_answers.py` anew."""
    TARGET.write_text(render(generate()))
    print(f"written {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
