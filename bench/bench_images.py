"""Benchmark the image decode budget (issue 28, item 7).

Run it as `.venv/bin/python bench/bench_images.py` (about two minutes on a 2-core
machine). It prints a table and writes every figure to `bench/results/images.json`.
Figures are shown beside their targets with pass/MISS; nothing is asserted.

Rows:
- budget overhead: `fit_image` of a 2880x1800 PNG screenshot in this process, with the
  decode budget (pricing from the header, the reservation, `malloc_trim` after) and with
  the reservation and trim taken out (the same code otherwise), alternating; the
  overhead is the difference of the medians over the unbudgeted median. Target: under
  10%. `LSP` is a forced read of the same file through a real server (round trip).
- bombs: four `readkeeper/read`s of 13,000 x 13,000 RGBA PNGs (650 KB each, 676 MB
  decoded) sent at once to a fresh server, with a stream of 3-line reads of a text file
  sent one after another until all four have answered. Reported: the server's peak RSS
  (VmHWM; target under 1 GB), its RSS after, how the four were answered, and the
  3-line reads' p50/p95 beside them against the same reads on an idle server.
- admitted: the same with four 7,000 x 7,000 RGBA PNGs (196 MB decoded each), which the
  budget decodes two at a time: all four are shown downscaled.
- notebook: a notebook of six 13,000 x 13,000 PNGs read with `include_images`.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from document_samples import code_notebook, encode, png_output, screenshot  # noqa: E402
from image_bombs import png_bomb  # noqa: E402

from common import (  # noqa: E402
    READKEEPER_SERVE,
    LspProcess,
    machine,
    proc_status,
    scored,
    scratch,
    server,
    summarize,
    verdict,
    write_json,
)

TARGET_OVERHEAD = 0.10
TARGET_PEAK_MB = 1024.0


@contextlib.contextmanager
def unbudgeted() -> Iterator[None]:
    """`fit_image` without the reservation and the trim (pricing stays: it is the header
    read every decode did already)."""
    from readkeeper.read.readers import decode_budget, image

    class Free:
        def reserve(self, *args: Any, **kwargs: Any) -> Any:
            return contextlib.nullcontext()

    saved_budget, saved_trim = image.budget, decode_budget._trim
    image.budget = lambda: Free()  # type: ignore[assignment,return-value]
    decode_budget._trim = None
    try:
        yield
    finally:
        image.budget = saved_budget
        decode_budget._trim = saved_trim


def overhead(repeats: int) -> dict[str, Any]:
    from readkeeper.read.readers.image import fit_image
    from readkeeper.settings import Settings

    data = encode(screenshot(), "PNG")
    settings = Settings()
    fit_image(data, "shot.png", settings)  # warm-up: Pillow's plugins and codecs
    with_budget: list[float] = []
    without: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit_image(data, "shot.png", settings)
        with_budget.append((time.perf_counter() - start) * 1000)
        with unbudgeted():
            start = time.perf_counter()
            fit_image(data, "shot.png", settings)
            without.append((time.perf_counter() - start) * 1000)
    a, b = statistics.median(with_budget), statistics.median(without)
    return {
        "budgeted": summarize(with_budget),
        "unbudgeted": summarize(without),
        "overhead": (a - b) / b,
    }


def lsp_screenshot(root: Path, log: Any, repeats: int) -> dict[str, float]:
    (root / "shot.png").write_bytes(encode(screenshot(), "PNG"))
    times = []
    with server(READKEEPER_SERVE, root, log) as lsp:
        lsp.request("readkeeper/read", {"file_path": "shot.png", "force": True})
        for _ in range(repeats):
            start = time.perf_counter()
            lsp.request("readkeeper/read", {"file_path": "shot.png", "force": True})
            times.append((time.perf_counter() - start) * 1000)
    return summarize(times)


def small_read(lsp: LspProcess, ident: int, offset: int) -> dict[str, Any]:
    params = {"file_path": "notes.txt", "offset": offset, "limit": 3, "force": True}
    return {"jsonrpc": "2.0", "id": ident, "method": "readkeeper/read", "params": params}


def alongside(lsp: LspProcess, names: list[str], extra: dict[str, Any]) -> dict[str, Any]:
    """Send a read of each of `names` at once, then 3-line reads one after another until
    every one of them has answered: the answers, and the 3-line reads' round trips."""
    pending = {}
    for n, name in enumerate(names):
        ident = 10_000 + n
        pending[ident] = name
        lsp._send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "readkeeper/read",
                "params": {"file_path": name, "force": True, **extra},
            }
        )
    answers: dict[str, str] = {}
    small_ms: list[float] = []
    ident = 1_000_000
    start_all = time.perf_counter()
    while pending or len(small_ms) < 20:
        ident += 1
        lsp._send(small_read(lsp, ident, 1 + len(small_ms) % 297))
        start = time.perf_counter()
        while True:
            message = lsp._receive()
            if message.get("id") in pending:
                name = pending.pop(message["id"])
                if "error" in message:
                    answers[name] = message["error"]["data"]["kind"]
                else:
                    answers[name] = message["result"]["type"]
                continue
            if message.get("id") == ident:
                break
        if pending or len(small_ms) < 20:  # only the reads made while a decode was in flight count
            small_ms.append((time.perf_counter() - start) * 1000)
    return {
        "answers": answers,
        "all_answered_s": time.perf_counter() - start_all,
        "small": summarize(small_ms, ("p50_ms", "p95_ms", "max_ms")),
    }


