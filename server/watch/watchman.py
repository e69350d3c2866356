"""Watchman: the watcher's backend for workspaces too big to watch with inotify alone.

One Watchman watch of a tree is shared by every tool on the machine (git's fsmonitor,
editors, test runners), starts from the crawl it already holds, and spends no inotify
watch of readkeeper's. backends.py decides when to use it (the `watcher` setting),
intake.py treats what it reports like inotify's events, and this module only talks to
the service:

- One connection per workspace root, one subscription on it (name, exists, new, type;
  VCS folders left out), and one receive thread reading its unilateral PDUs.
- The clock: a subscription starts `since` the clock Watchman gives just before, so
  its first PDU is not the whole tree. The last clock of each root is kept; when the
  connection breaks or the watch is cancelled, the subscription resumes once on a new
  connection `since` that clock, so changes made in between are reported. A clock of
  another Watchman instance or of an earlier watch of the root means nothing to the
  service, which would answer with every file of the tree (`is_fresh_instance`; 4.9
  cannot leave them out): the subscription starts from the current clock instead, and
  the files agents read under the root are re-checked, as they are for a fresh
  instance reported in a PDU (whose file list is not looked at).
- Nothing readkeeper does removes a watch: `watch-project` reuses the watch that holds
  the root (or a folder above it) and starts one only when there is none, and that
  watch is left running for the next readkeeper and every other tool (Watchman reaps
  watches nobody uses). A service that is not running is started only at setup, never
  behind a user who stopped it.

pywatchman is an optional dependency (the `readkeeper[watchman]` extra), imported
here when Watchman is used; its untyped client is wrapped by `_Connection`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import logging
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .. import errors, quoting
from ..files.ignore import VCS_FOLDERS
from ..files.paths import is_within
from .threads import name_os_thread

log = logging.getLogger("readkeeper")

_NAME = "readkeeper"  # the subscription's name (one per connection)
_FIELDS = ["name", "exists", "new", "type"]
# VCS folders churn on every git command and are never read through the watcher;
# IgnoreRules still judges every path Watchman reports.
_EXPRESSION = ["not", ["anyof", *(["dirname", folder] for folder in sorted(VCS_FOLDERS))]]
# Every wait on Watchman while setting up a subscription is bounded, one deadline per
# step, enforced by a timer that shuts the socket down (`_Connection.within`): pywatchman's
# own timeout is per read, so a service that trickles bytes or log lines would never hit
# it. Reaching it (the connect, pywatchman's handshake, `version`): a running service
# answers at once. The rest (`watch-list`, `watch-project`, `clock`, `subscribe`): a first
# watch of a big tree waits for Watchman's crawl. No first PDU is awaited (Watchman sends
# none until something changes).
_REACH_TIMEOUT_S = 10.0
_COMMAND_TIMEOUT_S = 300.0
_SPAWN_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 5.0
# A subscription that broke this soon after resuming does not resume again (a service
# that accepts and drops connections must not keep a thread spinning).
_RESUME_AFTER_S = 10.0

Kind = Literal["created", "modified", "deleted"]


@dataclass(frozen=True)
class Change:
    """A path Watchman reports changed since the last PDU."""

    path: str
    kind: Kind
    folder: bool


class Sink(Protocol):
    """What the subscriptions report to (the watcher); called on their threads."""

    def changed(self, root: str, changes: list[Change]) -> None:
        """Paths under `root` changed (one PDU)."""
        ...

    def fresh(self, root: str) -> None:
        """Changes under `root` may have been missed: re-check the files read there."""
        ...

    def lost(self, root: str, reason: str) -> None:
        """The subscription ended and could not resume."""
        ...


class Unavailable(Exception):
    """Watchman cannot be used; the message says why, for the user. What Watchman or its
    program said (its stderr, its errors: another party's words) is one quoted string in
    it (errors.with_library_words, where each reason is made); the whole is made one line
    with nothing unseen here, where all of them enter (quoting.phrase)."""

    def __init__(self, why: str) -> None:
        # Without object reprs or heap addresses (errors.library_detail), cut.
        said = quoting.phrase(errors.library_detail(why))
        super().__init__(quoting.cut_escaped(said, MAX_REASON_CHARS))


# The most of a reason Watchman cannot be used a user is shown.
MAX_REASON_CHARS = 500


def installed() -> bool:
    """Whether Watchman can be asked at all: pywatchman is installed, and the service's
    socket is given (WATCHMAN_SOCK) or the `watchman` binary is on PATH."""
    if importlib.util.find_spec("pywatchman") is None:
        return False
    return bool(os.environ.get("WATCHMAN_SOCK")) or shutil.which("watchman") is not None


def watches(roots: Iterable[str]) -> bool:
    """Whether a running Watchman already watches every root (or a folder above it).
    Starts neither the service nor a watch."""
    try:
        connection = _Connection()
    except Unavailable:
        return False
    try:
        with connection.within(_REACH_TIMEOUT_S):
            watched = connection.query("watch-list").get("roots", [])
        return all(any(is_within(root, str(w)) for w in watched) for root in roots)
    except Exception:  # Unavailable, or an answer not as Watchman documents it: not asked
        return False
    finally:
        connection.close()


class Subscription:
    """One workspace root's subscription, on a connection of its own."""

    def __init__(self, root: str, sink: Sink, rewatch: bool) -> None:
        self.root = root
        self.clock: str | None = None  # of the last PDU (or of the subscription's start)
        self._sink = sink
        self._rewatch = rewatch  # may start the watch again when someone removed it
        self._watch = ""
        self._connection: _Connection | None = None
        self._resumed_at = -_RESUME_AFTER_S
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="readkeeper-watchman", daemon=True)

    def start(self, spawn: bool) -> None:
        """Subscribe, starting the service first if `spawn` allows and it is not running,
        then receive in the background. Raises Unavailable."""
        try:
            self._subscribe(spawn=spawn, create=True)
        except Unavailable:
            if self._connection is not None:
                self._connection.close()
            raise
        self._thread.start()

    def stop(self) -> None:
        """Unsubscribe, close the connection and end the receive thread (also during
        `start`, which then raises Unavailable)."""
        self._stopping.set()
        connection = self._connection
        if connection is not None:
            connection.send("unsubscribe", self._watch, _NAME)
            connection.interrupt()  # a blocked receive returns
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(_STOP_TIMEOUT_S)
        if connection is not None:
            connection.close()

    def _subscribe(self, spawn: bool, create: bool) -> None:
        """Subscribe on a new connection. Raises Unavailable, whatever failed: pywatchman
        (`_Connection`) or an answer not as Watchman documents it (a missing field)."""
        try:
            self._subscribe_once(spawn, create)
        except Unavailable:
            raise
        except Exception as exc:
            said = f"could not use Watchman's answer: {errors.fault_reason(exc)}"
            raise Unavailable(said) from exc

    def _subscribe_once(self, spawn: bool, create: bool) -> None:
        connection = self._connection = _Connection(spawn)
        if self._stopping.is_set():
            raise Unavailable("stopped")
        with connection.within(_COMMAND_TIMEOUT_S):
            self._watch_and_subscribe(connection, create)

    def _watch_and_subscribe(self, connection: _Connection, create: bool) -> None:
        if not create:
            watched = connection.query("watch-list").get("roots", [])
            if not any(is_within(self.root, w) for w in watched):
                raise Unavailable(f"Watchman no longer watches {self.root}")
        project = connection.query("watch-project", self.root)
        self._watch = str(project["watch"])
        now = str(connection.query("clock", self._watch)["clock"])
        fresh = self.clock is not None and _instance(self.clock) != _instance(now)
        query: dict[str, Any] = {
            "fields": _FIELDS,
            "expression": _EXPRESSION,
            "since": now if fresh or self.clock is None else self.clock,
        }
        if project.get("relative_path"):
            query["relative_root"] = str(project["relative_path"])
        connection.query("subscribe", self._watch, _NAME, query)
        self.clock = query["since"]
        if fresh:
            self._sink.fresh(self.root)

    def _run(self) -> None:
        name_os_thread("rk-watchman")
        try:
            self._receive()
        except Exception as exc:  # lost, and said: the watcher's next backend takes over
            why = "readkeeper's Watchman reader stopped on an unexpected error: "
            why += errors.fault_reason(exc)
            # One line for the user (the fallback's warning says it again); the stack for
            # whoever debugs with the log at DEBUG.
            log.error("readkeeper: %s", quoting.phrase(why))
            log.debug("readkeeper: the Watchman reader's error", exc_info=exc)
            self._sink.lost(self.root, why)

    def _receive(self) -> None:
        while not self._stopping.is_set():
            connection = self._connection
            assert connection is not None  # start() made it
            try:
                pdu = connection.receive()
                if pdu.get("subscription") != _NAME:
                    continue  # the answer to `unsubscribe`, or a log line
                if pdu.get("canceled"):
                    raise Unavailable(f"Watchman stopped watching {self.root}")
            except Unavailable as exc:
                if self._stopping.is_set() or self._resume():
                    continue
                self._sink.lost(self.root, str(exc))
                return
            if pdu.get("is_fresh_instance"):
                self._sink.fresh(self.root)
            else:
                self._sink.changed(self.root, self._changes(pdu.get("files", [])))
            self.clock = str(pdu.get("clock", self.clock))

    def _resume(self) -> bool:
        """Subscribe again on a new connection, since the last clock (once per break;
        the service is not started again: someone stopped it)."""
        if self._connection is not None:
            self._connection.close()
        if time.monotonic() - self._resumed_at < _RESUME_AFTER_S:
            return False
        self._resumed_at = time.monotonic()
        try:
            self._subscribe(spawn=False, create=self._rewatch)
        except Unavailable as exc:
            log.info("readkeeper: Watchman could not resume watching %s: %s", self.root, exc)
            return False
        log.info("readkeeper: Watchman watches %s again, since %s", self.root, self.clock)
        return True

    def _changes(self, files: list[dict[str, Any]]) -> list[Change]:
        changes = []
        for file in files:
            path = os.path.join(self.root, os.fsdecode(file["name"]))
            kind: Kind = "created" if file["new"] else "modified"
            if not file["exists"]:
                kind = "deleted"
            changes.append(Change(path, kind, file.get("type") == "d"))
        return changes


