"""``@hookimpl`` options the host does not honour are refused, and pluggy's marker is pinned."""

from __future__ import annotations

from typing import Any

import pluggy
import pytest

from host import hookimpl
from host.plugins import hookspecs
from host.testing import MakeHost


def test_the_marker_attribute_is_where_pluggy_keeps_a_hookimpls_options() -> None:
    @hookimpl(tryfirst=True)
    def activate() -> None:
        pass

    options = getattr(activate, hookspecs.IMPL_MARKER)
    assert options["tryfirst"] is True
    manager = pluggy.PluginManager(hookspecs.PROJECT)

    class Holder:
        pass

    holder = Holder()
    holder.activate = activate  # type: ignore[attr-defined]
    assert manager.parse_hookimpl_opts(holder, "activate") == options


@pytest.mark.parametrize("option", hookspecs.UNHONOURED_OPTIONS)
def test_an_option_the_host_does_not_honour_fails_that_plugin_alone(
    make_host: MakeHost, option: str
) -> None:
    options: dict[str, Any] = {option: True}

    class Ordered:
        name = "ordered"

        @staticmethod
        @hookimpl(**options)
        def register_tools(register: Any) -> Any:
            if option in ("wrapper", "hookwrapper"):
                yield
            return None

    class Plain:
        name = "plain"

        @staticmethod
        @hookimpl
        def activate() -> None:
            pass

    host = make_host(Ordered, Plain)
    ordered = host.plugins.records["ordered"]
    assert (ordered.state, ordered.error) == (
        "failed",
        f"ValueError: hook 'register_tools': {option} is not supported (hooks run per plugin)",
    )
    assert host.plugins.records["plain"].state == "active"
