"""Whether a background thread still does its work, as `readkeeper/stats` says it.

The server's background threads (the watcher's worker, the reads ahead, the work left
for after an answer, the glob listings built after a first answer) each catch what one
step of their work raises; what is left can still end one: an error outside a step (a
wait the platform cannot make), or a BaseException a step lets through. A thread that
ended must never be reported as running: each one runs its loop under `Health.run`,
which records why it ended, in readkeeper's words, for `stats` (`workers`) and the log;
its owner then starts it again (`restart_due`) or says the feature stopped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..errors import fault_reason

log = logging.getLogger("readkeeper")


class Health:
    """The health of one kind of background thread: running, idle, or failed (why)."""

    def __init__(self, what: str, on_failure: Callable[[str], object] | None = None) -> None:
        self.what = what  # "the watcher's worker": how messages name it
        self.failure: str | None = None  # why the last one ended on an error
        self.failures = 0
        self.restarts = 0
        self.down = False  # the last one ended on an error and none runs since
        self._on_failure = on_failure

    def run(self, loop: Callable[[], object]) -> Callable[[], None]:
        """A thread target that runs `loop` and records why it ended, if not by returning."""

        def target() -> None:
            try:
                loop()
            except BaseException as exc:  # recorded: the thread ends anyway
                self.failed(exc)

        return target

    def failed(self, exc: BaseException) -> str:
        """Record that the thread ended on `exc`; the sentence `stats` and the log show."""
        self.failures += 1
        self.down = True
        # One line of readkeeper's words: an error's text may hold a file's name.
        self.failure = f"{self.what} stopped on an unexpected error: {fault_reason(exc)}"
        log.error("readkeeper: %s", self.failure, exc_info=exc)
        if self._on_failure is not None:
            self._on_failure(self.failure)
        return self.failure

    def restart_due(self, thread: threading.Thread | None) -> bool:
        """Whether `thread` (the owner's) ended on an error and is to be started again
        (counted); a thread never started or still running is not."""
        if thread is None or thread.is_alive() or thread.ident is None or not self.down:
            return False
        self.restarts += 1
        self.down = False
        return True

    def status(self, thread: threading.Thread | None) -> dict[str, Any]:
        """As `readkeeper/stats` shows it under `workers`: `running` (the thread is
        alive), `idle` (none needed yet), or `failed` (it ended, and why)."""
        alive = thread is not None and thread.is_alive()
        state = "running" if alive else "failed" if self.down else "idle"
        status: dict[str, Any] = {"state": state, "failures": self.failures}
        if self.failure is not None:
            status["failure"] = self.failure
        if self.restarts:
            status["restarts"] = self.restarts
        return status
