"""The contract's types share one repr, equality and hash (protocol/contract.py): each
must give what the methods attrs would generate give."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import attrs
import pytest

from readkeeper import protocol
from readkeeper.protocol import MODULES
from readkeeper.protocol.contract import Contract

TYPES = [
    value
    for name in MODULES
    for value in vars(importlib.import_module(f"readkeeper.protocol.{name}")).values()
    if isinstance(value, type) and attrs.has(value) and value.__module__.endswith(name)
]


def sample(cls: type[Any], changed: str | None = None) -> Any:
    """An instance with a distinct value in every field (another in `changed`)."""
    values = {
        field.name: f"{field.name} {'other' if field.name == changed else 'value'}"
        for field in attrs.fields(cls)
    }
    return cls(**values)


def test_every_type_of_the_contract_is_a_frozen_slotted_contract() -> None:
    assert len(TYPES) >= 40
    for cls in TYPES:
        assert issubclass(cls, Contract), cls
        instance = sample(cls)
        assert not hasattr(instance, "__dict__"), cls  # slotted
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(instance, attrs.fields(cls)[0].name, "changed")


@pytest.mark.parametrize("cls", TYPES, ids=lambda cls: cls.__name__)
def test_repr_equality_and_hash_are_what_attrs_generates(cls: type[Any]) -> None:
    names = [field.name for field in attrs.fields(cls)]
    twin = attrs.make_class(cls.__name__, names, frozen=True)  # attrs' own methods
    instance, same = sample(cls), sample(cls)
    values = {name: getattr(instance, name) for name in names}
    assert repr(instance) == repr(twin(**values))
    assert instance == same
    assert (instance != same) is False
    assert hash(instance) == hash(same)
    for name in names:  # any one field differing makes another value
        other = sample(cls, changed=name)
        assert instance != other, name
        assert (instance == other) is False, name
    assert instance != values  # another class is never equal
    assert instance != twin(**values)
    assert instance.__eq__(values) is NotImplemented


def test_the_package_names_every_type_of_its_modules_documents_when_asked() -> None:
    """`documents` is imported when one of its types is first named (a server answers
    `initialize` without it); every other module with the package. Either way, the
    package names each type its modules define, as they define it."""
    script = (
        "import sys, readkeeper.protocol as p\n"
        "print('readkeeper.protocol.documents' in sys.modules)\n"
        "p.ImageResult\n"
        "print('readkeeper.protocol.documents' in sys.modules)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert shown.split() == ["False", "True"]
    for cls in TYPES:
        assert getattr(protocol, cls.__name__) is cls
        assert cls.__name__ in protocol.__all__
    namespace: dict[str, Any] = {}
    exec("from readkeeper.protocol import *", namespace)
    assert set(protocol.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="has no attribute 'TextResults'"):
        protocol.TextResults  # noqa: B018


def test_a_bad_value_echoed_in_bad_params_stays_on_one_line() -> None:
    """The value sent is repeated in the message: a line break or a bidi control in it
    must not start a line of its own (a forged `kind:`) or hide what follows."""
    from readkeeper.errors import ReadkeeperError
    from readkeeper.protocol import NotebookEditParams, structure

    raw = {"file_path": "n.ipynb", "cell_id": "a", "cell_type": "x\nkind: forged\u202e"}
    with pytest.raises(ReadkeeperError) as caught:
        structure(raw, NotebookEditParams)
    assert caught.value.kind == "bad_params"
    assert "\n" not in caught.value.message
    assert "\u202e" not in caught.value.message
    assert "cell_type" in caught.value.message
