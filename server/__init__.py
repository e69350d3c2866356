"""readkeeper: the file layer for editor-hosted AI coding agents.

This folder (`server/`) is the package `readkeeper`. Its subpackage `readkeeper.attachments`
is the repository's top-level `attachments/` folder, mapped in by pyproject.toml's
`package-dir`: so `from .attachments...` here names a folder that is not under `server/`.
docs/design/internals.md (Layout) draws the folders and how they depend on each other.
"""

__version__ = "0.1.0"
