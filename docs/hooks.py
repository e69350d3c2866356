"""MkDocs hook: pages whose text lives elsewhere in the repository, shown as they are.

SECURITY.md, CHANGELOG.md, bench/README.md and the Neovim plugin's README are read
where they are kept (one copy each, which tests and tools read there too) and appear in
the site under the names below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent

# Page in the site -> file of the repository.
INCLUDED = {
    "security-rules.md": "SECURITY.md",
    "changelog.md": "CHANGELOG.md",
    "benchmarks.md": "bench/README.md",
    "neovim-plugin.md": "extension/neovim/README.md",
}


def on_files(files: Files, config: Any) -> Files:
    for page, source in INCLUDED.items():
        files.append(File.generated(config, page, abs_src_path=str(ROOT / source)))
    return files
