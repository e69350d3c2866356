"""Outlines kept across servers in the user's cache (read/readers/outline_cache.py,
issue 34): by the digest of the decoded text and the grammar's versions, so a content
change, a file swapped under the same mtime or another decoding is another entry; the
settings are never part of an entry (a read decides with them every time); an entry
that is not an outline of the text is ignored and made anew, never trusted beyond
what an outline can be; a cache folder that is a symlink is not used."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from outline_samples import LANGUAGES, sample

from conftest import LinkedCache
from helpers import read
from readkeeper.core import Readkeeper
from readkeeper.files.user_cache import UserCache, encode_entry, flush, shared
from readkeeper.read.readers import outline, outline_cache
from readkeeper.read.readers.grammars import PYTHON

SOURCE = "".join(f"class Thing{i}:\n    def run(self):\n        return {i}\n\n" for i in range(400))


def names(found: list[outline.Symbol]) -> list[str]:
    return [s.qualified_name for _, s in outline.walk(found)]


def entry(folder: Path) -> Path:
    flush()  # the entry is written on the cache's writer thread
    [found] = [p for p in folder.iterdir() if p.name.startswith(outline_cache.CACHE_KIND)]
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_languages_outline_comes_back_from_its_entry_unchanged(language: str) -> None:
    written = sample(language)
    text = written.text
    grammar = outline.grammar_for(written.name, text[:4096].encode())
    assert grammar is not None
    found = outline.symbols(text, grammar)
    again = outline_cache.parse(outline_cache.dump(found), text.count("\n") + 1)
    assert again is not None
    assert [(d, vars(s) | {"children": len(s.children)}) for d, s in outline.walk(again)] == [
        (d, vars(s) | {"children": len(s.children)}) for d, s in outline.walk(found)
    ]


def test_a_second_outline_of_the_same_text_is_read_from_the_cache(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path))
    first = outline_cache.symbols(SOURCE, PYTHON, user_cache=cache)
    assert names(first)[:2] == ["Thing0", "Thing0.run"]
    # The entry is what a second server reads: one rewritten (a valid outline of the
    # text, other names) shows that it is read, not parsed again.
    key = outline_cache.entry_key(SOURCE, PYTHON)
    forged = [["class", "Kept", "Kept", 1, 3, "class Kept", [], ""]]
    entry(tmp_path).write_bytes(encode_entry(key, json.dumps(forged).encode()))
    assert names(outline_cache.symbols(SOURCE, PYTHON, user_cache=cache)) == ["Kept"]


def test_another_text_or_decoding_is_another_entry() -> None:
    key = outline_cache.entry_key(SOURCE, PYTHON)
    assert outline_cache.entry_key(SOURCE.replace("Thing7", "Thang7"), PYTHON) != key
    raw = "café = 1\n".encode()
    assert outline_cache.entry_key(raw.decode("utf-8"), PYTHON) != outline_cache.entry_key(
        raw.decode("latin-1"), PYTHON
    )


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"not json",
        b"{}",
        b"[[1, 2]]",
        json.dumps([["class", "A", "A", 0, 3, "class A", [], ""]]).encode(),  # line 0
        json.dumps([["class", "A", "A", 5, 4, "class A", [], ""]]).encode(),  # ends first
        json.dumps([["class", "A", "A", 1, 10**6, "class A", [], ""]]).encode(),  # past the end
        json.dumps([["class", 7, "A", 1, 3, "class A", [], ""]]).encode(),
        json.dumps([["class", "A", "A", True, 3, "class A", [], ""]]).encode(),
        json.dumps([["class", "A", "A", 1, 3, "class A", {}, ""]]).encode(),
        json.dumps([["class", "A", "A", 1, 3, "class A", []]]).encode(),  # before "whole"
        json.dumps([["class", "A", "A", 1, 3, "class A", [], 7]]).encode(),  # "whole" a number
        b"[" * 100_000 + b"]" * 100_000,  # nested past any depth
    ],
)
def test_an_entry_that_is_not_an_outline_of_the_text_is_ignored_and_made_anew(
    tmp_path: Path, payload: bytes
) -> None:
    cache = UserCache(str(tmp_path))
    outline_cache.symbols(SOURCE, PYTHON, user_cache=cache)
    key = outline_cache.entry_key(SOURCE, PYTHON)
    entry(tmp_path).write_bytes(encode_entry(key, payload))
    assert names(outline_cache.symbols(SOURCE, PYTHON, user_cache=cache))[:1] == ["Thing0"]
    assert outline_cache.parse(payload, SOURCE.count("\n") + 1) is None
    assert names(outline_cache.symbols(SOURCE, PYTHON, user_cache=cache))[:1] == ["Thing0"]


def test_a_corrupt_entry_is_ignored(tmp_path: Path) -> None:
    cache = UserCache(str(tmp_path))
    outline_cache.symbols(SOURCE, PYTHON, user_cache=cache)
    data = bytearray(entry(tmp_path).read_bytes())
    data[-20] ^= 0x20
    entry(tmp_path).write_bytes(bytes(data))
    assert names(outline_cache.symbols(SOURCE, PYTHON, user_cache=cache))[:1] == ["Thing0"]


def outline_read(workspace: Path, **settings: object) -> dict[str, object]:
    core = Readkeeper(roots=[str(workspace)], client_settings=settings or None)
    core.tokens.warm_up()
    try:
        return read(core, "m.py")
    finally:
        core.close()


def test_a_file_swapped_under_the_same_mtime_and_size_is_outlined_anew(workspace: Path) -> None:
    path = workspace / "m.py"
    path.write_text(SOURCE)
    stamp = path.stat()
    assert "Thing7" in str(outline_read(workspace)["file"])
    path.write_text(SOURCE.replace("Thing7", "Thang7"))
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert path.stat().st_size == stamp.st_size
    shown = str(outline_read(workspace)["file"])
    assert "Thang7" in shown
    assert "Thing7" not in shown


def test_the_settings_decide_every_read_whatever_is_cached(workspace: Path) -> None:
    (workspace / "m.py").write_text(SOURCE)
    assert outline_read(workspace)["type"] == "outline"
    assert outline_read(workspace, outline_over_tokens=1_000_000)["type"] == "text"
    assert outline_read(workspace)["type"] == "outline"


def test_a_cache_folder_that_is_a_symlink_is_not_used(
    workspace: Path, symlinked_cache: LinkedCache
) -> None:
    (workspace / "m.py").write_text(SOURCE)
    assert outline_read(workspace)["type"] == "outline"
    assert list(symlinked_cache.elsewhere.iterdir()) == []


def whole_key(workspace: Path, threshold: int = 8_000) -> str:
    core = Readkeeper(roots=[str(workspace)])
    try:
        width = core.settings.number_width
        return outline_cache.whole_key(SOURCE, threshold, width, core.tokens.encoding_name)
    finally:
        core.close()


def test_a_restarted_server_takes_the_deciding_count_from_the_cache(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no other test's entry
    (workspace / "m.py").write_text(SOURCE)
    counted = outline_read(workspace)["file"]
    assert isinstance(counted, dict)
    assert counted["file_tokens"] > 8_000
    # Rewritten (another count a file of this size could have), the entry is what a
    # new server answers with: it did not count again.
    shared().put(outline_cache.WHOLE_KIND, whole_key(workspace), b"12345")
    again = outline_read(workspace)
    assert again["type"] == "outline"
    assert isinstance(again["file"], dict)
    assert again["file"]["file_tokens"] == 12_345
    # Another threshold is another entry.
    other = outline_read(workspace, outline_over_tokens=7_000)["file"]
    assert isinstance(other, dict)
    assert other["file_tokens"] != 12_345


@pytest.mark.parametrize("payload", [b"99999999", b"100", b"12a", b"", b"-1", "١٢٣٤٥".encode()])
def test_a_kept_count_that_cannot_be_the_files_is_counted_anew(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: bytes
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (workspace / "m.py").write_text(SOURCE)
    counted = outline_read(workspace)["file"]
    assert isinstance(counted, dict)
    shared().put(outline_cache.WHOLE_KIND, whole_key(workspace), payload)
    again = outline_read(workspace)
    assert again["type"] == "outline"
    assert isinstance(again["file"], dict)
    assert again["file"]["file_tokens"] == counted["file_tokens"]


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (b"x = 1  # ascii\n" * 100, "utf-8"),
        ("é = 'ü'\n".encode() * 100, "utf-8"),
        ("é = 'ü'\n".encode("latin-1") * 100, "latin-1"),  # other bytes, the same text
        ("x = 'é'\n".encode("utf-16") * 3, "utf-16"),
    ],
)
def test_a_files_hash_stands_for_its_texts_only_when_the_text_is_its_utf8(
    data: bytes, encoding: str
) -> None:
    # A read hashes a file it may outline once (pipeline._content_digest): the digest
    # of the bytes is the text's key only when the text's UTF-8 is those bytes.
    text = data.decode(encoding)
    assert outline_cache.digest_known(text, data) == hashlib.sha256(data).hexdigest()
    expected = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert outline_cache.text_digest(text) == expected
