"""Trust for project-defined MCP servers: per project, per definition, in an atomic 0600 file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from agent_host_mcp.config import ServerSpec, load_servers
from agent_host_mcp.trust import (
    TrustStore,
    TrustStoreError,
    default_trust_path,
    untrusted_reason,
)


def project_spec(name: str = "srv", command: str = "c") -> ServerSpec:
    return ServerSpec(name=name, transport="stdio", command=command, project=True)


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "home" / "mcp-trust.json")


def test_untrusted_reason_text():
    assert untrusted_reason("git") == 'not trusted: run "agent-host mcp trust git"'


def test_default_path_honours_agent_host_home_then_home():
    assert default_trust_path({"AGENT_HOST_HOME": "/h", "HOME": "/u"}) == Path("/h/mcp-trust.json")
    assert default_trust_path({"HOME": "/u"}) == Path("/u/.agent-host/mcp-trust.json")
    assert default_trust_path({}) == Path.home() / ".agent-host" / "mcp-trust.json"


def test_user_defined_servers_are_always_trusted(store, tmp_path):
    spec = ServerSpec(name="srv", transport="stdio", command="c", project=False)
    assert store.is_trusted(tmp_path, spec)
    assert not store.path.exists()


def test_cloned_project_mcp_json_starts_nothing_until_trusted_and_again_after_an_edit(
    store, tmp_path
):
    project = tmp_path / "cloned"
    project.mkdir()
    mcp_json = project / ".mcp.json"

    def write(args: list[str]) -> ServerSpec:
        mcp_json.write_text(json.dumps({"mcpServers": {"tool": {"command": "run", "args": args}}}))
        found = load_servers({}, mcp_json, {}, toml_project=True, mcp_json_project=True)
        [spec] = found.specs
        assert spec.project
        return spec

    spec = write(["--safe"])
    assert not store.is_trusted(project, spec)

    store.trust(project, spec)
    assert store.is_trusted(project, spec)
    assert store.is_trusted(project, write(["--safe"]))  # re-read, same definition
    assert not store.is_trusted(tmp_path / "elsewhere", spec)  # keyed by the project

    edited = write(["--safe", "--and-something-else"])
    assert not store.is_trusted(project, edited)
    store.trust(project, edited)
    assert store.is_trusted(project, edited)
    assert not store.is_trusted(project, spec)


def test_project_key_is_the_resolved_path(store, tmp_path):
    (tmp_path / "p").mkdir()
    spec = project_spec()
    store.trust(tmp_path / "p" / ".." / "p", spec)
    assert store.is_trusted(tmp_path / "p", spec)
    data = json.loads(store.path.read_text())
    assert data == {
        "version": 1,
        "projects": {str((tmp_path / "p").resolve()): {"srv": spec.fingerprint()}},
    }


def test_untrust(store, tmp_path):
    first, second = project_spec("a"), project_spec("b")
    store.trust(tmp_path, first)
    store.trust(tmp_path, second)
    assert store.untrust(tmp_path, "a") is True
    assert not store.is_trusted(tmp_path, first)
    assert store.is_trusted(tmp_path, second)
    assert store.untrust(tmp_path, "a") is False
    assert store.untrust(tmp_path, "b") is True
    assert json.loads(store.path.read_text()) == {"version": 1, "projects": {}}


def test_untrust_with_no_store_is_false_and_writes_nothing(store, tmp_path):
    assert store.untrust(tmp_path, "a") is False
    assert not store.path.exists()


def test_store_is_private_and_written_atomically(store, tmp_path, monkeypatch):
    store.trust(tmp_path, project_spec("a"))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    before = store.path.read_text()

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(TrustStoreError) as caught:
        store.trust(tmp_path, project_spec("b"))
    assert str(caught.value) == (
        f"MCP trust store {store.path}: cannot write it (No space left on device)"
    )
    assert store.path.read_text() == before  # untouched
    assert os.listdir(store.path.parent) == [store.path.name]  # no temporary file left


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "not valid JSON (Expecting property name enclosed in double quotes, line 1)"),
        ("[]", 'expected {"version": 1, "projects": {...}}'),
        ('{"version": 2, "projects": {}}', 'expected {"version": 1, "projects": {...}}'),
        (
            '{"version": 1, "projects": {"/p": {"a": 1}}}',
            'expected {"version": 1, "projects": {...}}',
        ),
        ('{"version": 1, "projects": {"/p": []}}', 'expected {"version": 1, "projects": {...}}'),
    ],
)
def test_corrupt_store_trusts_nothing_and_refuses_writes_in_one_line(store, tmp_path, text, why):
    store.path.parent.mkdir(parents=True)
    store.path.write_text(text)
    spec = project_spec()
    assert store.is_trusted(tmp_path, spec) is False
    expected = f"MCP trust store {store.path}: {why}; fix or delete the file"
    for write in (lambda: store.trust(tmp_path, spec), lambda: store.untrust(tmp_path, "srv")):
        with pytest.raises(TrustStoreError) as caught:
            write()
        assert str(caught.value) == expected
    assert store.path.read_text() == text  # left for the user to look at


def test_unreadable_store_trusts_nothing(store, tmp_path):
    store.path.mkdir(parents=True)  # a directory where the file should be
    assert store.is_trusted(tmp_path, project_spec()) is False
    with pytest.raises(TrustStoreError) as caught:
        store.trust(tmp_path, project_spec())
    assert str(caught.value).startswith(f"MCP trust store {store.path}: cannot read it (")
