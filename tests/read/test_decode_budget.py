"""The decode budget as plain Python: the shared budget's waits and refusals, a read's
own allowance, and the images it keeps from a notebook (pricing: test_decode_price.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from document_samples import code_notebook, encode, png_output, screenshot
from image_bombs import png_bomb

from readkeeper.core import Readkeeper
from readkeeper.errors import ReadkeeperError
from readkeeper.protocol import ReadParams, unstructure
from readkeeper.read.readers import decode_budget
from readkeeper.read.readers.decode_budget import Allowance, Budget, Busy
from readkeeper.read.readers.image import fit_image
from readkeeper.settings import Settings


def test_the_budget_admits_what_fits_and_makes_the_rest_wait() -> None:
    budget = Budget(total=100)
    order: list[str] = []
    with budget.reserve(60):
        waiting = threading.Thread(target=lambda: hold(budget, 60, order))
        waiting.start()
        with budget.reserve(40):  # fits beside the first
            order.append("small")
        assert waiting.is_alive()
        order.append("first done")
    waiting.join(30)
    assert order == ["small", "first done", "second"]
    assert budget.used == 0


def hold(budget: Budget, nbytes: int, order: list[str]) -> None:
    with budget.reserve(nbytes):
        order.append("second")


def test_the_budget_refuses_after_the_wait_and_on_cancel() -> None:
    budget = Budget(total=100)
    with budget.reserve(100):
        with pytest.raises(Busy), budget.reserve(1, wait=0.1):
            pass
        with pytest.raises(Busy), budget.reserve(1, wait=30, cancelled=lambda: True):
            pass
    # A price over the whole budget runs alone rather than never.
    with budget.reserve(10_000):
        assert budget.used == 100
    assert budget.used == 0


def test_past_a_few_waiting_decodes_the_rest_are_refused_at_once() -> None:
    budget = Budget(total=100)
    refused: list[str] = []

    def wait_for_room(name: str) -> None:
        try:
            with budget.reserve(100, wait=30):
                pass
        except Busy:
            refused.append(name)

    with budget.reserve(100):
        waiters = [
            threading.Thread(target=wait_for_room, args=(f"w{n}",))
            for n in range(decode_budget.MAX_WAITING)
        ]
        for waiter in waiters:
            waiter.start()
        deadline = time.monotonic() + 30
        while budget.waiting < decode_budget.MAX_WAITING and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(Busy), budget.reserve(1, wait=30):
            pass  # refused without waiting: the test would otherwise take 30 s
    for waiter in waiters:
        waiter.join(30)
    assert refused == []  # the waiters got their turn once the first was done
    assert budget.used == 0


def test_a_decode_that_finds_no_room_is_too_large_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server's budget took its wait when it was made: the module's constant no more.
    monkeypatch.setattr(decode_budget.budget(), "wait_seconds", 0.1)
    data = encode(screenshot(), "PNG")
    full = decode_budget.budget().reserve(decode_budget.TOTAL_BYTES)
    with full, pytest.raises(ReadkeeperError) as caught:
        fit_image(data, "/w/shot.png", Settings())
    assert caught.value.kind == "too_large"
    assert caught.value.data["reason"] == "busy"
    assert "Read it again when the other image reads have answered" in caught.value.message
    assert fit_image(data, "/w/shot.png", Settings()).width == 1385  # once room is back


def test_an_image_over_the_decode_cap_is_refused_before_decoding() -> None:
    with pytest.raises(ReadkeeperError) as caught:
        fit_image(png_bomb(), "/w/bomb.png", Settings())
    error = caught.value
    assert error.kind == "too_large"
    assert error.data["width"] == error.data["height"] == 13_000
    assert error.data["decode_bytes"] > decode_budget.DECODE_MAX_BYTES
    assert "downscaled (to 1568x1568 or less) with an image tool" in error.message
    assert decode_budget.budget().used == 0


def test_the_allowance_counts_a_read_in_total() -> None:
    allowance = Allowance(100)
    assert allowance.take(60)
    assert not allowance.take(50)
    assert allowance.take(40)
    assert allowance.spent == 100


def test_a_notebook_read_decodes_its_images_within_one_total(
    core: Readkeeper, workspace: Path
) -> None:
    # 6,000 x 6,000 RGBA: about 200 MB to fit each; two fit the 512 MB of one read.
    big = png_output(png_bomb(6_000, 6_000))
    (workspace / "plots.ipynb").write_text(code_notebook(["plot()"] * 3, [big]))
    result = unstructure(core.read(ReadParams(file_path="plots.ipynb", include_images=True)))
    images = [i for c in result["file"]["cells"] for o in c["outputs"] for i in o["images"]]
    assert [i.get("base64") is not None for i in images] == [True, True, False]
    # The way on is the read again of its cell alone (cells counted from 1).
    assert images[2]["note"].endswith(
        "Read fewer cells at a time to see it. Its cell alone: offset=3, limit=1, "
        "include_images=true."
    )
    assert images[2]["width"] == 6_000
