"""``agent-host new-plugin``: a scaffold whose own tests pass in a fresh venv, and refusals
that write nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import time
import venv
from pathlib import Path

import pytest

from host.cli import new_plugin
from host.cli.main import main
from tests.support import in_checkout
from tests.typecheck import run_mypy

CHECKOUT = Path(__file__).resolve().parents[2]


def fresh_venv(path: Path) -> Path:
    """A new venv (no pip of its own) that also sees this interpreter's site-packages —
    agent-host-core with pytest and pytest-asyncio, pip and setuptools — through a ``.pth``
    file, as ``--system-site-packages`` would for a system install; returns its python."""
    venv.create(path, with_pip=False)
    python = path / "bin" / "python"
    query = "import sysconfig; print(sysconfig.get_path('purelib'))"
    own = Path(subprocess.run([python, "-c", query], capture_output=True, text=True).stdout.strip())
    outer = sysconfig.get_path("purelib")
    (own / "_agent_host_outer.pth").write_text(f"import site; site.addsitedir({outer!r})\n")
    return python


def environ() -> dict[str, str]:
    """This environment without the caller's agent-host and model settings."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENT_HOST_", "OPENAI_", "PYTEST_")) and k != "PYTHONPATH"
    }


@in_checkout
@pytest.mark.slow  # a fresh venv and two editable installs: about half a minute, run by default
def test_a_scaffold_passes_its_own_tests_and_mypy_strict_in_a_fresh_venv(tmp_path):
    """agent-host-core installed editable as the README says (``pip install -e``), then the
    scaffold: its tests pass, and ``mypy --strict .`` from its folder finds ``host`` (no
    ``MYPYPATH``) and reports nothing."""
    started = time.monotonic()
    python = fresh_venv(tmp_path / "venv")
    project = tmp_path / "agent-host-greeter"

    def run(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(python), *args], cwd=cwd, env=environ(), capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    pip = ["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index"]
    run(*pip, "--no-deps", "--no-build-isolation", "-e", str(CHECKOUT))
    run("-m", "host.cli.main", "new-plugin", "greeter")
    run(*pip, "--no-deps", "--no-build-isolation", "-e", str(project))
    tests = run("-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    elapsed = time.monotonic() - started
    assert "6 passed" in tests.stdout
    print(f"scaffold to green tests: {elapsed:.1f} s")
    typed = run("-m", "mypy", "--strict", ".", cwd=project)
    assert typed.stdout.startswith("Success: no issues found in 2 source files"), typed.stdout

    host = ("-m", "host.cli.main", "--data-dir", str(tmp_path / "data"))
    rows = json.loads(run(*host, "plugins", "--json", cwd=project).stdout)
    row = next(r for r in rows if r["name"] == "greeter")
    assert (row["distribution"], row["state"], row["tools"]) == (
        "agent-host-greeter",
        "active",
        ["greeter"],
    )
    answer = run(*host, "run", "--script", "script.json", "Greet Ada.", cwd=project)
    assert answer.stdout.splitlines()[-1] == "Greeted Ada."


def test_the_scaffold_files(tmp_path, capsys):
    assert main(["new-plugin", "my_notes", "--dir", str(tmp_path / "out")]) == 0
    written = {
        str(p.relative_to(tmp_path / "out")): p.read_text()
        for p in (tmp_path / "out").rglob("*")
        if p.is_file()
    }
    assert written == new_plugin.files("my_notes")
    assert set(written) == {
        "pyproject.toml",
        "agent_host_my_notes/__init__.py",
        "agent_host_my_notes/py.typed",
        "tests/test_my_notes.py",
        "script.json",
        "README.md",
    }
    assert 'name = "agent-host-my-notes"' in written["pyproject.toml"]
    assert 'my_notes = "agent_host_my_notes"' in written["pyproject.toml"]
    assert "async def my_notes(who: str) -> str:" in written["agent_host_my_notes/__init__.py"]
    assert os.listdir(tmp_path) == ["out"]  # no staging directory left
    assert capsys.readouterr().out.splitlines() == [
        f"created {tmp_path / 'out'}: plugin my_notes, tool my_notes",
        f'next: cd {tmp_path / "out"} && pip install -e ".[test]" && pytest',
    ]


def test_the_default_directory_and_an_empty_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["new-plugin", "notes"]) == 0
    assert (tmp_path / "agent-host-notes" / "agent_host_notes" / "__init__.py").is_file()
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    assert main(["new-plugin", "notes", "--dir", "."]) == 0
    assert sorted(os.listdir(tmp_path)) == ["agent-host-notes", "empty"]
    assert (tmp_path / "empty" / "pyproject.toml").is_file()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Notes", "use 1 to 64 lowercase letters"),
        ("my-notes", "use 1 to 64 lowercase letters"),
        ("1notes", "use 1 to 64 lowercase letters"),
        ("", "use 1 to 64 lowercase letters"),
        ("n" * 65, "use 1 to 64 lowercase letters"),
        ("class", "use 1 to 64 lowercase letters"),
        ("agents", "a built-in plugin has it"),
        ("register", "the generated code uses it"),
    ],
)
def test_a_bad_name_is_one_line_and_writes_nothing(tmp_path, capsys, name, why):
    assert main(["new-plugin", name, "--dir", str(tmp_path / "out")]) == 2
    assert os.listdir(tmp_path) == []
    err = capsys.readouterr().err
    assert err.startswith(f'agent-host: error: invalid plugin name "{name}": {why}')
    assert err.count("\n") == 1


def test_a_used_target_is_one_line_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("mine")
    for target, why in (("full", "is not empty"), ("file", "exists and is not a directory")):
        assert main(["new-plugin", "notes", "--dir", str(tmp_path / target)]) == 2
        assert capsys.readouterr().err == f"agent-host: error: {tmp_path / target} {why}\n"
    assert sorted(os.listdir(tmp_path)) == ["file", "full"]
    assert os.listdir(tmp_path / "full") == ["notes.txt"]


@in_checkout
def test_the_scaffold_plugin_passes_mypy_strict(tmp_path):
    path = tmp_path / "scaffold_plugin_greeter.py"
    path.write_text(new_plugin.files("greeter")["agent_host_greeter/__init__.py"])
    run = run_mypy(path)
    assert run.messages(path) == [], run.report
