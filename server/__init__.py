"""readkeeper: the file layer for editor-hosted AI coding agents."""

__version__ = "0.1.0"
