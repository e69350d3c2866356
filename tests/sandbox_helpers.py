"""What the sandbox tests share: the secret that must never come back, the folder outside
the workspace that holds it, a process that swaps two names as fast as the kernel can,
a server session whose stderr cannot fill up, and a tally of what a run of racing
requests got back.

The swapper lives in swapper.py (the sandbox benchmark runs it too).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import warm_server
from lsprotocol import types

from conftest import Session, start_session
from readkeeper.client import JsonRpcException, ReadkeeperClient

# Text that only the files outside the workspace hold: if it shows up in any reply, the
# reply carries content from outside the workspace.
SECRET = "sandbox-secret-5f1e9c-outside-the-workspace"
SERVER_CLOSE_S = 15.0
# A batch of requests that takes longer than this is a hang, not a slow machine.
BATCH_DEADLINE_S = 60.0
# A race run whose planned tries did not all meet both states (Tally.live) goes on, a
# batch at a time, up to this many times its planned tries: on a loaded machine the
# swapper can sleep, or hold a core, through a whole run's worth of tries.
LIVE_TRIES_FACTOR = 5


def outside_folder(tmp_path: Path, name: str = "outside") -> Path:
    """A folder beside the workspace (tmp_path/ws), outside it."""
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder.resolve()


def leaked(value: Any) -> bool:
    """Whether `value` (a result, an error's message and data) carries the secret."""
    return SECRET in json.dumps(value, default=str)


class SandboxClient(ReadkeeperClient):
    """The client for racing runs. The server's stderr goes to `log`: pygls' client
    pipes it and never reads it, so a server that logs many error tracebacks (today's
    -32603 replies) fills the pipe, blocks, and stops answering. A prompt to read
    outside the workspace (a refused read asks the user) is answered Deny at once."""

    def __init__(self, log: Path) -> None:
        super().__init__()
        self.log = log
        self.prompts = 0

        @self.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def deny(client: SandboxClient, params: types.ShowMessageRequestParams) -> Any:
            client.prompts += 1
            return types.MessageActionItem(title="Deny")

    async def start_server(self, *extra_args: str, env: dict[str, str] | None = None) -> None:
        serve = warm_server.command("serve", *extra_args)
        await self.start_io(
            "sh",
            "-c",
            'log=$1; shift; exec "$@" 2>>"$log"',
            "sh",
            str(self.log),
            *serve,
            env={**os.environ, **(env or {})},
        )


@asynccontextmanager
async def sandbox_session(
    root: Path, log: Path, settings: dict[str, Any] | None = None
) -> AsyncIterator[Session]:
    """A real server for `root` (stderr to `log`), shut down on the way out, and
    killed if it does not shut down in time."""
    client = SandboxClient(log)
    try:
        yield await start_session(root, settings, client=client)
    finally:
        try:
            await asyncio.wait_for(client.close(), SERVER_CLOSE_S)
        except TimeoutError:
            raise AssertionError(
                f"the server did not shut down within {SERVER_CLOSE_S:g} s; its log: {log}"
            ) from None
        finally:
            process = getattr(client, "_server", None)  # pygls keeps the process here
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()


@dataclass
class Tally:
    """What the tries of one racing run got back."""

    tries: int = 0
    ok: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # data.kind -> count
    escapes: list[str] = field(default_factory=list)  # what got out, one line each
    without_kind: list[str] = field(default_factory=list)  # error replies with no data.kind

    def error(self, exc: BaseException, what: str) -> None:
        if not isinstance(exc, JsonRpcException):
            raise exc  # not a reply at all (a timeout, a dead server): the run is void
        data = exc.data if isinstance(exc.data, dict) else None
        if data is None or "kind" not in data:
            self.without_kind.append(f"{what}: code {exc.code} {exc.message}")
        else:
            self.refused[data["kind"]] += 1
        if leaked({"message": exc.message, "data": exc.data}):
            self.escapes.append(f"{what}: the error reply carries the secret")

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in self.refused.most_common()) or "none"
        return (
            f"{self.tries} tries: {self.ok} ok, refused ({kinds}), "
            f"{len(self.escapes)} escapes, {len(self.without_kind)} errors without a kind; "
            f"first escapes {self.escapes[:3]}; first errors without a kind "
            f"{self.without_kind[:3]}"
        )

    def live(self, *, any_ok: bool = True) -> bool:
        """Whether the race was live so far: a try met the swapped state (and, with
        `any_ok`, one met the inside state)."""
        return (self.ok > 0 or not any_ok) and sum(self.refused.values()) > 0

    def assert_sealed(self, *, any_ok: bool = True) -> None:
        """No escape, every error a readkeeper refusal, and the race was live: some
        tries met the inside state and some the swapped one (else nothing was tested).
        `any_ok=False` where the caller shows the inside state met another way (a try
        that must succeed between two swaps depends on the scheduler)."""
        assert self.escapes == [], self.summary()
        assert self.without_kind == [], self.summary()
        assert self.ok > 0 or not any_ok, (
            f"no try succeeded, so none met the inside state: {self.summary()}"
        )
        assert sum(self.refused.values()) > 0, (
            f"no try was refused, so none met the swapped state: {self.summary()}"
        )


def assert_only(tally: Tally, *kinds: str) -> None:
    """Every refusal of the run was one of `kinds`: a race is answered as a race
    (`stale`, or `outside_workspace` when the link was seen), never `internal` (a fault
    of readkeeper's) nor a kind that says the call was wrong."""
    others = {k: n for k, n in tally.refused.items() if k not in kinds}
    assert not others, f"refused as {others}, not only {kinds}: {tally.summary()}"


async def in_batches(
    tries: int,
    one: Callable[[int], Awaitable[Any]],
    settle: Callable[[int, Any], None],
    batch: int = 20,
    until: Callable[[], bool] | None = None,
) -> None:
    """Run `one(i)` for each try, `batch` at a time concurrently; hand each outcome (a
    result or the exception) to `settle(i, outcome)`. With `until`, the tries go on past
    `tries` while it is false, up to `LIVE_TRIES_FACTOR` times as many (each checked as
    the planned ones are: more tries, never fewer checks)."""
    most = tries if until is None else tries * LIVE_TRIES_FACTOR
    start = 0
    while start < tries or (start < most and until is not None and not until()):
        indices = range(start, min(start + batch, most))
        start = indices.stop
        batched = asyncio.gather(*(one(i) for i in indices), return_exceptions=True)
        try:
            outcomes = await asyncio.wait_for(batched, BATCH_DEADLINE_S)
        except TimeoutError:
            raise AssertionError(
                f"tries {indices.start}-{indices.stop - 1} got no reply within "
                f"{BATCH_DEADLINE_S:g} s"
            ) from None
        for i, outcome in zip(indices, outcomes, strict=True):
            settle(i, outcome)


def listing(folder: Path) -> list[str]:
    """Every name under `folder`, hidden and temporary files included."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
