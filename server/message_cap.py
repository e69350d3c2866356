"""One cap on the size of every message a front end takes in: an LSP frame's body
(lsp/framing.py), an MCP stdio line (mcp/line_cap.py), an attach socket frame
(attach/framing.py). A message carries at most a file's new content; one over the cap
is answered with a `too_large` error where the protocol can carry one, and never read
whole into memory. (MCP over HTTP is held to the SDK's own 4 MiB body limit, below it.)
"""

from __future__ import annotations

MAX_MESSAGE_BYTES = 64 << 20