def _instance(clock: str) -> str:
    # "c:<start>:<pid>:<root number>:<ticks>": all but the ticks name the instance and
    # the watch. Any other form is compared whole (different: a re-check, never a miss).
    return clock.rpartition(":")[0] if clock.startswith("c:") else clock


class _Connection:
    """pywatchman's client, typed, used by one thread at a time (`send` and `interrupt`
    excepted, which stop() calls while the receive thread waits)."""

    def __init__(self, spawn: bool = False) -> None:
        try:
            import pywatchman
        except ImportError as exc:
            raise Unavailable(
                "could not use Watchman: pywatchman is not installed "
                "(it comes with the readkeeper[watchman] extra)"
            ) from exc
        except Exception as exc:  # a pywatchman that fails as it is imported
            said = f"could not use Watchman: importing pywatchman: {errors.fault_reason(exc)}"
            raise Unavailable(said) from exc
        self._errors: tuple[type[BaseException], ...] = (OSError, ValueError)
        self._expired: float | None = None  # the deadline `within` gave, once it passed
        sockpath = os.environ.get("WATCHMAN_SOCK") or _sockname()
        try:
            self._errors = (pywatchman.WatchmanError, OSError, ValueError)
            # The connect is bounded by the socket's timeout (no socket to shut down yet).
            self._client: Any = pywatchman.client(sockpath=sockpath, timeout=_REACH_TIMEOUT_S)
            # pywatchman files every subscription PDU it reads in dicts and a list shared
            # by all its clients, kept until asked for: these are the client's own, and
            # `receive` empties them.
            self._client.subs, self._client.sub_by_root, self._client.logs = {}, {}, []
        except Exception as exc:
            raise Unavailable(self._reason("reach", exc)) from exc
        try:
            self._reach()
        except Unavailable:
            if not spawn or os.environ.get("WATCHMAN_SOCK"):
                raise
            self.close()  # connects again at the next query (a shut-down socket too)
            self._expired = None
            _start_service()
            self._reach()
        with contextlib.suppress(Exception):  # each step is bounded by `within`
            self._client.setTimeout(_COMMAND_TIMEOUT_S)

    def _reach(self) -> None:
        with self.within(_REACH_TIMEOUT_S):
            self.query("version", what="reach")

    @contextlib.contextmanager
    def within(self, seconds: float) -> Iterator[None]:
        """Bound every wait on Watchman inside the block to `seconds` in all: when they
        pass, the socket is shut down, the wait under way ends, and Unavailable says
        Watchman did not answer in time (the connection is of no more use)."""

        def expire() -> None:
            self._expired = seconds
            self.interrupt()

        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
        try:
            yield
        except Unavailable as exc:
            if self._expired is None:
                raise
            raise Unavailable(f"Watchman did not answer within {seconds:g} s") from exc
        finally:
            timer.cancel()
            timer.join()  # no thread of ours outlives the block (it may be mid-expire)
        if self._expired is not None:  # it answered just as the time ran out
            raise Unavailable(f"Watchman did not answer within {seconds:g} s")

    def query(self, *command: Any, what: str = "get an answer from") -> dict[str, Any]:
        try:
            answer = self._client.query(*command)
        except Exception as exc:  # pywatchman's errors, and any other it lets out
            raise Unavailable(self._reason(what, exc)) from exc
        if not isinstance(answer, dict):
            said = f"could not {what} Watchman: its answer is not a JSON object"
            raise Unavailable(errors.with_library_words(said, type(answer).__name__))
        return answer

    def receive(self) -> dict[str, Any]:
        """The next PDU, waiting as long as it takes."""
        try:
            self._client.setTimeout(None)
            pdu = self._client.receive()
        except Exception as exc:  # pywatchman's errors, and any other it lets out
            raise Unavailable(self._reason("stay connected to", exc)) from exc
        finally:
            with contextlib.suppress(Exception):
                self._client.subs.clear()
                self._client.sub_by_root.clear()
                self._client.logs.clear()
        if not isinstance(pdu, dict):
            said = "could not stay connected to Watchman: a message is not a JSON object"
            raise Unavailable(errors.with_library_words(said, type(pdu).__name__))
        return pdu

    def _reason(self, what: str, exc: BaseException) -> str:
        """Why Watchman cannot be used: pywatchman's expected errors as `_reason` says
        them, any other it lets out with its type too."""
        if isinstance(exc, self._errors):
            return _reason(what, exc)
        return _reason(what, exc, unexpected=True)

    def send(self, *command: Any) -> None:
        """Send a command without reading its answer (the receive thread will)."""
        with contextlib.suppress(Exception):  # the receive thread hears what broke
            self._client.sendConn.send(command)

    def interrupt(self) -> None:
        """End a blocked `receive` (it raises Unavailable) from another thread."""
        with contextlib.suppress(Exception):
            sock = getattr(self._client.tport, "sock", None)
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._client.close()


