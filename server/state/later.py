"""Work a call leaves for after its answer: what it will record in a session's read-state,
done before that session's next call can look.

A search proves the lines it showed before they count as seen (search/seen.py): each
file opened again and checked, a few milliseconds for a search of fifty files. Nothing
in the answer depends on it, so the answer need not wait for it; but every later look at
the session's read-state must, or an edit right after the search would find nothing
recorded. So the work is queued here, per session, and `settle` waits for it:
ReadStates settles a session before each look at it (state/readstate.py), and each call
settles its session before it starts (calls.py). Only the moment moves: the work is what
it was, on the same files, and a change landing before it is found by its checks, as one
landing between ripgrep's look and the proof always was.

The work waits until the answer is out: a front end calls `answered` once it has written
an answer. Started earlier, it would take the interpreter's lock from the thread writing
that answer, and the answer would wait for it after all. A `settle` starts it too, so
nothing depends on a front end saying so (the CLI and tests call the core directly).

One thread runs the work in the order it came, in the context of the call that left it
(its workspace, never another's), with no progress sent (that call's progress has
ended). Work that fails is logged and dropped, as a failed proof records nothing. Should
the thread itself end on an error, `health` says why (stats: `workers`) and the next
`defer` or `settle` starts another, which runs what is queued (state/health.py).
"""

from __future__ import annotations

import contextvars
import logging
import threading
import weakref
from collections import Counter, deque
from collections.abc import Callable

from .. import progress
from .health import Health

log = logging.getLogger("readkeeper")

Job = Callable[[], object]
# A settle waits at most this long: a search's proof takes milliseconds; a stuck one must
# not stall every later call of its session.
SETTLE_S = 10.0

# Every queue of this process, for `answered` (a front end does not know the core's).
_QUEUES: weakref.WeakSet[Later] = weakref.WeakSet()


def answered() -> None:
    """An answer went out (a front end calls this after each one it writes): the work
    queued before it may run."""
    for queue in list(_QUEUES):
        queue.release()


class Later:
    """Queued work per session, run in order on one thread once released."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._jobs: deque[tuple[int, str, contextvars.Context, Job]] = deque()
        self._pending: Counter[str] = Counter()
        self._queued = 0  # jobs ever queued: each one's number
        self._released = 0  # the jobs numbered up to this may run
        self._thread: threading.Thread | None = None
        self._closed = False
        self._local = threading.local()
        self.counts = {"done": 0, "failed": 0, "waits": 0}
        self.health = Health("the work left for after an answer")
        _QUEUES.add(self)

    def defer(self, session: str, job: Job) -> None:
        """Run `job` once the answer of the call that asks is out, and before `session`'s
        state is looked at again. A closed queue runs it at once."""
        context = contextvars.copy_context()
        context.run(progress.detach)
        with self._cond:
            if not self._closed:
                self._queued += 1
                self._jobs.append((self._queued, session, context, job))
                self._pending[session] += 1
                self._start()
                return
        context.run(job)

    def release(self) -> None:
        """Let everything queued so far run."""
        if self._released == self._queued:  # nothing held: the common case, no lock
            return
        with self._cond:
            self._released = self._queued
            self._cond.notify_all()

    def settle(self, session: str | None = None) -> bool:
        """Run, and wait until done, the work queued for `session` (for every session when
        None); whether it was, within `SETTLE_S` (past it the caller goes on without it,
        as if the work had found nothing to record: never a hang). The worker itself
        never waits: its work looks at the state it writes."""
        if getattr(self._local, "worker", False):
            return True
        with self._cond:
            if not self._waiting(session):
                return True
            self.counts["waits"] += 1
            self._released = self._queued
            self._start()  # again, if the last thread ended on an error
            self._cond.notify_all()
            settled = self._cond.wait_for(lambda: not self._waiting(session), SETTLE_S)
        if not settled:
            log.warning("Work left for session %s still runs after %s s", session, SETTLE_S)
        return settled

    def close(self) -> None:
        """Drop what is queued (the state it would write goes with the core) and stop the
        worker after its job in progress."""
        with self._cond:
            self._closed = True
            self._jobs.clear()
            self._pending.clear()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _waiting(self, session: str | None) -> bool:
        return bool(self._pending) if session is None else self._pending[session] > 0

    def _runnable(self) -> bool:
        return self._closed or bool(self._jobs and self._jobs[0][0] <= self._released)

    def _start(self) -> None:
        if self._thread is None or self.health.restart_due(self._thread):
            target = self.health.run(self._loop)
            self._thread = threading.Thread(target=target, name="readkeeper-later", daemon=True)
            self._thread.start()

    def status(self) -> dict[str, object]:
        """Its thread's health and counts, as `readkeeper/stats` shows them (`workers`)."""
        return {**self.health.status(self._thread), **self.counts}

    def _loop(self) -> None:
        self._local.worker = True
        while True:
            with self._cond:
                self._cond.wait_for(self._runnable)
                if self._closed:
                    return
                _, session, context, job = self._jobs.popleft()
            try:
                context.run(job)
                self.counts["done"] += 1
            except Exception:
                self.counts["failed"] += 1
                log.exception("Work left by a call of session %s failed", session)
            finally:
                with self._cond:
                    if self._pending[session] > 0:
                        self._pending[session] -= 1
                    if not self._pending[session]:
                        del self._pending[session]
                    self._cond.notify_all()
