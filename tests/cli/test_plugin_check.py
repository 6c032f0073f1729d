"""``plugins --check [NAME…]`` for CI, the services each plugin provides, and a warning at the
start of ``run``/``chat``/``dev`` for a plugin left inactive by a missing service."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.cli.chat import SCRIPTED_NOTICE
from tests.cli.support import agent_host
from tests.distributions import write_distribution

NOTES_SOURCE = """
from host import hookimpl

@hookimpl
def register_services(register):
    register("notes", {})
"""

DIGEST_SOURCE = """
from host import hookimpl

requires = ("{service}",)

@hookimpl
def activate(scope):
    pass
"""

TYPO = "plugin notes_digest inactive: missing services: nots"


def site_requiring(tmp_path: Path, service: str) -> str:
    """``PYTHONPATH`` holding ``notes`` (provides the ``notes`` service) and ``notes_digest``
    (requires ``service``)."""
    directory = tmp_path / "site"
    write_distribution(
        directory, "notes", entry_points={"notes": "notes_cli"}, modules={"notes_cli": NOTES_SOURCE}
    )
    write_distribution(
        directory,
        "notes-digest",
        entry_points={"notes_digest": "notes_digest_cli"},
        modules={"notes_digest_cli": DIGEST_SOURCE.format(service=service)},
    )
    return str(directory)


def row_of(listing: str, name: str) -> list[str]:
    return next(line.split() for line in listing.splitlines() if line.startswith(f"{name} "))


def test_the_listing_shows_the_services_each_plugin_provides(tmp_path: Path) -> None:
    result = agent_host("plugins", cwd=tmp_path, PYTHONPATH=site_requiring(tmp_path, "notes"))
    assert result.returncode == 0
    assert result.stdout.splitlines()[0].split() == [
        "plugin", "state", "from", "provides", "requires", "detail"
    ]  # fmt: skip
    assert row_of(result.stdout, "notes") == ["notes", "active", "notes", "1.0", "notes"]
    assert row_of(result.stdout, "notes_digest")[:5] == [
        "notes_digest", "active", "notes-digest", "1.0", "notes"
    ]  # fmt: skip
    assert row_of(result.stdout, "sessions")[:4] == ["sessions", "active", "built-in", "sessions"]


def test_check_exits_1_when_a_requirement_names_a_service_nobody_provides(tmp_path: Path):
    site = site_requiring(tmp_path, "nots")
    result = agent_host("plugins", "--check", cwd=tmp_path, PYTHONPATH=site)
    assert (result.returncode, result.stderr) == (1, f"agent-host: {TYPO}\n")


def test_check_of_named_plugins_exits_1_when_one_is_not_active(tmp_path: Path) -> None:
    site = site_requiring(tmp_path, "notes")
    fine = agent_host("plugins", "--check", "notes", "notes_digest", cwd=tmp_path, PYTHONPATH=site)
    assert (fine.returncode, fine.stderr) == (0, "")
    assert [line.split()[0] for line in fine.stdout.splitlines()[2:]] == ["notes", "notes_digest"]

    blocked = agent_host(
        "--no-plugin", "notes", "plugins", "--check", "notes_digest", cwd=tmp_path, PYTHONPATH=site
    )
    line = "plugin notes_digest inactive: missing services: notes"
    assert (blocked.returncode, blocked.stderr) == (1, f"agent-host: {line}\n")


def test_check_of_an_unknown_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    site = site_requiring(tmp_path, "notes")
    result = agent_host("plugins", "--check", "note", cwd=tmp_path, PYTHONPATH=site)
    line = 'agent-host: error: plugins: no plugin named "note" (did you mean "notes"?)'
    assert (result.returncode, result.stdout, result.stderr) == (2, "", line + "\n")


@pytest.mark.parametrize("command", [["run", "hi"], ["dev"]])
def test_run_and_dev_warn_of_an_inactive_plugin_at_the_start(tmp_path, command) -> None:
    site = site_requiring(tmp_path, "nots")
    result = agent_host(*command, cwd=tmp_path, stdin="/exit\n", PYTHONPATH=site)
    assert result.returncode == 0
    assert result.stderr.splitlines()[:2] == [f"agent-host: warning: {TYPO}", SCRIPTED_NOTICE]
