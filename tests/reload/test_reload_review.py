"""A reload whose new version requires a service that is absent keeps the running version."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.reload.support import Plugins

V1 = """
from host import hookimpl

DISPOSED = []

@hookimpl
def activate(scope):
    scope.add(lambda: DISPOSED.append("v1"))

@hookimpl
def register_services(register):
    register("weatherx", "rain")
"""

V2 = """
from host import hookimpl

requires = ("nonexistent_service",)

@hookimpl
def register_services(register):
    register("weatherx", "sun")
"""


def test_a_new_version_that_cannot_activate_keeps_the_running_one(
    plugins: Plugins, dev_host: Callable[..., Any]
) -> None:
    module = plugins.install("weatherx", V1)
    host = dev_host({"weatherx"})
    running = host.plugins.records["weatherx"].obj
    plugins.write("weatherx", V2)
    outcome = host.reload("weatherx")
    assert not outcome.ok
    assert outcome.line() == (
        "reload of weatherx failed, previous version kept: "
        "the new version requires nonexistent_service"
    )
    record = host.plugins.records["weatherx"]
    assert (record.state, record.obj) == ("active", running)
    assert host.services.find("weatherx") == "rain"
    assert running.DISPOSED == [], module
