"""readkeeper's cache in the user's cache folder: work worth keeping across servers (the
token table's ranks), never trusted further than it is checked.

The folder is `$XDG_CACHE_HOME/readkeeper`, else `~/.cache/readkeeper`, made private
(0700). It is used only when it is a real folder (not a symlink), owned by this user
and writable by no one else; otherwise nothing is cached (logged once) and every
caller computes as if the cache were empty. Entries are opened relative to the
folder's descriptor, without following symlinks, and only when they are regular files
of this user's, at most `MAX_ENTRY_BYTES` long.

Each entry is one file: a magic word, the SHA-256 of the rest, the key it was written
for, and the payload. An entry whose digest or key does not match (a torn write, a
corrupt disk, a file put there by hand, a name collision) is ignored and written anew;
what a payload means is checked again by its reader, whose parser interprets no code
(no pickle, no marshal). Writes go to a temporary file renamed over the name, so a
reader sees the old entry or the new one, never half of one. The folder is kept under
`MAX_TOTAL_BYTES` (give or take the sixteenth written between two trims): past it,
the least recently written entries go.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import stat
import struct
import threading
from collections.abc import Callable
from typing import Any

from . import cache_writes

log = logging.getLogger("readkeeper")

MAGIC = b"RKCACHE1"
MAX_ENTRY_BYTES = 16 << 20
MAX_TOTAL_BYTES = 64 << 20
_HEADER = struct.Struct(">8s32sI")  # magic, SHA-256 of what follows, key length
_TEMP_SUFFIX = ".rk-cache-tmp"


def default_folder() -> str:
    """Where the cache lives (not made here)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "readkeeper")


def encode_entry(key: str, payload: bytes) -> bytes:
    """The bytes of an entry for `key`."""
    key_bytes = key.encode("utf-8")
    rest = key_bytes + payload
    digest = hashlib.sha256(len(key_bytes).to_bytes(4, "big") + rest).digest()
    return _HEADER.pack(MAGIC, digest, len(key_bytes)) + rest


def decode_entry(key: str, data: bytes) -> bytes | None:
    """The payload of an entry when it is whole and was written for `key`, else None."""
    if len(data) < _HEADER.size:
        return None
    magic, digest, key_length = _HEADER.unpack_from(data)
    if magic != MAGIC or key_length > len(data) - _HEADER.size:
        return None
    rest = memoryview(data)[_HEADER.size :]
    hasher = hashlib.sha256(key_length.to_bytes(4, "big"))
    hasher.update(rest)  # not joined to the length first: a copy of a 2 MB entry
    if hasher.digest() != digest:
        return None
    if bytes(rest[:key_length]) != key.encode("utf-8"):
        return None
    return bytes(rest[key_length:])


def with_header(header: dict[str, Any], *body: bytes, align: int = 1) -> bytes:
    """A payload: its JSON header (padded with spaces so the body starts on a multiple of
    `align`), its length before it in four bytes, then `body`."""
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-(4 + len(text)) % align)
    return b"".join((len(text).to_bytes(4, "big"), text, *body))


def split_header(payload: bytes) -> tuple[dict[str, Any], int] | None:
    """A payload's JSON header and where its body starts; None when it has none."""
    try:
        length = int.from_bytes(payload[:4], "big")
        header = json.loads(payload[4 : 4 + length])
    except ValueError:
        return None
    return (header, 4 + length) if isinstance(header, dict) else None


_SHARED: dict[str, UserCache] = {}

# Kind -> [look-ups, hits] of this process, in every folder (`hit_counts`).
_COUNTS: dict[str, list[int]] = {}
_COUNTS_LOCK = threading.Lock()


def hit_counts() -> dict[str, dict[str, int]]:
    """By kind of entry, this process's look-ups and the entries found whole and for
    their key (a reader may still reject what one holds)."""
    with _COUNTS_LOCK:
        return {kind: {"lookups": n, "hits": hits} for kind, (n, hits) in sorted(_COUNTS.items())}


def shared() -> UserCache:
    """The process's cache in the default folder (as the environment names it now)."""
    folder = default_folder()
    found = _SHARED.get(folder)
    if found is None:
        found = _SHARED.setdefault(folder, UserCache(folder))
    return found


