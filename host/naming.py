"""A map of uniquely named items, each remembered with the owner that registered it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import attrs

from host.errors import HostError

T = TypeVar("T")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean "X"?)`` naming the choice closest to a misspelt ``name``, or ""."""
    import difflib  # only on the error path

    close = difflib.get_close_matches(name, list(choices), n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""


@attrs.frozen
class Owner:
    """The owner recorded for what plugin ``plugin`` registers; it reads ``plugin "<name>"``
    in messages. Other owners (the host, a test, a child's setup) are plain strings."""

    plugin: str

    def __str__(self) -> str:
        return f'plugin "{self.plugin}"'


def owning_plugin(owner: Owner | str | None) -> str | None:
    """The plugin that registered an item, by its recorded owner; None for any other owner."""
    return owner.plugin if isinstance(owner, Owner) else None


class DuplicateNameError(HostError):
    """A second registration of a name in the same layer; the message names both owners."""

    def __init__(
        self, what: str, name: str, owner: Owner | str, existing_owner: Owner | str
    ) -> None:
        super().__init__(
            "DUPLICATE_NAME",
            f'{what} "{name}" from {owner} duplicates the one from {existing_owner}',
        )


class NamedRegistry(Generic[T]):
    """Insertion-ordered ``name -> item``; registration returns the disposer that removes it."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, list[Any]] = {}
        self.version = 0
        """Counts the registrations, removals and replacements so far: equal means unchanged."""

    def register(self, name: str, item: T, *, owner: Owner | str) -> Callable[[], bool]:
        """Add ``item``; a name already present raises ``DuplicateNameError``.

        The returned disposer removes exactly this registration and says whether it did.
        """
        if name in self._items:
            raise DuplicateNameError(self.what, name, owner, self._items[name][1])
        entry = [item, owner]
        self._items[name] = entry
        self.version += 1

        def dispose() -> bool:
            if self._items.get(name) is entry:
                del self._items[name]
                self.version += 1
                return True
            return False

        return dispose

    def replace(self, name: str, old: T, new: T) -> None:
        """Swap the item under ``name`` in place (same owner, same disposer) if it is ``old``."""
        entry = self._items.get(name)
        if entry is not None and entry[0] is old:
            entry[0] = new
            self.version += 1

    def get(self, name: str) -> T | None:
        """The item registered under ``name``, or None."""
        entry = self._items.get(name)
        return entry[0] if entry else None

    def owner(self, name: str) -> Owner | str | None:
        """Who registered ``name``, or None."""
        entry = self._items.get(name)
        return entry[1] if entry else None

    def items(self) -> list[tuple[str, T]]:
        """``(name, item)`` pairs in registration order."""
        return [(name, entry[0]) for name, entry in self._items.items()]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)
