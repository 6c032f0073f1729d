"""Entry point of ``agent-host``: parse arguments, open a host, run one command.

User errors print one line (``agent-host: error: …``) and exit 2; ``--debug`` shows the
traceback instead, and adds it to the host's one-line error logs.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from host import __version__
from host.app import Host, open_host
from host.cli import app_server, mcp, render, sessions, termination
from host.errors import ConfigError, HostError
from host.naming import did_you_mean
from host.plugins.record import DisposalFailure

Subcommand = Callable[[Host, argparse.Namespace], int]
"""What runs one ``agent-host`` command (``COMMANDS``); a chat's ``/`` commands are
``host.cli.slash``'s."""

JSON_HELP = "print JSON instead of a table"
LATEST = ""
"""``chat --continue`` (or ``--resume`` without an id): the root conversation active last."""
RESUMED_PROFILE = (
    "--profile starts a new conversation; a resumed conversation keeps the profile it started with"
)
"""``run``/``chat --profile`` with ``--resume`` or ``--continue``: refused before anything."""


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, sized to the terminal the way it does, without ``shutil``.

    argparse builds a formatter for every argument it adds (to check its metavar), and the
    stock one imports ``shutil``, which imports the bz2 and lzma modules, to read the width.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse.ArgumentParser`` using ``HelpFormatter``; its sub-parsers are of this class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def add_global_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    """The options every command takes, before it or (``after_command``) after it: there
    they have no default, so one given before the command stays unless given again."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if after_command else value

    parser.add_argument(
        "--config", type=Path, metavar="FILE", default=default(None),
        help="configuration file (agent-host.toml)",
    )
    parser.add_argument(
        "--data-dir", type=Path, metavar="D", default=default(None),
        help="where sessions live (default: .agent-host)",
    )
    parser.add_argument(
        "--no-plugin", action="append", default=default([]), metavar="NAME",
        help="block a plugin (repeatable)",
    )
    parser.add_argument(
        "--debug", action="store_true", default=default(False), help="show tracebacks"
    )


def _sub_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every sub-command's parser below ``parser``, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield sub
                yield from _sub_parsers(sub)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: global options, then one sub-command (which also takes them)."""
    parser = ArgumentParser(prog="agent-host", description=__doc__)
    parser.add_argument("--version", action="version", version=f"agent-host {__version__}")
    add_global_options(parser, after_command=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plugins = commands.add_parser("plugins", help="list plugins and their states")
    plugins.add_argument("names", nargs="*", metavar="NAME", help="only these plugins")
    plugins.add_argument("--json", action="store_true", help=JSON_HELP)
    plugins.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a NAME is not active (no NAME: if a plugin failed or misses a service)",
    )
    tools = commands.add_parser("tools", help="list the tools agents can call")
    tools.add_argument("--json", action="store_true", help=JSON_HELP)
    tools.add_argument(
        "--scope", choices=["root", "child"], default="root",
        help="the tools of a root agent (the default) or of a subagent",
    )
    tools.add_argument("--markdown", action="store_true", help="the catalog document")
    profiles = commands.add_parser("profiles", help="list subagent profiles and diagnostics")
    profiles.add_argument("--json", action="store_true", help=JSON_HELP)
    commands.add_parser("demo", help="run the keyless end-to-end scenario")
    run = commands.add_parser("run", help="send one message to an agent, print its answers")
    run.add_argument("prompt", metavar="PROMPT", help="the message")
    run.add_argument(
        "--resume", metavar="ID", help="send it to the stored root conversation ID"
    )
    chat = commands.add_parser("chat", help="talk to an agent, one message per line")
    resuming = chat.add_mutually_exclusive_group()
    resuming.add_argument(
        "--resume", nargs="?", const=LATEST, metavar="ID",
        help="go on with the stored root conversation ID (without ID: the one active last)",
    )
    resuming.add_argument(
        "--continue", dest="resume", action="store_const", const=LATEST,
        help="go on with the root conversation of this data directory active last",
    )
    models = commands.add_parser("models", help="list the models; check one against a server")
    models.add_argument("--json", action="store_true", help=JSON_HELP)
    actions = models.add_subparsers(dest="models_action", metavar="ACTION")
    check = actions.add_parser("check", help="probe a model: plain, streaming and tool calls")
    check.add_argument("name", nargs="?", metavar="NAME", help="a model (default: the default)")
    dev_command = commands.add_parser("dev", help="chat while edited plugins reload in process")
    dev_command.add_argument(
        "--watch", action="append", default=[], type=Path, metavar="PATH",
        help="also watch PATH for changes (repeatable)",
    )
    dev_command.add_argument("--restart", action="store_true", help="restart on every change")
    for command in (run, chat, dev_command):
        command.add_argument(
            "--script", type=Path, metavar="FILE", help="the scripted model answers from FILE"
        )
    for command in (run, chat):
        command.add_argument(
            "--profile", metavar="NAME",
            help="start the new agent from the profile NAME (not with --resume or --continue)",
        )
    for command in (chat, dev_command):
        command.add_argument(
            "--plain", action="store_true", help="plain lines even on a terminal (as over pipes)"
        )
    sessions.add_parser(commands)
    app_server.add_parser(commands)
    mcp.add_parser(commands)
    new_plugin = commands.add_parser("new-plugin", help="scaffold a plugin distribution")
    new_plugin.add_argument("name", metavar="NAME", help="the plugin's name (and its tool's)")
    new_plugin.add_argument("--dir", type=Path, metavar="D", help="where (./agent-host-NAME)")
    for sub in _sub_parsers(parser):
        add_global_options(sub, after_command=True)
    return parser


