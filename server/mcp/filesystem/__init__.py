"""`readkeeper mcp --tools filesystem`: a drop-in for the reference MCP filesystem
server (`@modelcontextprotocol/server-filesystem`).

The same 14 tools with the same names and parameters (`tools.py`), so a client swaps
one command in its configuration and its prompts keep working, while every call goes
through readkeeper's core as the editor's agent's calls do: stubs for what the session
already holds, caps and budgets, stale checks, the roots and the sandbox, unsaved editor
buffers when attached. `serve.py` turns each tool's arguments into readkeeper calls and
shows the answer as the reference server does (`listings.py` for the folder tools),
`words.py` names the next call of an error as a tool of this server.
"""

from __future__ import annotations

from .args import Served
from .serve import error_result, serve
from .tools import SCHEMAS, TOOL_NAMES, TOOLS

__all__ = ["SCHEMAS", "TOOLS", "TOOL_NAMES", "Served", "error_result", "serve"]
