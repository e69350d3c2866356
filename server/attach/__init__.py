"""Attach mode (`readkeeper.attach`): the editor's server shares its core with
`readkeeper mcp` over a private Unix socket. `discovery.py` finds it (and keeps its
folder private), `framing.py` frames the calls, `listener.py` is the editor's side and
`client.py` the agent's. Nothing here imports pygls or the MCP SDK."""