class UserCache:
    """Entries by kind and key in one private folder."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder or default_folder()
        self._lock = threading.Lock()
        self._refused = False  # the folder may not be used (logged once)
        # Bytes written since the folder was last trimmed (None: not yet trimmed): it
        # is listed only every `MAX_TOTAL_BYTES // 16` bytes, not on every write.
        self._since_trim: int | None = None

    def get(self, kind: str, key: str) -> bytes | None:
        """The payload kept for `key`, or None (absent, unreadable, or not trusted)."""
        payload = self._get(kind, key)
        with _COUNTS_LOCK:
            counts = _COUNTS.setdefault(kind, [0, 0])
            counts[0] += 1
            counts[1] += payload is not None
        return payload

    def _get(self, kind: str, key: str) -> bytes | None:
        fd = self._open_folder(create=False)
        if fd is None:
            return None
        try:
            data = _read_entry(fd, _name(kind, key))
        finally:
            os.close(fd)
        return None if data is None else decode_entry(key, data)

    def put(self, kind: str, key: str, payload: bytes) -> bool:
        """Keep `payload` for `key`; False when it could not be (the cache is only a
        cache: a failure is logged, never raised)."""
        data = encode_entry(key, payload)
        if len(data) > MAX_ENTRY_BYTES:
            return False
        with self._lock:
            fd = self._open_folder(create=True)
            if fd is None:
                return False
            try:
                _write_entry(fd, _name(kind, key), data)
                written = (self._since_trim or 0) + len(data)
                if self._since_trim is None or written > MAX_TOTAL_BYTES // 16:
                    _trim(fd, MAX_TOTAL_BYTES)
                    written = 0
                self._since_trim = written
                return True
            except OSError as exc:
                log.warning("Could not write readkeeper's cache in %s: %s", self.folder, exc)
                return False
            finally:
                os.close(fd)

    def put_later(self, kind: str, key: str, payload: bytes | Callable[[], bytes]) -> None:
        """`put`, on the cache's writer thread (cache_writes.py): a read that made an
        entry (an outline, a count) answers without waiting for the folder's syscalls
        (a twentieth of a millisecond on an idle disk, several on a busy one), nor for
        its payload's encoding when given as a function (an outline's JSON: a tenth of
        a millisecond), and the entry is written once no call is served. Past
        `cache_writes.MAX_PENDING` writes waiting, the entry is dropped: a later server
        computes it again."""
        cache_writes.put_later(self, kind, key, payload)

    def size(self) -> int:
        """Bytes of the entries in the cache."""
        fd = self._open_folder(create=False)
        if fd is None:
            return 0
        try:
            return sum(size for _, _, size in _entries(fd))
        finally:
            os.close(fd)

    def _open_folder(self, create: bool) -> int | None:
        if self._refused:
            return None
        if create:
            try:
                os.makedirs(os.path.dirname(self.folder), exist_ok=True)
                os.mkdir(self.folder, 0o700)
            except FileExistsError:
                pass
            except OSError as exc:
                self._refuse(f"it cannot be made ({exc.strerror})")
                return None
        try:
            fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._refuse(f"it is not a folder of its own ({exc.strerror})")
            return None
        info = os.fstat(fd)
        why = None
        if info.st_uid != os.geteuid():
            why = f"it belongs to uid {info.st_uid}, not to you"
        elif info.st_mode & 0o022:
            why = "others may write in it"
        if why is not None:
            os.close(fd)
            self._refuse(why)
            return None
        return fd

    def _refuse(self, why: str) -> None:
        self._refused = True
        log.warning(
            "Not using readkeeper's cache folder %s: %s. Remove it, or set XDG_CACHE_HOME to "
            "a folder of your own; until then nothing is cached across servers.",
            self.folder,
            why,
        )


def flush() -> None:
    """Wait for the writes queued so far (`put_later`): a core closing, and tests."""
    cache_writes.flush()


def _name(kind: str, key: str) -> str:
    return f"{kind}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:40]}"


def _read_entry(folder_fd: int, name: str) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=folder_fd)
    except OSError:
        return None  # absent, a symlink, or not ours to open
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_size > MAX_ENTRY_BYTES
        ):
            return None
        chunks, left = [], info.st_size + 1  # one more: a file that grew is refused
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= info.st_size else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _write_entry(folder_fd: int, name: str, data: bytes) -> None:
    temp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}{_TEMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, 0o600, dir_fd=folder_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        os.unlink(temp, dir_fd=folder_fd)
        raise
    os.close(fd)
    try:
        os.rename(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except OSError:
        os.unlink(temp, dir_fd=folder_fd)
        raise


def _entries(folder_fd: int) -> list[tuple[str, float, int]]:
    """(name, mtime, size) of each regular file in the folder."""
    found = []
    for name in os.listdir(folder_fd):
        try:
            info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((name, info.st_mtime, info.st_size))
    return found


def _trim(folder_fd: int, limit: int) -> None:
    """Remove the oldest entries (and temporary files) until the rest fit `limit`."""
    entries = sorted(_entries(folder_fd), key=lambda e: e[1])
    total = sum(size for _, _, size in entries)
    for name, _, size in entries:
        if total <= limit:
            break
        try:
            os.unlink(name, dir_fd=folder_fd)
        except OSError:
            continue
        total -= size


__all__ = [
    "UserCache",
    "decode_entry",
    "default_folder",
    "encode_entry",
    "flush",
    "hit_counts",
    "shared",
    "split_header",
    "with_header",
]
