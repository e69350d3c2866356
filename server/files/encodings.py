"""Text or binary, which encoding, which line endings.

Order of evidence: a byte-order mark wins; otherwise NUL bytes in the first 8 KB mean
binary; otherwise strict UTF-8; otherwise charset-normalizer's best guess among the legacy
encodings source files use (UTF-16/32 only ever with a BOM). A file
nothing decodes cleanly is binary: readkeeper never shows an agent U+FFFD soup, and never
writes one back.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

SNIFF_BYTES = 8192

# Longest first: the UTF-32-LE mark starts with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TextEncoding:
    """How a file's text is stored (codec and BOM), so that an edit writes it back the
    same way."""

    name: str  # a Python codec name
    bom: bytes = b""

    @property
    def label(self) -> str:
        """The encoding as results name it (`utf-8`, `utf-16-le-bom`, `cp1252`)."""
        return self.name + ("-bom" if self.bom else "")


UTF8 = TextEncoding("utf-8")


class NotText(Exception):
    """The bytes are not text in any encoding we can be honest about."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def detect(data: bytes, complete: bool = True) -> TextEncoding:
    """The encoding of `data` (the whole file when `complete`, else its first bytes)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return TextEncoding(name, bom)
    if b"\x00" in data[:SNIFF_BYTES]:
        raise NotText("it contains NUL bytes")
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        decoder.decode(data, final=complete)
        return UTF8
    except UnicodeDecodeError:
        pass
    return _legacy(data, complete)


# The legacy encodings a source tree plausibly holds. charset-normalizer weighs dozens
# more (UTF-16 without a BOM, cp1006, johab, EBCDIC...), and on a short file one of them
# often "fits" better than the truth; a guess outside this list is never taken.
_SINGLE_BYTE = frozenset(
    [f"cp{n}" for n in range(1250, 1259)]
    + [f"iso8859-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16)]
    + ["koi8-r", "koi8-u"]
)
_MULTI_BYTE = frozenset(
    {"shift_jis", "cp932", "euc_jp", "gb18030", "gbk", "gb2312", "big5", "cp950"}
    | {"euc_kr", "cp949"}
)
# A multi-byte guess needs this many multi-byte characters, and charset-normalizer's
# chaos at most this: three accented cp1252 letters pair up into two plausible Big5
# ideographs ("ação" as "a誽o"); a real CJK file has dozens.
_MIN_WIDE_CHARS = 8
_MAX_WIDE_CHAOS = 0.1


def _legacy(data: bytes, complete: bool) -> TextEncoding:
    from charset_normalizer import from_bytes  # deferred: rare, and slow to import

    sample = data[: SNIFF_BYTES * 8]
    candidates = [
        (codecs.lookup(c.encoding).name, c.chaos)
        for c in from_bytes(data[: 1 << 20] if not complete else data)
    ]
    name = None
    for guess, chaos in candidates:
        if guess in _MULTI_BYTE:
            if chaos <= _MAX_WIDE_CHAOS and _wide_chars(sample, guess) >= _MIN_WIDE_CHARS:
                name = guess
            break  # a multi-byte guess ranked first without the evidence: none
        if guess in _SINGLE_BYTE:
            break
    if name is None:
        single = [guess for guess, _ in candidates if guess in _SINGLE_BYTE]
        # Windows-1252 is by far the most common legacy encoding in source trees, and
        # charset-normalizer ranks it below look-alike code pages (cp1250, cp1251) on
        # short Western text. It wins whenever it is a candidate or its reading looks
        # Western: accented letters inside Latin words.
        if "cp1252" in single or _reads_as_western(sample) or _same_as_cp1252(sample, single):
            name = "cp1252"
        elif single:
            name = single[0]
        else:
            raise NotText("no source-file encoding decodes it")
    try:
        shown = sample.decode(name, "ignore" if not complete else "strict")
        if complete:
            data.decode(name)
    except UnicodeDecodeError as exc:
        raise NotText(f"it is not valid {name} at byte {exc.start}") from None
    controls = sum(1 for ch in shown if ord(ch) < 32 and ch not in "\t\n\r\f\v\x1b")
    if controls > max(2, len(shown) // 100):
        raise NotText("it is mostly control characters")
    return TextEncoding(name)


def _same_as_cp1252(sample: bytes, single: list[str]) -> bool:
    """Does the best single-byte guess read `sample` exactly as cp1252 does ("©" is the
    same byte in cp1250)? Then cp1252 is the likelier name."""
    try:
        return bool(single) and sample.decode(single[0]) == sample.decode("cp1252")
    except UnicodeDecodeError:
        return False


def _wide_chars(sample: bytes, name: str) -> int:
    """How many characters of `sample` take more than one byte in `name`, counted up to
    the number the guess needs."""
    wide = 0
    for ch in sample.decode(name, "ignore"):
        if not ch.isascii() and len(ch.encode(name, "ignore")) > 1:
            wide += 1
            if wide >= _MIN_WIDE_CHARS:
                break
    return wide


def _reads_as_western(data: bytes) -> bool:
    """Does the cp1252 reading of `data` look like Western text? Its non-ASCII letters sit
    beside ASCII letters ("naïve", "Größe") or alone ("é"); Cyrillic or Greek read as
    cp1252 instead comes out as whole words of accented letters ("Ïðèâåò")."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return False
    western = foreign = 0
    for word in re.findall(r"[^\W\d_]+", text):
        accented = sum(1 for ch in word if not ch.isascii())
        if not accented:
            continue
        if len(word) == 1 or accented < len(word):
            western += accented
        else:
            foreign += accented
    return western > 0 and western >= foreign


def decode(data: bytes, encoding: TextEncoding) -> str:
    """The text of `data` in `encoding`, without its BOM; raises UnicodeDecodeError."""
    return data[len(encoding.bom) :].decode(encoding.name)


def line_ending(text: str) -> str:
    """'lf', 'crlf', 'mixed' or 'none', judged on the text given."""
    if "\r" not in text:  # found at memory speed; counting a file's lines is not
        return "lf" if "\n" in text else "none"
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf and lf:
        return "mixed"
    if crlf:
        return "crlf"
    if lf:
        return "lf"
    return "none"
