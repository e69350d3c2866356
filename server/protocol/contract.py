"""The base of the contract's types: their repr, equality and hash, written once.

Each type is a frozen, slotted attrs class (`@attrs.frozen(repr=False, eq=False)`)
derived from `Contract`. attrs would write and compile a `__repr__`, an `__eq__` and a
`__hash__` for each class it makes: importing the contract's 42 types took 31-42 ms here
that way, and takes 17-24 ms with these, at every server start. These shared ones read
the fields attrs recorded, so they give what the generated ones gave (the same text,
equal when the class and every field are equal, a hash that agrees), a little slower per
call; a result is rarely shown or compared outside tests and logs.
"""

from __future__ import annotations

from typing import Any, cast

import attrs


class Contract:
    """Repr, equality and hash by the fields, for every type of the contract."""

    __slots__ = ()

    def _fields(self) -> tuple[attrs.Attribute[Any], ...]:
        fields: tuple[attrs.Attribute[Any], ...] = attrs.fields(
            cast("type[attrs.AttrsInstance]", type(self))
        )
        return fields

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field.name) for field in self._fields())

    def __repr__(self) -> str:
        fields = self._fields()
        shown = ", ".join(f"{field.name}={getattr(self, field.name)!r}" for field in fields)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Contract)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))