@functools.cache
def _sockname() -> str:
    """Where the service listens. Asked with --no-spawn: left to itself (as pywatchman
    asks), `watchman get-sockname` starts the service when it is not running."""
    binary = shutil.which("watchman")
    if binary is None:
        raise Unavailable("could not reach Watchman: the `watchman` command is not installed")
    try:
        done = subprocess.run(
            [binary, "--no-spawn", "--no-pretty", "get-sockname"],
            capture_output=True,
            timeout=_SPAWN_TIMEOUT_S,
        )
        return str(json.loads(done.stdout)["sockname"])
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as exc:
        said = errors.with_library_words("could not reach Watchman (get-sockname)", exc)
        raise Unavailable(said) from exc


def _start_service() -> None:
    """Start the Watchman service the way its command line does: any command spawns it."""
    try:
        done = subprocess.run(
            ["watchman", "--no-pretty", "get-pid"], capture_output=True, timeout=_SPAWN_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(errors.with_library_words("Watchman could not be started", exc)) from exc
    if done.returncode != 0:
        error = done.stderr.decode(errors="replace").strip()
        own = f"Watchman could not be started (exit {done.returncode})"
        raise Unavailable(errors.with_library_words(own, error))
    log.info("readkeeper: started the Watchman service")


def _reason(what: str, exc: BaseException, unexpected: bool = False) -> str:
    """ "could not reach Watchman ("why")", for the user: Watchman's or pywatchman's words
    one quoted string (errors.library_words), as every other party's are. `unexpected`:
    an error pywatchman does not document, its type named ("pywatchman failed:
    RuntimeError ("why")")."""
    if unexpected:
        return f"could not {what} Watchman: pywatchman failed: {errors.fault_reason(exc)}"
    why = getattr(exc, "msg", None) or str(exc) or type(exc).__name__  # without the command
    return errors.with_library_words(f"could not {what} Watchman", why)
