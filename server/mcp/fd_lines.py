"""Stdin's lines when it is not a pipe (a terminal, a file): stdio.py's `file_streams`
reads them on a thread of its own, a block at a time."""

from __future__ import annotations

import os


class DescriptorLines:
    """Lines of a descriptor, read a block at a time. Not a buffered file object: its
    lock would make closing it wait for the line a thread is still waiting for."""

    def __init__(self, fd: int, block: int) -> None:
        self._fd = fd
        self._block = block
        self._buffer = bytearray()
        self._ended = False

    def readline(self) -> bytes:
        """The next line with its newline, the rest at the end of input, else b""."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0 or self._ended:
                cut = end + 1 if end >= 0 else len(self._buffer)
                line = bytes(self._buffer[:cut])
                del self._buffer[:cut]
                return line
            chunk = os.read(self._fd, self._block)
            if chunk:
                self._buffer += chunk
            else:
                self._ended = True


__all__ = ["DescriptorLines"]
