"""A workspace root that is missing or not a directory: every tool says so, in one line, and
changes nothing."""

from __future__ import annotations

import shutil

import pytest

CALLS = [
    ("read_file", {"path": "a.txt"}),
    ("list_files", {"glob": "*"}),
    ("grep", {"pattern": "x"}),
    ("write_file", {"path": "a.txt", "content": "x"}),
    ("edit_file", {"path": "a.txt", "old": "x", "new": "y"}),
    ("run_command", {"command": "ls"}),
]
ENGINES = ["python", *(["rg"] if shutil.which("rg") else [])]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("tool", "args"), CALLS)
async def test_a_missing_root_is_named_by_every_tool(tree, workspace, engine, tool, args):
    missing = tree.root / "absent"
    h = workspace(engine, root=str(missing))
    result = await h.use(tool, args)
    assert (result.text, result.is_error) == (f"workspace root {missing} does not exist", True)
    assert not missing.exists()  # write_file did not make it


@pytest.mark.parametrize(("tool", "args"), CALLS)
async def test_a_root_that_is_a_file_is_refused(tree, workspace, tool, args):
    h = workspace(root=str(tree.root / "src" / "notes.txt"))
    result = await h.use(tool, args)
    assert (result.text, result.is_error) == (
        f"workspace root {tree.root}/src/notes.txt is not a directory",
        True,
    )


async def test_a_root_removed_after_its_first_use_is_refused(tree, workspace):
    later = tree.root / "later"
    later.mkdir()
    (later / "a.txt").write_text("x\n")
    h = workspace(root=str(later))
    assert (await h.use("list_files", {"glob": "*"})).text == "a.txt"
    shutil.rmtree(later)
    result = await h.use("list_files", {"glob": "*"})
    assert (result.text, result.is_error) == (f"workspace root {later} does not exist", True)
    made = await h.use("write_file", {"path": "a.txt", "content": "x"})
    assert made.text == f"workspace root {later} does not exist"
    assert not later.exists()
