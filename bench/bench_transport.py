"""Benchmark the stream reader against bad frames (issue 10): how many leave the server wedged.

Run it as `.venv/bin/python bench/bench_transport.py`. It prints a table and writes the
same figures to `bench/results/transport.json`.

One `readkeeper serve` gets `--frames` bad frames (seeded: the same run every time), of
the kinds measured on issue 10 (a Content-Length too short, too long, huge, negative or
missing, LF-only headers, junk before a header, a body that is not UTF-8, nested 100,000
deep, without `method`, with `"jsonrpc": "1.0"`) and random damage to a request (a cut,
a flipped byte, a garbled header, random bytes). Right behind each bad frame come two
well-formed requests. The server is **wedged** by a frame when it is alive and the
second request has no answer within 5 s (target 0); the first may be swallowed by the
bad frame's declared length, which no reader can undo. When the server exits instead
(it must be non-zero, with the reason on stderr), it is counted and restarted.

Also counted: bad frames whose request id is readable and that got their one error
reply, and any request answered twice (target 0). The stub re-read p50 (row 1b of
bench_read.py) on the same server after the frames shows the reader's speed.

`--serve` runs another server command, e.g. an older readkeeper for a before/after:
`--serve "env PYTHONPATH=/path/to/old python -m readkeeper serve" --frames 20`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import shlex
import statistics
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from bench_read import python_like_source
from common import READKEEPER_SERVE, clean_env, machine, scratch, verdict, write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "transport.json"
WAIT_S = 5.0
TARGET_STUB_MS = 1.0


# --- bad frames ---------------------------------------------------------------------------


def body(id_: int, method: str = "readkeeper/stats", version: str = "2.0") -> bytes:
    return json.dumps({"jsonrpc": version, "id": id_, "method": method, "params": {}}).encode()


def framed(data: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def _cut(rng: random.Random, id_: int) -> bytes:
    data = body(id_)
    return framed(data[: rng.randrange(len(data))])


def _flip(rng: random.Random, id_: int) -> bytes:
    data = bytearray(body(id_))
    data[rng.randrange(len(data))] = rng.choice(b'\xff\x00\r\n{}"')
    return framed(bytes(data))


def _garbled_header(rng: random.Random, id_: int) -> bytes:
    frame = bytearray(framed(body(id_)))
    frame[rng.randrange(frame.index(b"\r\n\r\n") + 4)] = rng.randrange(256)
    return bytes(frame)


# Each kind: how to make it (for request `id_`), and whether its id is readable, so that
# it must get an error reply (the others are logged: there is no request to answer).
KINDS: dict[str, tuple[Callable[[random.Random, int], bytes], bool]] = {
    "content_length_too_short": (
        lambda rng, i: (
            b"Content-Length: %d\r\n\r\n" % (len(body(i)) - rng.randint(1, 12)) + body(i)
        ),
        True,
    ),
    "content_length_too_long": (
        lambda rng, i: (
            b"Content-Length: %d\r\n\r\n" % (len(body(i)) + rng.randint(1, 5000)) + body(i)
        ),
        True,
    ),
    "content_length_1e12": (
        lambda rng, i: b"Content-Length: 1000000000000\r\n\r\n" + body(i),
        True,
    ),
    "content_length_2e70": (lambda rng, i: b"Content-Length: %d\r\n\r\n" % 2**70 + body(i), True),
    "content_length_negative": (lambda rng, i: b"Content-Length: -5\r\n\r\n" + body(i), True),
    "content_length_missing": (lambda rng, i: b"Content-Type: x\r\n\r\n" + body(i), True),
    "lf_only_headers": (lambda rng, i: b"Content-Length: %d\n\n" % len(body(i)) + body(i), False),
    "junk_before_header": (
        lambda rng, i: rng.randbytes(rng.randint(1, 40)) + framed(body(i)),
        False,
    ),
    "not_utf8": (lambda rng, i: framed(body(i)[:-1] + b',"x":"\xff\xfe"}'), True),
    "nested_100k_deep": (
        lambda rng, i: framed(body(i)[:-3] + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        True,
    ),
    "no_method": (lambda rng, i: framed(b'{"jsonrpc":"2.0","id":%d,"params":{}}' % i), True),
    "jsonrpc_1_0": (lambda rng, i: framed(body(i, version="1.0")), True),
    "cut_body": (_cut, False),
    "flipped_byte": (_flip, False),
    "garbled_header": (_garbled_header, False),
    "random_bytes": (lambda rng, i: rng.randbytes(rng.randint(1, 200)), False),
}


# --- a raw client with deadlines ----------------------------------------------------------


class Server:
    """The server on raw stdio; its output read on a thread, every wait bounded."""

    def __init__(self, argv: list[str], root: Path, log: IO[bytes]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            env=clean_env(),
        )
        assert self.proc.stdin is not None
        self.stdin = self.proc.stdin
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr = bytearray()
        self._log = log
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.request(
            0,
            "initialize",
            {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}},
        )
        self.send(framed(b'{"jsonrpc":"2.0","method":"initialized","params":{}}'))

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while (line := out.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if not line or length is None:
                    return
                message = json.loads(out.read(length))
                if "method" not in message:  # notifications and server requests: not ours
                    self.replies.put(message)
        finally:
            self.replies.put(None)

    def _read_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        while chunk := err.read1(65536):
            self.stderr += chunk
            self._log.write(chunk)

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def wait_for(self, id_: int, timeout: float = WAIT_S) -> list[dict[str, Any]] | None:
        """Every reply up to the one to `id_`; None when none came in time or the
        server exited."""
        deadline = time.monotonic() + timeout
        seen = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = self.replies.get(timeout=left)
            except queue.Empty:
                return None
            if reply is None:
                self.replies.put(None)
                return None
            seen.append(reply)
            if reply.get("id") == id_:
                return seen
        return None

    def request(self, id_: int, method: str, params: Any) -> dict[str, Any]:
        self.send(
            framed(
                json.dumps(
                    {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
                ).encode()
            )
        )
        replies = self.wait_for(id_)
        if replies is None:
            raise RuntimeError(f"{method} got no answer")
        return replies[-1]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


# --- the run ------------------------------------------------------------------------------


def fire(argv: list[str], root: Path, log: IO[bytes], frames: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    kinds = list(KINDS)
    server = Server(argv, root, log)
    per_kind: dict[str, Counter[str]] = {kind: Counter() for kind in kinds}
    answered_twice = 0
    try:
        for n in range(frames):
            kind = kinds[n % len(kinds)]
            make, has_id = KINDS[kind]
            bad, first, second = 3 * n + 10, 3 * n + 11, 3 * n + 12
            tally = per_kind[kind]
            tally["frames"] += 1
            with contextlib.suppress(BrokenPipeError):  # it exited: counted below
                server.send(make(rng, bad) + framed(body(first)) + framed(body(second)))
            replies = server.wait_for(second)
            if replies is None:
                if server.alive:
                    tally["wedged"] += 1
                else:
                    code = server.proc.wait()
                    tally["exited"] += 1
                    tally["exited_with_reason"] += int(
                        code != 0 and b"Closing the connection" in server.stderr
                    )
                server.close()
                server = Server(argv, root, log)
                continue
            ids = Counter(r.get("id") for r in replies)
            answered_twice += sum(1 for count in ids.values() if count > 1)
            if has_id:
                tally["with_id"] += 1
                tally["answered"] += int(any(r.get("id") == bad and "error" in r for r in replies))
            tally["first_swallowed"] += int(ids[first] == 0)
        stub = stub_reads(server, root)
    finally:
        server.close()
    total = Counter[str]()
    for tally in per_kind.values():
        total.update(tally)
    return {
        "frames": frames,
        "seed": seed,
        "wedged": total["wedged"],
        "exited": total["exited"],
        "exited_with_reason": total["exited_with_reason"],
        "with_id": total["with_id"],
        "answered": total["answered"],
        "first_swallowed": total["first_swallowed"],
        "answered_twice": answered_twice,
        "per_kind": {kind: dict(tally) for kind, tally in per_kind.items()},
        "stub_read": stub,
    }


def stub_reads(server: Server, root: Path, n: int = 300) -> dict[str, float]:
    """Row 1b of bench_read.py on this server: re-reads answered with the stub."""
    path = root / "module.py"
    params = {"file_path": str(path)}
    for _ in range(20):
        server.request(1, "readkeeper/read", {**params, "force": True})
    server.request(1, "readkeeper/read", params)
    samples = []
    for i in range(n):
        start = time.perf_counter()
        reply = server.request(100_000_000 + i, "readkeeper/read", params)
        samples.append((time.perf_counter() - start) * 1000)
        if reply.get("result", {}).get("type") != "file_unchanged":
            raise RuntimeError(f"expected the stub, got {reply}")
    return {"p50_ms": statistics.median(samples), "n": n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200, help="bad frames to send")
    parser.add_argument("--seed", type=int, default=10, help="seed of the bad frames")
    parser.add_argument("--serve", help="server command (default: readkeeper serve)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    command = shlex.split(args.serve) if args.serve else READKEEPER_SERVE

    began = time.perf_counter()
    with scratch("readkeeper-bench-transport-") as (root, log):
        (root / "module.py").write_text(python_like_source(0))
        report = fire(command, root, log, args.frames, args.seed)
    stub = report["stub_read"]["p50_ms"]

    print(
        f"readkeeper transport benchmark: {args.frames} bad frames (seed {args.seed}), "
        f"{len(KINDS)} kinds, load {os.getloadavg()[0]:.2f}, {time.perf_counter() - began:.0f} s"
    )
    head = f"{'measure':<56} {'value':>11}  {'target':<7} result"
    print(head)
    print("-" * len(head))

    def row(label: str, value: str, target: str = "", result: str = "") -> None:
        print(f"{label:<56} {value:>11}  {target:<7} {result}")

    frames, wedged, twice = report["frames"], report["wedged"], report["answered_twice"]
    row(
        "bad frames that left the server wedged (5 s)",
        f"{wedged} / {frames}",
        "0",
        verdict(wedged, 0),
    )
    row("bad frames after which it exited (non-zero, reason)", f"{report['exited']} / {frames}")
    row(
        "bad frames with a readable id answered with an error",
        f"{report['answered']} / {report['with_id']}",
    )
    row("first requests behind them swallowed", f"{report['first_swallowed']} / {frames}")
    row("requests answered twice", str(twice), "0", verdict(twice, 0))
    row(
        "stub re-read p50, same server after the frames",
        f"{stub:.3f}ms",
        "<=1ms",
        verdict(stub, TARGET_STUB_MS),
    )
    write_json(
        args.output,
        {**report, "command": command, "machine": {**machine(), "load_average": os.getloadavg()}},
    )
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
