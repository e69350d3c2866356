"""A guess without a byte-order mark is UTF-8 or one of the legacy encodings source
files use: never UTF-16/32 (docs/design/reading.md: only with a BOM), never an exotic code page."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from readkeeper.files import encodings
from readkeeper.files.encodings import NotText, detect

ALLOWED = {"utf-8"} | encodings._SINGLE_BYTE | encodings._MULTI_BYTE


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=64).filter(lambda b: b[:2] not in (b"\xff\xfe", b"\xfe\xff")))
def test_no_bom_no_utf16_guess(data: bytes) -> None:
    try:
        guess = detect(data)
    except NotText:
        return
    assert guess.bom == b"" or data.startswith(guess.bom)
    assert guess.name in ALLOWED, (data, guess)


def test_a_few_accented_letters_are_not_a_cjk_guess() -> None:
    for text in ["é\n", "ação não\nvalue = 1\n", "Grüße\n", "naïve café\n"]:
        assert detect(text.encode("cp1252")).name == "cp1252", text
