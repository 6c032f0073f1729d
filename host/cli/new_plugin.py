"""``agent-host new-plugin NAME [--dir D]``: scaffold a complete plugin distribution.

For plugin ``notes`` it writes, into ``D`` (default ``./agent-host-notes``, which must be
missing or empty):

* ``pyproject.toml``: distribution ``agent-host-notes`` declaring the entry point
  ``notes = "agent_host_notes"`` in ``agent_host.plugins``, a ``test`` extra
  (``agent-host-core[testing]`` and mypy), the pytest settings and a strict ``[tool.mypy]``;
* ``agent_host_notes/__init__.py``: the plugin: ``requires``, an attrs ``Config`` (the
  ``[plugins.notes]`` table of agent-host.toml) and a function tool ``notes`` registered in
  ``register_tools``, reading the config through its closure;
* ``tests/test_notes.py``: typed tests with the fixtures agent-host-core ships
  (``make_host``, ``make_harness``), one of them an agent calling the tool through the
  scripted model; ``mypy --strict .`` passes on the scaffold as written;
* ``script.json``: the same call for ``agent-host run --script``, keyless;
* ``README.md``: how to install, test and develop it (``agent-host dev``).

Everything is checked before anything is written, and the files are written into a
temporary sibling directory, then renamed into place (or moved into the empty directory), so a
refused or failed scaffold leaves nothing behind.
"""

from __future__ import annotations

import argparse
import keyword
import os
import re
from pathlib import Path
from string import Template

from host.builtins import BUILTINS
from host.errors import HostError

NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""A plugin name: entry-point name, ``[plugins.NAME]`` key, tool and function name."""

TEMPLATE_NAMES = frozenset({"tool", "register", "config"})
"""Names the generated ``register_tools`` uses itself: a tool function so named would hide
them."""

PYPROJECT = Template("""\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "An agent-host plugin: the $name tool."
requires-python = ">=3.11"
dependencies = ["agent-host-core"]

[project.optional-dependencies]
test = ["agent-host-core[testing]", "mypy>=1.10"]

# The host finds the plugin through this entry point; its name is the plugin's name.
[project.entry-points."agent_host.plugins"]
$name = "$package"

[tool.setuptools.packages.find]
include = ["$package*"]

[tool.pytest.ini_options]
testpaths = ["tests"]
asyncio_default_fixture_loop_scope = "function"

# `mypy` (or `mypy --strict .`) from this folder checks the plugin and its tests.
[tool.mypy]
strict = true
files = ["$package", "tests"]
""")

PACKAGE = Template('''\
"""The ``$name`` plugin: one tool, configured by ``[plugins.$name]`` in agent-host.toml."""

from __future__ import annotations

import attrs
from host.api import RegisterTool, hookimpl
from host.tools import tool

requires = ("agents",)
"""The services the plugin needs: until they are all present it stays inactive."""


@attrs.frozen
class Config:
    """``[plugins.$name]`` in agent-host.toml (a missing key keeps its default)."""

    greeting: str = "Hello"


@hookimpl
def register_tools(register: RegisterTool, config: Config) -> None:
    """Offer the ``$name`` tool to every agent, greeting as ``config`` says."""

    # The tool's name is the function's, its description the docstring's first paragraph,
    # its arguments' schema the signature (described by ``Args:``). A parameter annotated
    # ``host.tools.ToolExec`` would receive the call's agent, services and cancel signal.
    @tool
    async def $name(who: str) -> str:
        """Greet someone by name.

        Args:
            who: The name of whom to greet.
        """
        return f"{config.greeting}, {who}!"

    register($name)
''')

TESTS = Template('''\
"""Tests of the $name plugin with the fixtures agent-host-core ships for plugin authors."""

from __future__ import annotations

from host.testing import MakeHarness, MakeHost, call, call_tool, say

import $package

PLUGIN = ("$name", $package)


async def test_the_tool_greets(make_host: MakeHost) -> None:
    host = make_host(PLUGIN)
    result = await call_tool(host, "$name", {"who": "Ada"}, agent=object())
    assert (result.text, result.is_error) == ("Hello, Ada!", False)


async def test_the_greeting_comes_from_the_config(make_host: MakeHost) -> None:
    host = make_host(PLUGIN, config={"plugins": {"$name": {"greeting": "Hi"}}})
    result = await call_tool(host, "$name", {"who": "Ada"}, agent=object())
    assert result.text == "Hi, Ada!"


async def test_bad_arguments_are_an_error_result(make_host: MakeHost) -> None:
    host = make_host(PLUGIN)
    result = await call_tool(host, "$name", {"whom": "Ada"}, agent=object())
    assert result.is_error


def test_the_tool_is_described_by_its_docstring(make_host: MakeHost) -> None:
    offered = make_host(PLUGIN).tools.get("$name")
    assert offered is not None
    assert offered.description == "Greet someone by name."
    assert offered.parameters["required"] == ["who"]


def test_inactive_without_the_agents_service(make_host: MakeHost) -> None:
    host = make_host(PLUGIN, builtins=False)
    row = next(r for r in host.plugin_rows() if r["name"] == "$name")
    assert (row["state"], row["missing"]) == ("inactive", ["agents"])


async def test_an_agent_calls_the_tool(make_harness: MakeHarness) -> None:
    h = make_harness(PLUGIN)
    root = await h.root()
    h.model.script("root", call("$name", who="Ada"), say("Greeted."))
    root.followup("Greet Ada.")
    await root.wait_idle()
    assert [m.content for m in await h.stored_messages(root.id, "tool")] == ["Hello, Ada!"]
    assert root.last_answer == "Greeted."
''')

SCRIPT = Template("""\
[
  {"tool_calls": [{"name": "$name", "arguments": {"who": "Ada"}}]},
  "Greeted Ada."
]
""")

README = Template("""\
# $distribution

