"""write_file and edit_file, called directly (their approval is tested in test_approvals.py):
results, refusals, and nothing half-written."""

from __future__ import annotations

import os

import pytest


def snapshot(tree) -> dict[str, bytes]:
    """Every regular file under the tree (root and outside), by path: what a refusal keeps."""
    files = {}
    for directory, _, names in os.walk(tree.root.parent):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path) and name != "big.txt":
                with open(path, "rb") as file:
                    files[path] = file.read()
    return files


async def test_write_file_creates_and_replaces(tree, workspace):
    h = workspace()
    created = await h.use("write_file", {"path": "docs/new/page.md", "content": "# Title\n"})
    assert (created.text, created.is_error) == ("created docs/new/page.md (8 bytes)", False)
    assert (tree.root / "docs" / "new" / "page.md").read_text() == "# Title\n"
    os.chmod(tree.root / "src" / "app.py", 0o755)
    replaced = await h.use("write_file", {"path": "src/app.py", "content": "é"})
    assert replaced.text == "replaced src/app.py (2 bytes)"
    assert (tree.root / "src" / "app.py").read_text() == "é"
    assert (tree.root / "src" / "app.py").stat().st_mode & 0o777 == 0o755  # its mode kept
    through = await h.use("write_file", {"path": "inside-link.txt", "content": "via link\n"})
    assert through.text == "replaced inside-link.txt (9 bytes)"
    assert (tree.root / "src" / "notes.txt").read_text() == "via link\n"
    assert (tree.root / "inside-link.txt").is_symlink()


@pytest.fixture
def umask_022():
    """The usual umask (group and others lose write) while the test runs."""
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.mark.usefixtures("umask_022")
async def test_permission_bits_are_kept_whatever_the_umask(tree, workspace):
    # A group-writable script stays group-writable; set-user-ID is dropped, as a write by
    # someone other than root drops it.
    script = tree.root / "src" / "app.py"
    os.chmod(script, 0o775)
    h = workspace()
    await h.use("write_file", {"path": "src/app.py", "content": "print(1)\n"})
    assert script.stat().st_mode & 0o7777 == 0o775
    await h.use("edit_file", {"path": "src/app.py", "old": "1", "new": "2"})
    assert script.stat().st_mode & 0o7777 == 0o775
    os.chmod(script, 0o4775)
    await h.use("edit_file", {"path": "src/app.py", "old": "2", "new": "3"})
    assert (script.read_text(), script.stat().st_mode & 0o7777) == ("print(3)\n", 0o775)
    await h.use("write_file", {"path": "fresh.txt", "content": "x"})
    assert (tree.root / "fresh.txt").stat().st_mode & 0o7777 == 0o644  # a new file: the umask's


async def test_edit_file_replaces_one_occurrence_or_all(tree, workspace):
    h = workspace()
    once = await h.use("edit_file", {"path": "src/notes.txt", "old": "second", "new": "2nd"})
    assert (once.text, once.is_error) == ("edited src/notes.txt (1 replacement)", False)
    assert (tree.root / "src" / "notes.txt").read_text() == "first\n2nd needle\nthird\n"
    (tree.root / "twice.txt").write_text("a-a-a")
    every = await h.use(
        "edit_file", {"path": "twice.txt", "old": "a", "new": "b", "replace_all": True}
    )
    assert every.text == "edited twice.txt (3 replacements)"
    assert (tree.root / "twice.txt").read_text() == "b-b-b"


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("edit_file", {"path": "src/notes.txt", "old": "absent", "new": "x"}, "src/notes.txt: old text not found; nothing changed"),
        ("edit_file", {"path": "src/app.py", "old": "e", "new": "E"}, "src/app.py: old text occurs 5 times; give more context to make it unique, or replace_all=true; nothing changed"),
        ("edit_file", {"path": "src/notes.txt", "old": "", "new": "x"}, "old must not be empty; use write_file to write a whole file"),
        ("edit_file", {"path": "src/notes.txt", "old": "first", "new": "first"}, "old and new are the same; nothing to change"),
        ("edit_file", {"path": "image.png", "old": "PNG", "new": "GIF"}, "image.png: is not UTF-8 text; edit_file edits text only"),
        ("edit_file", {"path": "nothing.txt", "old": "a", "new": "b"}, "nothing.txt: no such file"),
        ("edit_file", {"path": "pipe", "old": "a", "new": "b"}, "pipe: is not a regular file; nothing written"),
        ("edit_file", {"path": "secret-link.txt", "old": "needle", "new": "pin"}, 'path "secret-link.txt": leads outside the workspace root through a symbolic link'),
        ("write_file", {"path": "escape/new.txt", "content": "x"}, 'path "escape/new.txt": leads outside the workspace root through a symbolic link'),
        ("write_file", {"path": "../outside/new.txt", "content": "x"}, 'path "../outside/new.txt": ".." is not allowed; name paths inside the root'),
        ("write_file", {"path": "/tmp/elsewhere.txt", "content": "x"}, 'path "/tmp/elsewhere.txt": is outside the workspace root {root}'),
        ("write_file", {"path": "src", "content": "x"}, "src: is not a regular file; nothing written"),
        ("write_file", {"path": "pipe", "content": "x"}, "pipe: is not a regular file; nothing written"),
        ("write_file", {"path": "n\x00ul.txt", "content": "x"}, 'path "n\\x00ul.txt": contains a NUL character'),
    ],
)
async def test_refused_writes_change_nothing(tree, workspace, tool, args, error):
    h = workspace()
    before = snapshot(tree)
    result = await h.use(tool, args)
    assert (result.text, result.is_error) == (error.format(root=tree.root), True)
    assert snapshot(tree) == before
    assert not os.path.exists("/tmp/elsewhere.txt")


async def test_a_write_that_fails_midway_leaves_the_old_file(tree, workspace, monkeypatch):
    h = workspace()
    before = snapshot(tree)

    def full_disk(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    result = await h.use("write_file", {"path": "src/notes.txt", "content": "new text"})
    assert (result.text, result.is_error) == (
        "notes.txt: cannot be written: No space left on device",
        True,
    )
    assert snapshot(tree) == before  # no temporary file left beside it either


async def test_content_larger_than_the_cap_is_refused(tree, workspace):
    h = workspace()
    before = snapshot(tree)
    result = await h.use("write_file", {"path": "huge.txt", "content": "x" * (10 * 1024 * 1024 + 1)})
    assert result.text == "content is larger than 10485760 bytes; nothing written"
    assert snapshot(tree) == before


@pytest.mark.parametrize(
    "args", [{"path": "bad-\udcff.txt", "content": "x"}, {"path": "odd.txt", "content": "\udcff"}]
)
async def test_text_that_is_not_utf8_is_stopped_before_anyone_is_asked(tree, workspace, args):
    # The approval request could not be recorded in the session log: the host runs nothing.
    h = workspace()
    before = snapshot(tree)
    result = await h.use("write_file", args)
    assert result.is_error
    assert result.text.startswith("write_file was not run: cannot encode events of session")
    assert h.approvals.asked == []
    assert snapshot(tree) == before
