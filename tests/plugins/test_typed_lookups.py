"""``ctx.get(name, Type)`` / ``ctx.find(name, Type)``: a plugin's service, typed and checked."""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from host.plugins.staging import StagedServices
from host.services import Services


class Notebook:
    """A plugin-provided service."""

    def add(self, text: str) -> None: ...


class Unchecked(Protocol):
    def add(self, text: str) -> None: ...


def services_with(service: object) -> Services:
    services = Services()
    services.register("notes", service, owner="notes")
    return services


def test_a_lookup_with_a_type_returns_the_service_of_that_type() -> None:
    notebook = Notebook()
    services = services_with(notebook)
    assert services.get("notes", Notebook) is notebook
    assert services.find("notes", Notebook) is notebook
    assert services.find("absent", Notebook) is None
    assert services.get("notes") is notebook  # without a type, as before


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (Notebook, 'service "notes" is a dict, not a Notebook'),
        (42, 'service "notes": 42 is not a type'),
        (list[int], 'service "notes": list[int] is not a type'),
        (
            Unchecked,
            'service "notes": Unchecked cannot be checked at run time '
            "(a Protocol needs @typing.runtime_checkable)",
        ),
    ],
)
def test_a_service_of_another_type_is_a_type_error_naming_it(kind: Any, message: str) -> None:
    services = services_with({})
    for lookup in (services.get, services.find):
        with pytest.raises(TypeError) as raised:
            lookup("notes", kind)
        assert str(raised.value) == message


def test_a_staged_version_looks_its_held_services_up_the_same_way() -> None:
    staged = StagedServices(services_with({}), "notes")
    notebook = Notebook()
    staged.hold("notes", notebook)
    assert staged.get("notes", Notebook) is notebook
    staged.settle()
    with pytest.raises(TypeError, match='service "notes" is a dict, not a Notebook'):
        staged.find("notes", Notebook)