An agent-host plugin: the `$name` tool greets someone. The plugin is `$name` (entry point
in `pyproject.toml`), the code is `$package/__init__.py`.

## Install and test

In the virtual environment where agent-host runs:

```sh
pip install -e ".[test]"      # this plugin, editable, with agent-host-core[testing] and mypy
pytest
mypy --strict .               # the plugin and its tests, typed ([tool.mypy] in pyproject.toml)
agent-host plugins --check $name   # $name is listed, active (exit 1 if not: for CI)
agent-host tools              # ... and its tool, with the schema built from its signature
```

(With the agent-host checkout's `.venv` not activated, prefix each command with its
`.venv/bin/`, e.g. `.venv/bin/pip`, `.venv/bin/pytest`.)

The tests use the fixtures agent-host-core ships as a pytest plugin: `make_host` builds a
host from the built-in services and this plugin alone, `make_harness` adds a scripted model
(`h.model.script(label, call(...), say(...))`) to drive an agent turn by turn. Async tests
that use these fixtures need no `asyncio_mode` setting; async fixtures of your own take
`@pytest_asyncio.fixture`.

## Configure

```toml
# agent-host.toml
[plugins.$name]
greeting = "Hi"
```

## Develop

```sh
agent-host run --script script.json "Greet Ada."   # an agent calls the tool, keyless
agent-host dev --script script.json                 # chat; saving a file reloads the plugin
```

`agent-host dev` watches every plugin installed editable: save
`$package/__init__.py` and the new version replaces the old one in the running host
(if it fails to import or activate, the old one keeps running and one line says why).
Without `--script`, the configured model answers.

A tool plugin reloads in place. A plugin that provides a service (`register_services`)
restarts the whole `dev` process when saved, since other plugins hold on to its service
objects, unless it implements `hand_over_state` and `take_over_state`: then a new version
providing the same services takes the old one's state over and its dependents re-activate
against it, in place. Changing which services it provides always restarts.
""")


class ScaffoldError(HostError):
    """A plugin that cannot be scaffolded as asked (code ``NEW_PLUGIN``)."""

    def __init__(self, message: str) -> None:
        super().__init__("NEW_PLUGIN", message)


def check_name(name: str) -> None:
    """Refuse a name that cannot be a plugin, tool and module name at once."""
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f'invalid plugin name "{name}": use 1 to 64 lowercase letters, digits and '
            "underscores, starting with a letter (not a Python keyword)"
        )
    if name in {builtin for builtin, _ in BUILTINS}:
        raise ScaffoldError(f'invalid plugin name "{name}": a built-in plugin has it')
    if name in TEMPLATE_NAMES:
        raise ScaffoldError(f'invalid plugin name "{name}": the generated code uses it')


def files(name: str) -> dict[str, str]:
    """The scaffold of plugin ``name``: relative path → text."""
    values = {
        "name": name,
        "package": f"agent_host_{name}",
        "distribution": "agent-host-" + name.replace("_", "-"),
    }
    package = values["package"]
    return {
        "pyproject.toml": PYPROJECT.substitute(values),
        f"{package}/__init__.py": PACKAGE.substitute(values),
        f"{package}/py.typed": "",
        f"tests/test_{name}.py": TESTS.substitute(values),
        "script.json": SCRIPT.substitute(values),
        "README.md": README.substitute(values),
    }


def default_dir(name: str) -> Path:
    """Where the scaffold goes without ``--dir``: the distribution's name."""
    return Path("agent-host-" + name.replace("_", "-"))


def scaffold(name: str, target: Path) -> dict[str, str]:
    """Write the scaffold of ``name`` into ``target`` (missing or empty); returns its files."""
    check_name(name)
    if target.exists() and not target.is_dir():
        raise ScaffoldError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise ScaffoldError(f"{target} is not empty")
    made = files(name)
    import shutil  # only here: ``agent-host`` start-up stays without it

    target = target.absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.{os.getpid()}.new-plugin"
    staging.mkdir()
    try:
        for relative, text in made.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if not target.exists():
            os.rename(staging, target)
        else:  # an empty directory, perhaps the current one: move the contents in
            for entry in staging.iterdir():
                os.rename(entry, target / entry.name)
            staging.rmdir()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return made


def command(args: argparse.Namespace) -> int:
    """Scaffold, then say where and what to do next."""
    target: Path = args.dir if args.dir is not None else default_dir(args.name)
    scaffold(args.name, target)
    print(f"created {target}: plugin {args.name}, tool {args.name}")
    here = target.absolute() == Path.cwd()
    print(f'next: {"" if here else f"cd {target} && "}pip install -e ".[test]" && pytest')
    return 0
