"""``agent-host`` as a subprocess: real discovery, real installs, one-line user errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.distributions import write_distribution

AGENT_HOST = str(Path(sys.executable).parent / "agent-host")

PLUGIN_SOURCE = """
import attrs
from host import hookimpl
from host.tools import tool

@attrs.frozen
class Args:
    name: str

@tool("greet", "Greet someone by name.", Args)
async def greet(args, exec):
    return f"hello {args.name}"

@hookimpl
def register_tools(register):
    register(greet)
"""


def run(
    *args: str, cwd: Path, pythonpath: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    if pythonpath is not None:
        environ["PYTHONPATH"] = str(pythonpath)
    environ.update(env)
    return subprocess.run(
        [AGENT_HOST, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=60
    )


def rows(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_plugins_json_discovers_a_throwaway_distribution(tmp_path):
    site = tmp_path / "site"
    write_distribution(
        site,
        "greeter",
        version="0.3.0",
        entry_points={"greeter": "greeter_cli"},
        modules={"greeter_cli": PLUGIN_SOURCE},
    )
    found = rows(run("plugins", "--json", cwd=tmp_path, pythonpath=site))
    assert found["greeter"]["version"] == "0.3.0"
    assert found["greeter"]["distribution"] == "greeter"
    assert found["greeter"]["state"] == "active"
    assert found["greeter"]["tools"] == ["greet"]
    tools = json.loads(run("tools", "--json", cwd=tmp_path, pythonpath=site).stdout)
    greet = next(t for t in tools if t["name"] == "greet")
    assert greet == {
        "name": "greet",
        "description": "Greet someone by name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": False,
        },
        "plugin": "greeter",
    }


def test_real_pip_install_into_a_target_is_discovered(tmp_path):
    project = tmp_path / "project"
    (project / "pip_greeter").mkdir(parents=True)
    (project / "pip_greeter" / "__init__.py").write_text(PLUGIN_SOURCE)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "pip-greeter"\nversion = "4.2.0"\n'
        '[project.entry-points."agent_host.plugins"]\npip_greeter = "pip_greeter"\n'
        '[tool.setuptools]\npackages = ["pip_greeter"]\n'
    )
    target = tmp_path / "target"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    found = rows(run("plugins", "--json", cwd=tmp_path, pythonpath=target))
    assert found["pip_greeter"]["distribution"] == "pip-greeter"
    assert found["pip_greeter"]["version"] == "4.2.0"
    assert found["pip_greeter"]["state"] == "active"


def test_first_party_distributions_are_listed_with_their_requirements(tmp_path):
    found = rows(run("plugins", "--json", cwd=tmp_path))
    expected = {
        "subagent_control": ("agent-host-tool-subagent-control", ["subagents"]),
        "list_agents": ("agent-host-tool-subagent-control", ["subagents", "agents"]),
        "subagent_report": ("agent-host-tool-subagent-report", ["subagents"]),
    }
    for name, (distribution, requires) in expected.items():
        assert found[name]["distribution"] == distribution
        assert found[name]["requires"] == requires
        assert found[name]["state"] in {"active", "inactive"}
        if found[name]["state"] == "inactive":
            assert found[name]["missing"]


def test_bad_config_is_one_line_without_traceback(tmp_path):
    (tmp_path / "agent-host.toml").write_text("[plugins\n")
    result = run("plugins", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("agent-host: error: cannot read config file agent-host.toml")
    debug = run("--debug", "plugins", cwd=tmp_path)
    assert "Traceback" in debug.stderr


def test_unknown_plugin_names_warn_on_stderr(tmp_path):
    result = run("--no-plugin", "ghost", "plugins", cwd=tmp_path)
    assert result.returncode == 0
    assert 'agent-host: warning: unknown plugin "ghost" blocked' in result.stderr


def test_version(tmp_path):
    result = run("--version", cwd=tmp_path)
    assert result.stdout.strip() == "agent-host 0.1.0"


def test_help_is_what_the_stock_argparse_formatter_prints(monkeypatch):
    import argparse

    from host.cli import main

    def helps(parser: argparse.ArgumentParser) -> list[str]:
        texts = [parser.format_help()]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    texts += helps(sub)
        return texts

    for columns in ("50", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        ours = helps(main.build_parser())
        with monkeypatch.context() as stock:
            stock.setattr(main, "ArgumentParser", argparse.ArgumentParser)
            assert ours == helps(main.build_parser())


def test_listing_plugins_leaves_the_heavier_modules_unimported(tmp_path):
    """What ``plugins --json`` needs stays light: no cattrs converter, profile values, reload
    machinery, prompt values or ``shutil`` (argparse's formatter would import it)."""
    code = (
        "import sys, io, contextlib\n"
        "from host.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['plugins', '--json'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HOST_")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=environ, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert "host.plugins.lifecycle" in loaded
    unwanted = {
        "host.serialization",
        "host.profiles.model",
        "host.plugins.reload",
        "host.agents.prompt",
        "host.subagents.descriptors",
        "shutil",
    }
    assert loaded & unwanted == set()


def test_debug_shows_why_a_plugin_failed(tmp_path):
    """A plugin's row has one line; --debug adds the traceback it came from."""
    (tmp_path / "agent-host.toml").write_text(
        '[plugins.openai]\nbase_url = "ftp://x"\nmodel = "m"\n'
    )
    plain = run("plugins", cwd=tmp_path)
    assert plain.returncode == 0 and "Traceback" not in plain.stderr
    debug = run("--debug", "plugins", cwd=tmp_path)
    assert "agent-host: debug: plugin openai failed:" in debug.stderr
    assert "Traceback" in debug.stderr
    assert (
        "ConfigError: [plugins.openai] base_url: 'ftp://x' must start with http://" in debug.stderr
    )


CLINGY_SOURCE = (
    PLUGIN_SOURCE
    + """
@hookimpl
def activate(scope):
    def let_go():
        raise RuntimeError("cannot let go")

    scope.add(let_go)
"""
)


def test_a_raising_disposer_is_one_line_and_never_the_exit_status(tmp_path):
    """Every command closes the host at the end: a plugin whose disposer raises is one line
    on stderr (no traceback) and the command's own exit status stands."""
    from host.cli.chat import SCRIPTED_NOTICE
    from tests.cli.support import agent_host

    site = tmp_path / "site"
    write_distribution(
        site, "clingy", entry_points={"clingy": "clingy_cli"}, modules={"clingy_cli": CLINGY_SOURCE}
    )
    line = 'plugin "clingy": disposal failed: RuntimeError: cannot let go\n'
    for command in (["plugins"], ["tools", "--json"]):
        result = run(*command, cwd=tmp_path, pythonpath=site)
        assert (result.returncode, result.stderr) == (0, line), command
    ran = agent_host("run", "hello", cwd=tmp_path, PYTHONPATH=str(site))
    assert (ran.returncode, ran.stdout) == (0, "scripted reply: hello\n")
    assert ran.stderr == SCRIPTED_NOTICE + "\n" + line
    debug = run("--debug", "plugins", cwd=tmp_path, pythonpath=site)
    assert debug.returncode == 0 and line in debug.stderr and "Traceback" in debug.stderr