def cmd_plugins(host: Host, args: argparse.Namespace) -> int:
    """Print every discovered plugin (the ``NAME``s given, if any) with its state and services.

    With ``--check``, one line on stderr per problem, and exit 1 if there is any: a named
    plugin that is not active (inactive for a missing service counts), or, without names, a
    plugin that failed or is inactive for a missing service. An unknown name is a
    ``ConfigError`` (exit 2).
    """
    rows = _named(host.plugin_rows(), args.names)
    print(render.to_json(rows) if args.json else render.plugin_table(rows))
    if not args.check:
        return 0
    if args.names:
        problems = [render.problem(row) for row in rows if row["state"] != "active"]
    else:
        problems = render.unavailable_plugins(rows)
    for problem in problems:
        print(f"agent-host: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _named(rows: list[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``names``, in their order (every row without names); ``ConfigError`` for
    a name no plugin has."""
    if not names:
        return rows
    by_name = {row["name"]: row for row in rows}
    for name in names:
        if name not in by_name:
            hint = did_you_mean(name, by_name)
            raise ConfigError(f'plugins: no plugin named "{name}"{hint}')
    return [by_name[name] for name in dict.fromkeys(names)]


def cmd_tools(host: Host, args: argparse.Namespace) -> int:
    """Print the tool catalog of a scope (or the whole catalog document)."""
    from host.clients import catalog

    if args.markdown:
        print(catalog.markdown(host), end="")
        return 0
    rows = catalog.catalog(host, args.scope)
    print(render.to_json(rows) if args.json else render.tool_table(rows))
    return 0


def cmd_profiles(host: Host, args: argparse.Namespace) -> int:
    """Print every subagent profile with its source, and every diagnostic."""
    from host.cli import profiles

    return profiles.command(host, args)


def cmd_run(host: Host, args: argparse.Namespace) -> int:
    """One message to a new root agent."""
    from host.cli import chat

    return termination.run(
        chat.run_once(host, args.prompt, args.script, resume=args.resume, profile=args.profile)
    )


def cmd_chat(host: Host, args: argparse.Namespace) -> int:
    """An interactive conversation with a new root agent."""
    from host.cli import chat

    return termination.run(
        chat.chat(
            host, script=args.script, plain=args.plain, resume=args.resume, profile=args.profile
        )
    )


def cmd_models(host: Host, args: argparse.Namespace) -> int:
    """List the registered models, or probe one (``models check``)."""
    from host.cli import models

    return models.command(host, args)


def cmd_dev(host: Host, args: argparse.Namespace) -> int:
    """Chat while edited plugins reload (imports the watcher only here)."""
    from host.cli import dev

    return dev.command(host, args)


def cmd_sessions(host: Host, args: argparse.Namespace) -> int:
    """The ``sessions`` actions (async: persistence reads are)."""
    return termination.run(sessions.run(host, args))


def cmd_app_server(host: Host, args: argparse.Namespace) -> int:
    """Serve JSON-RPC to another program."""
    return app_server.command(host, args)


COMMANDS: dict[str, Subcommand] = {
    "app-server": cmd_app_server,
    "mcp": mcp.serve,
    "plugins": cmd_plugins,
    "tools": cmd_tools,
    "profiles": cmd_profiles,
    "sessions": cmd_sessions,
    "run": cmd_run,
    "chat": cmd_chat,
    "dev": cmd_dev,
    "models": cmd_models,
}


def _load_script(args: argparse.Namespace) -> dict[str, dict[str, Any]] | None:
    """With ``--script FILE``: read FILE into ``args.script`` (a bad one raises before the
    host opens) and return the overrides that make the scripted model the default."""
    if getattr(args, "script", None) is None:
        return None
    from host.cli import script_file
    from host.cli.model_choice import SCRIPTED_DEFAULT

    args.script = script_file.load(args.script)
    return SCRIPTED_DEFAULT


def print_plugin_failures(host: Host) -> None:
    """``--debug``: the traceback of each plugin that failed (its row shows one line)."""
    for record in host.plugins.records.values():
        if record.state == "failed" and record.exception is not None:
            print(f"agent-host: debug: plugin {record.name} failed:", file=sys.stderr)
            traceback.print_exception(record.exception, file=sys.stderr)


def print_disposal_failures(failures: Sequence[DisposalFailure], debug: bool) -> None:
    """One line per plugin whose disposal failed (the command's exit status stays what it
    was); ``--debug`` adds the traceback."""
    for failure in failures:
        print(failure.line(), file=sys.stderr)
        if debug:
            traceback.print_exception(failure.error, file=sys.stderr)


NO_TOOLS = ("sessions", "models", "profiles")
"""Commands that call no tool: their host starts no tool server (an MCP server's start-up
would only slow them down)."""

INTERRUPTED = 130
"""The exit code after Ctrl-C (128 + SIGINT), as shells report a program a signal ended."""


class LogLines(logging.Handler):
    """What Python prints for a log record when no handler is configured (the message, then
    any traceback, on the current stderr, from WARNING up), with a warning as an
    ``agent-host: warning: …`` line like the CLI's own."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        """Print ``record`` on stderr."""
        try:
            text = self.format(record)
            if record.levelno == logging.WARNING:
                text = f"agent-host: warning: {text}"
            print(text, file=sys.stderr, flush=True)
        except Exception:
            self.handleError(record)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code. SIGTERM closes as Ctrl-C does, exit 143
    (``host.cli.termination``)."""
    args = build_parser().parse_args(argv)
    root = logging.getLogger()
    if not root.handlers:  # an embedding program's own logging stays as it is
        root.addHandler(LogLines())
    if args.debug:  # the host's one-line error logs carry their tracebacks
        logging.getLogger("host").setLevel(logging.DEBUG)
    with termination.handling_sigterm():
        return _command(args)


def _command(args: argparse.Namespace) -> int:
    """Run the parsed command; a user error or a stop is one line and its exit code."""
    try:
        if args.command == "mcp" and args.mcp_action != "serve":  # opens no host: nothing
            # may start before it is trusted
            return mcp.command(args)
        if args.command == "new-plugin":  # writes files, opens no host
            from host.cli import new_plugin

            return new_plugin.command(args)
        if args.command == "demo":
            from host.cli import demo

            opener = demo.default_opener(tuple(args.no_plugin))
            return termination.run(demo.run_demo(args.data_dir, opener))
        if getattr(args, "profile", None) is not None and getattr(args, "resume", None) is not None:
            raise ConfigError(RESUMED_PROFILE)
        host = open_host(
            data_dir=args.data_dir,
            config_path=args.config,
            no_plugin=args.no_plugin,
            debug=args.debug,
            overrides=_load_script(args),
            tools_used=args.command not in NO_TOOLS,
        )
        for warning in host.warnings:
            print(f"agent-host: warning: {warning}", file=sys.stderr)
        if args.debug:
            print_plugin_failures(host)
        try:
            return COMMANDS[args.command](host, args)
        finally:
            host.close()
            print_disposal_failures(host.disposal_failures, args.debug)
    except (HostError, OSError) as error:
        if args.debug:
            traceback.print_exc()
        print(f"agent-host: error: {getattr(error, 'message', error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C outside the terminal client, or SIGTERM
        if args.debug:
            traceback.print_exc()
        terminated = isinstance(stop, termination.Terminated)
        print(f"agent-host: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return termination.TERMINATED if terminated else INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
