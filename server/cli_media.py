"""What `readkeeper read` does with the files a read makes and the next steps it names
(attack round 21, finding 5): the pages `--render` draws go into the server's output
folder, which is removed when the command exits, and the note named `readkeeper/read`
(the LSP method). On the command line the pages are copied where `--out` says (the
command refuses `--render` without it, naming the command that works), and every note
names a `readkeeper` command or says what to do with the files."""

from __future__ import annotations

import argparse
import os
import shutil
from typing import Any

from .errors import ReadkeeperError
from .hints import call, for_cli


def needs_out(args: argparse.Namespace) -> ReadkeeperError | None:
    """The refusal of `--render` without `--out`: nowhere to keep the pages."""
    if not args.render or args.out is not None:
        return None
    again = call("read", file_path=args.path, pages=args.pages, render=True)  # for_cli: --out
    return ReadkeeperError(
        "bad_params",
        "--render draws the pages as PNG files into this command's own folder, which is "
        f"removed when it exits: name a folder to keep them in, {again}.",
        file_path=args.path,
    )


def for_the_command_line(file: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """`file` (a read's non-text result) as the CLI shows it: rendered pages copied
    into `--out`, and the next steps as `readkeeper` commands."""
    file = dict(file)
    note = file["note"] if isinstance(file.get("note"), str) else None
    going_on = bool(file.get("partial") and file.get("next_pages"))
    if going_on:
        file["partial"] = False  # the head's `pages=...` is no flag: the note says it
    if isinstance(file.get("pages"), list) and args.out is not None:
        file["pages"], file["output_dir"] = _copied(file["pages"], args.out)
        note = "The pages are PNG files: open them with an image viewer."
        if going_on:
            again = call(
                "read", file_path=args.path, pages=file["next_pages"], render=True, out=args.out
            )
            note += f" Continue with {again}."
    if note is not None:
        file["note"] = for_cli(note)
    return file


def _copied(pages: list[str], out: str) -> tuple[list[str], str]:
    """`pages` copied into the folder `out` (made if missing), and their new paths."""
    folder = os.path.abspath(out)
    os.makedirs(folder, exist_ok=True)
    copies = []
    for page in pages:
        target = os.path.join(folder, os.path.basename(page))
        temp = os.path.join(folder, f".{os.path.basename(page)}.{os.urandom(6).hex()}")
        shutil.copyfile(page, temp)
        os.replace(temp, target)  # a symlink planted at `target` is replaced, not followed
        copies.append(target)
    return copies, folder


__all__ = ["for_the_command_line", "needs_out"]
