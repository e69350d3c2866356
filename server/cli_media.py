"""What `readkeeper read` does with the files a read makes and the next steps it names
(attack round 21, finding 5): the pages `--render` draws go into the server's output
folder, which is removed when the command exits, and the note named `readkeeper/read`
(the LSP method). On the command line the pages are copied where `--out` says (the
command refuses `--render` without it, naming the command that works), and every note
names a `readkeeper` command or says what to do with the files.

`--out` gets new files only (attack round 22, finding 2): a page whose name is taken
there, by a file, a folder, a link or anything else, is refused naming it before any
page is written, and the next step names a folder that is not there. The command cannot
tell a page it wrote on an earlier run from a file of the user's of the same name, and a
refusal can be answered while a replaced file is gone. Each page is created exclusively
(O_EXCL, no temp file to leave), and a page written before a failure is removed while it
is still the file the command made; what it could not remove, or left, the refusal says."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
from typing import Any

from . import quoting
from .errors import ReadkeeperError
from .hint_walks import page_steps
from .hints import call, for_cli, render_folder


def needs_out(args: argparse.Namespace) -> ReadkeeperError | None:
    """The refusal of `--render` without `--out`: nowhere to keep the pages."""
    if not args.render:
        return None
    if args.out is not None:
        if not os.path.lexists(args.out) or os.path.isdir(args.out):
            return None
        return _refused(args, f"--out {quoting.name(args.out)} is there and is not a folder")
    again = call("read", file_path=args.path, pages=args.pages, render=True)  # for_cli: --out
    return ReadkeeperError(
        "bad_params",
        "--render draws the pages as PNG files into this command's own folder, which is "
        f"removed when it exits: name a folder to keep them in, {again}.",
        file_path=args.path,
    )


def for_the_command_line(
    file: dict[str, Any], args: argparse.Namespace, kind: str | None = None
) -> dict[str, Any]:
    """`file` (a read's non-text result) as the CLI shows it: rendered pages copied
    into `--out`, and the next steps as `readkeeper` commands."""
    file = dict(file)
    note = file["note"] if isinstance(file.get("note"), str) else None
    going_on = bool(file.get("partial") and file.get("next_pages"))
    if going_on:
        file["partial"] = False  # the head's `pages=...` is no flag: the note says it
    if isinstance(file.get("pages"), list) and args.out is not None:  # kept_pages copied them
        note = "The pages are PNG files: open them with an image viewer."
        if going_on:
            again = call(
                "read", file_path=args.path, pages=file["next_pages"], render=True, out=args.out
            )
            note += f" Continue with {again}."
    if note is not None:
        file["note"] = for_cli(note)
    if kind == "pdf" and isinstance(file.get("content"), str):
        file["content"] = page_steps(file["content"], for_cli)
    return file


def kept_pages(file: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """`file` with its rendered pages copied into `--out` (with `--json` too: the
    server's folder is gone when the command exits), their paths the copies'."""
    if not isinstance(file.get("pages"), list) or args.out is None:
        return file
    pages, folder = _copied(file["pages"], args)
    return {**file, "pages": pages, "output_dir": folder}


def _copied(pages: list[str], args: argparse.Namespace) -> tuple[list[str], str]:
    """`pages` copied into the folder `--out` (made if missing) as new files, and their
    new paths; refused (ReadkeeperError) when one cannot be, the pages written before
    removed (`_removed`: only those still the files it made, and what it left said)."""
    folder = os.path.abspath(args.out)
    targets = [os.path.join(folder, os.path.basename(page)) for page in pages]
    for target in targets:
        if os.path.lexists(target):
            raise _taken(args, target)
    made: list[tuple[str, os.stat_result]] = []  # each page made, and the file it made
    # Their files, held open to the end: no other file can take one's inode meanwhile
    # (a page swapped for a new file of the user's could have the same number).
    held: list[int] = []
    try:
        os.makedirs(folder, exist_ok=True)
        for page, target in zip(pages, targets, strict=True):
            _write_new(page, target, made, held)
        while held:
            os.close(held.pop())  # a write the close reports failed fails the copy
    except BaseException as exc:
        left = _removed(made, args)
        for fd in held:
            with contextlib.suppress(OSError):
                os.close(fd)
        if not isinstance(exc, OSError):
            raise
        if isinstance(exc, FileExistsError) and exc.filename in targets:
            raise _taken(args, exc.filename, left) from None  # made between the look and the write
        why = f"the pages could not be written into {quoting.name(args.out)} ({exc.strerror})"
        raise _refused(args, why + left) from None
    return targets, folder


def _write_new(
    page: str, target: str, made: list[tuple[str, os.stat_result]], held: list[int]
) -> None:
    """`page`'s bytes in the new file `target`: never one already there (nor what a link
    there points to). Its file is added to `made` as soon as it is made, and held open
    (`held`), so that a failure removes it, and only it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    fd = os.open(target, flags, 0o666)
    held.append(fd)
    made.append((target, os.fstat(fd)))
    with open(page, "rb") as source, os.fdopen(fd, "wb", closefd=False) as copy:
        shutil.copyfileobj(source, copy)


def _removed(made: list[tuple[str, os.stat_result]], args: argparse.Namespace) -> str:
    """Remove the pages `made` after a failure: each only while it is still the file this
    command made (one replaced since, by a folder or a file of the user's, is not its to
    remove). What it could not remove, or left, is said ("" when nothing was), never
    raised: the refusal says why the copy failed."""
    left: list[str] = []
    for target, mine in made:
        shown = quoting.name(os.path.join(args.out, os.path.basename(target)))
        try:
            now = os.lstat(target)
            if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
                left.append(f"{shown} (no longer the page it wrote: not removed)")
                continue
            os.unlink(target)
        except FileNotFoundError:
            continue  # gone already: nothing of it is left
        except OSError as exc:
            left.append(f"{shown} (could not be removed: {exc.strerror or exc})")
    if not left:
        return ""
    return f"; of the pages it wrote, it left {len(left)}: {', '.join(left)}"


def _taken(args: argparse.Namespace, target: str, left: str = "") -> ReadkeeperError:
    name = quoting.name(os.path.join(args.out, os.path.basename(target)))
    return _refused(
        args,
        f"{name} is already there and is not replaced (--out gets new files only: this "
        "command cannot tell a page it wrote before from a file of yours of the same name)" + left,
    )


def _refused(args: argparse.Namespace, why: str) -> ReadkeeperError:
    """The refusal saying `why`, naming the same read into a folder that is not there."""
    again = call(
        "read", file_path=args.path, pages=args.pages, render=True, out=render_folder(args.path)
    )
    return ReadkeeperError(
        "bad_params", f"{why}: name a folder not there, {again}.", file_path=args.path
    )


__all__ = ["for_the_command_line", "kept_pages", "needs_out"]
