"""A plugin's failure is one line that points at the cause: pluggy's reason for a misspelt
hook argument, the closest hook to a misspelt hook name, and the plugin's file and line for
an exception its code raised, at start and on reload."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from host.app import Host
from tests.reload.support import Plugins, tools_source

FAILED = "reload of sturdy failed, previous version kept: "

RAISING = """
from host import hookimpl

def lookup(table):
    return table["missing"]

@hookimpl
def register_tools(register):
    lookup({})
"""

GENERATED_CALL = """
from host import hookimpl

@hookimpl
def activate(scope):
    exec(compile("raise KeyError('gen')", "<generated>", "exec"))
"""

GENERATED_HOOK = """
from host import hookimpl

exec(compile("def activate(scope):\\n    int('x')\\n", "<generated>", "exec"))
activate = hookimpl(activate)
"""

BAD_HOOKS = {
    "misspelt argument": (
        "from host import hookimpl\n\n@hookimpl\ndef register_tools(registr):\n    pass\n",
        'PluginValidationError: argument "registr" is not in the hookspec '
        'register_tools(register, ctx, config) (did you mean "register"?)',
    ),
    "misspelt hook": (
        "from host import hookimpl\n\n@hookimpl\ndef register_tool(register):\n    pass\n",
        'AttributeError: unknown hook "register_tool" (did you mean "register_tools"?)',
    ),
}


@pytest.mark.parametrize("edit", list(BAD_HOOKS))
def test_a_bad_hook_is_named_with_its_cause(
    edit: str, plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    source, error = BAD_HOOKS[edit]
    plugins.install("sturdy", tools_source({"hello": "old"}))
    host = dev_host({"sturdy"})
    plugins.write("sturdy", source)
    assert host.reload("sturdy").line() == FAILED + error


def test_an_exception_names_the_plugin_line_it_came_from(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    module = plugins.install("sturdy", tools_source({"hello": "old"}))
    host = dev_host({"sturdy"})
    plugins.write("sturdy", RAISING)
    where = f"({module}.py:5 in lookup)"
    assert host.reload("sturdy").line() == FAILED + f"KeyError: 'missing' {where}"


def test_a_failure_at_start_names_the_line_too(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    module = plugins.install("sturdy", RAISING)
    host = dev_host({"sturdy"})
    record = host.plugins.records["sturdy"]
    where = f"({module}.py:5 in lookup)"
    assert (record.state, record.error) == ("failed", f"KeyError: 'missing' {where}")


def test_generated_code_and_c_functions_name_the_plugin_line_that_called_them(
    plugins: Plugins, dev_host: Callable[..., Host]
) -> None:
    module = plugins.install("sturdy", GENERATED_CALL)
    plugins.install("made", GENERATED_HOOK)
    host = dev_host({"sturdy", "made"})
    records = host.plugins.records
    assert records["sturdy"].error == f"KeyError: 'gen' ({module}.py:6 in activate)"
    assert records["made"].error == (  # the whole hook is generated: no file to name
        "ValueError: invalid literal for int() with base 10: 'x'"
    )
