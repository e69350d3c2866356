"""The picture of a session, as one self-contained HTML file (`readkeeper stats --html`):
what the agent read, when, at what cost, and what readkeeper saved it (stubs, outlines
and budgets, diffs), over time and per file, drawn from the journal (state/journal.py).

Every value that reaches the page goes through `_text` (HTML-escaped, quotes too): file
paths come from the repository, which may be hostile, and a name such as
`</svg><script>` must stay text. Before that, the characters quoting.py's naming rule
escapes (a byte that is not UTF-8, bidirectional overrides, zero-width characters) are
escaped, so a name cannot read reversed or as another, and the page always encodes.
The page loads nothing and runs no script; its Content-Security-Policy says so to the
browser as well.
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Iterable, Sequence
from typing import Any

from .quoting import printable

# Time slices of the chart, and the rows of each table.
BARS = 48
TOP_FILES = 50
LATEST_CALLS = 200
WIDTH, HEIGHT = 720, 200

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"
_STYLE = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) { background: #f4f4f4; } .note { color: #555; }
.sent { fill: #3b6fd4; } .saved { fill: #3ca55c; } .axis { stroke: #999; }
code { word-break: break-all; }
"""


def _text(value: Any) -> str:
    """`value` as HTML text or an attribute value: every `<`, `>`, `&` and quote escaped,
    and every character the naming rule escapes (`quoting.printable`)."""
    return html.escape(printable(str(value)), quote=True)


def _events(history: dict[str, Any]) -> list[dict[str, Any]]:
    events = history.get("events")
    if not isinstance(events, list):
        return []
    return [e for e in events if isinstance(e, dict) and isinstance(e.get("at_ms"), int)]