def idle_small(lsp: LspProcess, count: int) -> dict[str, float]:
    times = []
    for n in range(-20, count):  # 20 warm-up reads first (the token table's load)
        start = time.perf_counter()
        lsp.request("readkeeper/read", small_read(lsp, 0, 1 + n % 297)["params"])
        if n >= 0:
            times.append((time.perf_counter() - start) * 1000)
    return summarize(times, ("p50_ms", "p95_ms", "max_ms"))


def storm(root: Path, log: Any, picture: bytes, tag: str) -> dict[str, Any]:
    names = []
    for n in range(4):
        names.append(f"{tag}{n}.png")
        (root / names[-1]).write_bytes(picture)
    (root / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 301)))
    with server(READKEEPER_SERVE, root, log) as lsp:
        idle = idle_small(lsp, 100)
        before = proc_status(lsp.pid)
        result = alongside(lsp, names, {})
        time.sleep(0.5)
        after = proc_status(lsp.pid)
    return {
        **result,
        "idle_small": idle,
        "rss_before_mb": before["VmRSS"],
        "peak_rss_mb": after["VmHWM"],
        "rss_after_mb": after["VmRSS"],
    }


def notebook(root: Path, log: Any, bomb: bytes) -> dict[str, Any]:
    (root / "plots.ipynb").write_text(code_notebook(["plot()"] * 6, [png_output(bomb)]))
    with server(READKEEPER_SERVE, root, log) as lsp:
        start = time.perf_counter()
        lsp.request("readkeeper/read", {"file_path": "plots.ipynb", "include_images": True})
        seconds = time.perf_counter() - start
        status = proc_status(lsp.pid)
    return {
        "bytes": (root / "plots.ipynb").stat().st_size,
        "seconds": seconds,
        "peak_rss_mb": status["VmHWM"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "images.json")
    args = parser.parse_args()

    figures: dict[str, Any] = {"overhead": overhead(args.repeats)}
    bomb = png_bomb()
    with scratch("readkeeper-bench-images-") as (root, log):
        figures["screenshot_lsp"] = lsp_screenshot(root, log, args.repeats)
        figures["bombs"] = storm(root, log, bomb, "bomb")
        figures["admitted"] = storm(root, log, png_bomb(7_000, 7_000), "big")
        figures["notebook"] = notebook(root, log, bomb)

    cost = figures["overhead"]
    print(f"{'row':<44}{'figure':>16}  target")
    print(
        f"{'screenshot fit, budgeted p50 ms':<44}{cost['budgeted']['p50_ms']:>16.1f}\n"
        f"{'screenshot fit, unbudgeted p50 ms':<44}{cost['unbudgeted']['p50_ms']:>16.1f}\n"
        f"{'budget overhead':<44}{cost['overhead']:>16.1%}  <= 10% "
        f"{verdict(cost['overhead'], TARGET_OVERHEAD)}\n"
        f"{'screenshot via LSP p50 ms':<44}{figures['screenshot_lsp']['p50_ms']:>16.1f}"
    )
    for key, label in (("bombs", "4 bombs 13000^2"), ("admitted", "4 images 7000^2")):
        row = figures[key]
        answers = ", ".join(sorted(set(row["answers"].values())))
        peak = row["peak_rss_mb"]
        print(
            f"{label + ': answered as':<44}{answers:>16}\n"
            f"{label + ': all answered after s':<44}{row['all_answered_s']:>16.2f}\n"
            f"{label + ': server peak RSS MB':<44}{peak:>16.0f}  <= 1024 "
            f"{verdict(peak, TARGET_PEAK_MB)}\n"
            f"{label + ': RSS before / after MB':<44}"
            f"{row['rss_before_mb']:>7.0f} / {row['rss_after_mb']:>6.0f}\n"
            f"{label + ': 3-line read p50/p95 ms beside':<44}"
            f"{row['small']['p50_ms']:>7.1f} / {row['small']['p95_ms']:>6.1f}\n"
            f"{label + ': 3-line read p50/p95 ms idle':<44}"
            f"{row['idle_small']['p50_ms']:>7.1f} / {row['idle_small']['p95_ms']:>6.1f}"
        )
    book = figures["notebook"]
    print(
        f"{'notebook, 6 bombs, include_images: s':<44}{book['seconds']:>16.2f}\n"
        f"{'notebook: server peak RSS MB':<44}{book['peak_rss_mb']:>16.0f}"
    )
    report = {
        "machine": machine(),
        "figures": figures,
        "targets": scored(
            {
                "budget overhead": (cost["overhead"], TARGET_OVERHEAD),
                "peak RSS under 4 bombs (MB)": (figures["bombs"]["peak_rss_mb"], TARGET_PEAK_MB),
                "peak RSS under 4 admitted (MB)": (
                    figures["admitted"]["peak_rss_mb"],
                    TARGET_PEAK_MB,
                ),
            }
        ),
    }
    write_json(args.out, report)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
