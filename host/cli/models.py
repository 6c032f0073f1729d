"""``agent-host models [--json]`` and ``agent-host models check [NAME]``.

The listing has one row per registered model: its name, whether it is the default, what it is
(its ``repr`` when the class defines one, else the class) and whether it streams. ``check``
runs the probes of ``host.cli.probes`` against one model (the default unless NAME is given)
and prints one line per probe, after a warning line for each thing the model's own optional
``check_warnings()`` finds off; it exits 1 when a probe failed. Like ``run``, it refuses to
start when a plugin that registers models failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from host.agents.models import Model, ModelRegistry, streams
from host.app import Host
from host.cli import probes, render, termination
from host.cli.model_choice import failed_model_plugins, refuse_failed_model_plugins
from host.plugins.lifecycle import describe_error


def describe(model: Model) -> str:
    """What ``model`` is: its own ``repr`` if its class defines one, else the class path."""
    cls = type(model)
    if cls.__repr__ is not object.__repr__:
        return repr(model)
    return f"{cls.__module__}.{cls.__qualname__}"


def rows(models: ModelRegistry) -> list[dict[str, Any]]:
    """One row per registered model: name, default, model (``describe``), streams."""
    found = []
    for name in models.names():
        try:
            model = models.resolve(name)
        except Exception as error:  # a model factory that raises: say so, list the others
            what, streaming = f"cannot be built: {describe_error(error)}", False
        else:
            what, streaming = describe(model), streams(model)
        default = name == models.default_name
        found.append({"name": name, "default": default, "model": what, "streams": streaming})
    return found


def table(found: list[dict[str, Any]]) -> str:
    """The human view of the listing."""
    body = [
        [
            row["name"],
            "yes" if row["default"] else "",
            "yes" if row["streams"] else "no",
            row["model"],
        ]
        for row in found
    ]
    return render.table(["name", "default", "streams", "model"], body)


async def check(host: Host, name: str | None) -> int:
    """Probe model ``name`` (None: the default): a line naming it, then one per probe as it
    finishes; 1 if any failed. The host is shut down before this returns."""
    try:
        models: ModelRegistry = host.services.models
        model = models.resolve(name)
        print(f"checking {name or models.default_name}: {describe(model)}", flush=True)
        for warning in await _warnings(model):
            print(f"agent-host: warning: {warning}", file=sys.stderr, flush=True)
        results = []
        for probe in probes.PROBES:
            results.append(await probes.run(probe, model))
            print(results[-1].line(), flush=True)
    finally:
        await host.aclose()
    return 0 if all(result.ok for result in results) else 1


async def _warnings(model: Model) -> list[str]:
    """What the model itself finds off before it is probed: its optional
    ``check_warnings()`` (the openai model: a model id its server does not serve)."""
    check = getattr(model, "check_warnings", None)
    if check is None:
        return []
    try:
        return [str(line) for line in await check()]
    except Exception as error:
        return [f"the model's own check failed: {describe_error(error)}"]


def command(host: Host, args: argparse.Namespace) -> int:
    """The ``models`` sub-command (``host.cli.main`` calls it with the opened host)."""
    if args.models_action == "check":
        refuse_failed_model_plugins(host)
        return termination.run(check(host, args.name))
    for failure in failed_model_plugins(host):
        print(f"agent-host: warning: {failure}", file=sys.stderr)
    found = rows(host.services.models)
    print(render.to_json(found) if args.json else table(found))
    return 0