def _top_level(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events that are not part of another (a mention's read within attachments):
    what the totals and the chart add up, each token once."""
    return [e for e in events if not e.get("within")]


def _int(event: dict[str, Any], name: str) -> int:
    value = event.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _when(at_ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(at_ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def chart(events: Sequence[dict[str, Any]]) -> str:
    """An SVG of the tokens sent and saved per slice of time, stacked (sent below)."""
    if not events:
        return '<p class="note">No calls yet.</p>'
    start = min(e["at_ms"] for e in events)
    span = max(1, max(e["at_ms"] for e in events) - start)
    sent, saved = [0] * BARS, [0] * BARS
    for event in _top_level(events):
        slot = min(BARS - 1, (event["at_ms"] - start) * BARS // span)
        sent[slot] += _int(event, "tokens")
        saved[slot] += _int(event, "saved")
    top = max(1, max(a + b for a, b in zip(sent, saved, strict=True)))
    bar = WIDTH / BARS
    shapes = []
    for slot in range(BARS):
        x = slot * bar
        low = sent[slot] * (HEIGHT - 20) / top
        high = saved[slot] * (HEIGHT - 20) / top
        if low:
            shapes.append(
                f'<rect class="sent" x="{x:.1f}" y="{HEIGHT - low:.1f}" '
                f'width="{bar - 1:.1f}" height="{low:.1f}"/>'
            )
        if high:
            shapes.append(
                f'<rect class="saved" x="{x:.1f}" y="{HEIGHT - low - high:.1f}" '
                f'width="{bar - 1:.1f}" height="{high:.1f}"/>'
            )
    label = (
        f"Tokens sent (blue) and saved (green) from {_when(start)} to "
        f"{_when(start + span)}; the tallest slice is {top:,} tokens."
    )
    return (
        f'<svg id="readkeeper-chart" role="img" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{_text(label)}</title>"
        f'<line class="axis" x1="0" y1="{HEIGHT - 0.5}" x2="{WIDTH}" y2="{HEIGHT - 0.5}"/>'
        f'{"".join(shapes)}</svg><p class="note">{_text(label)}</p>'
    )


def _per_file(events: Iterable[dict[str, Any]]) -> list[tuple[str, int, int, int, int]]:
    """(path, calls, tokens sent, tokens saved, last at_ms) per file, costliest first."""
    files: dict[str, list[int]] = {}
    for event in events:
        path = event.get("path")
        if not isinstance(path, str) or not path:
            continue
        row = files.setdefault(path, [0, 0, 0, 0])
        row[0] += 1
        row[1] += _int(event, "tokens")
        row[2] += _int(event, "saved")
        row[3] = max(row[3], event["at_ms"])
    rows = [(path, calls, sent, saved, last) for path, (calls, sent, saved, last) in files.items()]
    rows.sort(key=lambda r: (-r[2] - r[3], r[0]))  # what it weighed: sent and saved
    return rows


def _what(event: dict[str, Any]) -> str:
    """A call's kind, with its refusal and the call it ran within."""
    what = str(event.get("kind", ""))
    if event.get("error"):
        what += f" ({event['error']})"
    if event.get("within"):
        what += f", within {event['within']}"
    return what


def _table(head: Sequence[str], rows: Iterable[Sequence[tuple[Any, bool]]]) -> str:
    """A table; each cell (value, numeric) escaped."""
    header = "".join(f"<th>{_text(h)}</th>" for h in head)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{_text(f"{v:,}" if isinstance(v, int) else v)}</td>'
            if numeric
            else f"<td><code>{_text(v)}</code></td>"
            for v, numeric in row
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{header}</tr>{body}</table>"


def page(stats: dict[str, Any], title: str = "readkeeper: the session") -> str:
    """The whole HTML page for a `readkeeper/stats` answer sent with `history`."""
    history = stats.get("history") if isinstance(stats.get("history"), dict) else {}
    assert isinstance(history, dict)
    events = _events(history)
    sent = sum(_int(e, "tokens") for e in _top_level(events))
    saved = sum(_int(e, "saved") for e in _top_level(events))
    cap, dropped = history.get("cap"), history.get("dropped")
    notes = [
        f"{len(events):,} calls: {sent:,} tokens sent to the agent, {saved:,} saved by "
        "readkeeper (stubs of unchanged re-reads, outlines and budget cuts, diffs)."
    ]
    if isinstance(dropped, int) and dropped:
        notes.append(
            f"Only the newest {cap:,} calls are kept in memory: {dropped:,} older ones were "
            "dropped and are not shown (the counters below still count them)."
        )
    beyond = history.get("beyond_roots")
    if isinstance(beyond, int) and beyond:
        notes.append(f"{beyond:,} calls about files beyond this connection's roots are left out.")
    files = _per_file(events)
    file_rows = [
        [(p, False), (n, True), (t, True), (s, True), (_when(at), False)]
        for p, n, t, s, at in files[:TOP_FILES]
    ]
    latest = events[-LATEST_CALLS:][::-1]
    call_rows = [
        [
            (_when(e["at_ms"]), False),
            (e.get("session", ""), False),
            (_what(e), False),
            (e.get("path", ""), False),
            (_int(e, "tokens"), True),
            (_int(e, "saved"), True),
            (f"{e.get('ms', 0)}", True),
        ]
        for e in latest
    ]
    total = stats.get("total") if isinstance(stats.get("total"), dict) else {}
    assert isinstance(total, dict)
    counters = [
        [(name, False), (value, True)]
        for name, value in total.items()
        if isinstance(value, int) and not isinstance(value, bool)
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_text(_CSP)}">'
        f"<title>{_text(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{_text(title)}</h1>"
        + "".join(f'<p class="note">{_text(n)}</p>' for n in notes)
        + "<h2>Over time</h2>"
        + chart(events)
        + f"<h2>Per file (the {TOP_FILES} costliest)</h2>"
        + _table(["file", "calls", "tokens sent", "tokens saved", "last"], file_rows)
        + f"<h2>The latest calls (up to {LATEST_CALLS}, newest first)</h2>"
        + _table(["when", "session", "what", "file", "tokens", "saved", "ms"], call_rows)
        + "<h2>Counters (every call since the server started)</h2>"
        + _table(["counter", "value"], counters)
        + "</body></html>\n"
    )
