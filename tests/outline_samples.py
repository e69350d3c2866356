"""Real source files for the outline and symbol-read tests, one per language.

Each language names the real files a well-known package ships on this machine (CPython's
standard library and headers, numpy's test data in the venv, the VS Code extension's
node_modules, which `npm ci` installs, Git's contrib sources), with a symbol to read in
each. Java has no real file on the machine, so its sample is written here; Go and Rust
fall back to a written sample where Git's contrib sources or a Rust toolchain are
missing. `sample(...)` says which one a test got (`real`).
"""

from __future__ import annotations

import sysconfig
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "extension" / "vscode" / "node_modules"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
INCLUDE = Path(sysconfig.get_paths()["include"])
SITE = Path(sysconfig.get_paths()["purelib"])


@dataclass(frozen=True)
class Sample:
    """A source file, a symbol in it and text its symbol read starts with."""

    name: str  # the file name it gets in the test workspace
    text: str
    symbol: str  # a nested symbol where the language has nesting
    starts_with: str  # the first line of the symbol read contains this
    real: bool


@dataclass(frozen=True)
class Candidate:
    path: Path
    symbol: str
    starts_with: str


JAVA = """\
package org.example.inventory;

import java.util.HashMap;
import java.util.Map;

/** Keeps the stock of every item, by SKU. */
public class Inventory {
    private final Map<String, Integer> items = new HashMap<>();

    /** An empty inventory. */
    public Inventory() {}

    /**
     * Adds {@code amount} of an item.
     */
    @Deprecated
    public int restock(String sku, int amount) {
        int now = items.getOrDefault(sku, 0) + amount;
        items.put(sku, now);
        return now;
    }

    public interface Listener {
        void changed(String sku, int amount);
    }

    enum Unit {
        PIECE, BOX;

        int size() {
            return this == BOX ? 12 : 1;
        }
    }
}
"""

GO = """\
package store

import "sync"

// Store keeps values by key, safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	values map[string]string
}

// Get returns the value of key.
func (s *Store) Get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	value, ok := s.values[key]
	return value, ok
}

// New makes an empty store.
func New() *Store {
	return &Store{values: map[string]string{}}
}
"""

RUST = """\
use std::fmt;

/// A point on the plane.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    x: f64,
    y: f64,
}

impl Point {
    /// The distance to another point.
    pub fn distance(&self, other: &Point) -> f64 {
        ((self.x - other.x).powi(2) + (self.y - other.y).powi(2)).sqrt()
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}
"""

RUSTUP = Path.home() / ".rustup" / "toolchains"
CANDIDATES: dict[str, list[Candidate]] = {
    "python": [Candidate(Path(typing.__file__), "TextIO.buffer", "@property")],
    "javascript": [
        Candidate(
            NODE_MODULES / "vscode-languageclient/lib/common/client.js",
            "BaseLanguageClient.sendRequest",
            "sendRequest(",
        )
    ],
    "typescript": [
        Candidate(
            NODE_MODULES / "vscode-languageserver-types/lib/umd/main.d.ts",
            "Range.create",
            "/**",
        )
    ],
    "go": [
        Candidate(
            Path("/usr/share/doc/git/contrib/persistent-https/proxy.go"), "Proxy.Run", "func (p"
        )
    ],
    "rust": [
        Candidate(path / "share/doc/rust/html/error_codes/main.rs", "OutputFormat.from", "fn from")
        for path in sorted(RUSTUP.glob("*"))
    ],
    "c": [Candidate(INCLUDE / "object.h", "_object", "/* Nothing is actually declared")],
    "cpp": [
        Candidate(
            SITE / "numpy/_core/tests/data/generate_umath_validation_data.cpp",
            "computeTrueVal",
            "template",
        ),
        Candidate(STDLIB / "test/test_cppext/extension.cpp", "StrongRef.StrongRef", "StrongRef("),
    ],
    "markdown": [Candidate(NODE_MODULES / "debug/README.md", "Formatters.Custom formatters", "#")],
}
WRITTEN: dict[str, Sample] = {
    "java": Sample("Inventory.java", JAVA, "Inventory.restock", "/**", real=False),
    "go": Sample("store.go", GO, "Store.Get", "// Get", real=False),
    "rust": Sample("point.rs", RUST, "Point.distance", "/// The distance", real=False),
}
SUFFIX = {
    "python": ".py",
    "javascript": ".js",
    "typescript": ".d.ts",
    "go": ".go",
    "rust": ".rs",
    "java": ".java",
    "c": ".h",
    "cpp": ".cpp",
    "markdown": ".md",
}
# The languages whose only real samples come from the extension's node_modules: their
# tests skip, saying so, until `npm ci` has run there (tests/run runs it; in CI,
# READKEEPER_NO_SKIP=1 makes such a skip a failure).
FROM_NPM = {
    language
    for language, candidates in CANDIDATES.items()
    if language not in WRITTEN and all(c.path.is_relative_to(NODE_MODULES) for c in candidates)
}
LANGUAGES = [
    pytest.param(language, marks=pytest.mark.ci_required) if language in FROM_NPM else language
    for language in SUFFIX
]
NO_NODE_MODULES = (
    f"{NODE_MODULES} has no such file: run `npm ci` in extension/vscode (tests/run does) "
    "for the JavaScript, TypeScript and Markdown samples"
)


def node_modules_file(relative: str) -> Path:
    """A file the extension's node packages ship; the test skips when they are missing."""
    path = NODE_MODULES / relative
    if not path.is_file():
        pytest.skip(f"{relative}: {NO_NODE_MODULES}")
    return path


def sample(language: str) -> Sample:
    """The first real file of `language` on this machine, else the written one."""
    for candidate in CANDIDATES.get(language, []):
        if candidate.path.is_file():
            return Sample(
                "sample" + SUFFIX[language],
                candidate.path.read_text(encoding="utf-8"),
                candidate.symbol,
                candidate.starts_with,
                real=True,
            )
    if language in WRITTEN:
        return WRITTEN[language]
    if language in FROM_NPM:
        pytest.skip(f"no {language} sample: {NO_NODE_MODULES}")
    raise AssertionError(
        f"no {language} source on this machine: {[str(c.path) for c in CANDIDATES[language]]} "
        "are missing (run `npm ci` in extension/vscode for the node_modules ones)"
    )
