"""read_file and list_files over a real tree: results, limits and refusals."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest
from agent_host_workspace.paths import Root
from agent_host_workspace.reading import read_lines


async def test_read_file_numbers_lines_and_says_how_to_read_on(tree, workspace):
    h = workspace()
    whole = await h.call("read_file", {"path": "src/notes.txt"})
    assert (whole.text, whole.is_error) == ("     1\tfirst\n     2\tsecond needle\n     3\tthird", False)
    window = await h.call("read_file", {"path": "src/notes.txt", "offset": 2, "limit": 1})
    assert window.text == (
        "     2\tsecond needle\n(src/notes.txt continues after line 2; read on with offset=3)"
    )
    beyond = await h.call("read_file", {"path": "src/notes.txt", "offset": 9})
    assert beyond.text == "(src/notes.txt has 3 lines; nothing at offset 9)"
    (tree.root / "unended.txt").write_text("a\nb")
    last = await h.call("read_file", {"path": "unended.txt", "offset": 2})
    assert last.text == "     2\tb"
    after = await h.call("read_file", {"path": "unended.txt", "offset": 4})
    assert after.text == "(unended.txt has 2 lines; nothing at offset 4)"
    (tree.root / "empty.txt").write_text("")
    empty = await h.call("read_file", {"path": "empty.txt"})
    assert empty.text == "(empty.txt has 0 lines; nothing at offset 1)"
    linked = await h.call("read_file", {"path": "inside-link.txt"})  # a link inside the root
    assert linked.text == whole.text


async def test_a_50_mb_file_is_read_a_window_at_a_time(tree, workspace):
    h = workspace()
    head = await h.call("read_file", {"path": "big.txt"})
    lines = head.text.splitlines()
    assert len(lines) == 2001 and lines[0] == "     1\t" + "x" * 99
    assert lines[-1] == "(big.txt continues after line 2000; read on with offset=2001)"
    assert len(head.text) < 256 * 1024
    tail = await h.call("read_file", {"path": "big.txt", "offset": 524_288, "limit": 5})
    assert tail.text == f"524288\t{'x' * 99}"  # the last line of the file


async def test_a_long_line_is_cut_and_the_output_capped(tree, workspace):
    (tree.root / "wide.txt").write_text(("y" * 3000 + "\n") * 200)
    h = workspace()
    result = await h.call("read_file", {"path": "wide.txt"})
    lines = result.text.splitlines()
    assert lines[0] == "     1\t" + "y" * 2000 + " … (line cut at 2000 characters)"
    assert lines[-1] == f"(wide.txt continues after line {len(lines) - 1}; read on with offset={len(lines)})"
    body = result.text.rpartition("\n")[0]  # the lines, without the note after them
    assert len(body.encode()) + 1 <= 256 * 1024  # the last line shown fits under the cap too


async def test_the_256_kib_cap_counts_bytes(tree, workspace):
    # 2000 two-byte characters a line: 4042 bytes a numbered line (newline included), so 64
    # lines fit in 256 KiB, where counting characters would let about 130 (over 500 KiB) out.
    (tree.root / "accents.txt").write_text(("é" * 2500 + "\n") * 100)
    h = workspace()
    result = await h.call("read_file", {"path": "accents.txt"})
    lines = result.text.split("\n")
    assert lines[0] == "     1\t" + "é" * 2000 + " … (line cut at 2000 characters)"
    assert lines[64:] == ["(accents.txt continues after line 64; read on with offset=65)"]


async def test_a_line_without_end_is_cut_and_the_lines_after_it_read(tree, workspace):
    # The third line: 2000 four-byte characters, then carriage returns: not cut.
    (tree.root / "one.txt").write_bytes(b"z" * (3 << 20) + b"\r\nnext\n" + "😀".encode() * 2000 + b"\r\r\r\n")
    h = workspace()
    result = await h.call("read_file", {"path": "one.txt"})
    assert result.text == (
        f"     1\t{'z' * 2000} … (line cut at 2000 characters)\n     2\tnext\n     3\t{'😀' * 2000}"
    )
    after = await h.call("read_file", {"path": "one.txt", "offset": 2, "limit": 1})
    assert after.text == "     2\tnext\n(one.txt continues after line 2; read on with offset=3)"


@pytest.mark.parametrize("offset", [1, 2])
def test_a_line_without_end_is_never_held_whole(tmp_path, offset):
    # 32 MB without a newline, then one more line: what read_file holds stays far below the
    # line's size, whether the line is shown (cut) or skipped on the way to the offset.
    (tmp_path / "flat.txt").write_bytes(b"q" * (32 << 20) + b"\nlast\n")
    tracemalloc.start()
    try:
        text = read_lines(Root(tmp_path), "flat.txt", offset, 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    shown = f"     1\t{'q' * 2000} … (line cut at 2000 characters)" if offset == 1 else "     2\tlast"
    assert text.split("\n")[0] == shown
    assert peak < 1 << 20


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("../outside/secret.txt", 'path "../outside/secret.txt": ".." is not allowed; name paths inside the root'),
        ("src/../../outside/secret.txt", 'path "src/../../outside/secret.txt": ".." is not allowed; name paths inside the root'),
        ("secret-link.txt", 'path "secret-link.txt": leads outside the workspace root through a symbolic link'),
        ("escape/secret.txt", 'path "escape/secret.txt": leads outside the workspace root through a symbolic link'),
        ("pipe", "pipe: is a FIFO, not a regular file"),
        ("src", "src: is a directory, not a regular file"),
        ("image.png", "image.png: is a binary file; read_file shows text only"),
        ("missing.txt", "missing.txt: no such file"),
        ("src/notes\x00.txt", 'path "src/notes\\x00.txt": contains a NUL character'),
        ("bad-\udcff.txt", 'path "bad-\\udcff.txt": is not valid UTF-8'),
    ],
)
async def test_read_file_refusals_are_one_line(tree, workspace, path, error):
    h = workspace()
    result = await h.call("read_file", {"path": path})
    assert (result.text, result.is_error) == (error, True)


async def test_an_absolute_path_is_refused_outside_the_root_and_taken_inside_it(tree, workspace):
    h = workspace()
    outside = await h.call("read_file", {"path": str(tree.outside / "secret.txt")})
    assert outside.text == (
        f'path "{tree.outside}/secret.txt": is outside the workspace root {tree.root}'
    )
    inside = await h.call("read_file", {"path": str(tree.root / "src" / "notes.txt"), "limit": 1})
    assert inside.text.startswith("     1\tfirst")


async def test_a_fifo_is_never_opened(tree, workspace):
    # A FIFO opened for reading would block until a writer came: the call returns at once.
    h = workspace()
    result = await h.call("read_file", {"path": "pipe"})
    assert result.is_error


async def test_list_files_honours_nested_gitignores_newest_first(tree, workspace):
    old = time.time() - 100
    os.utime(tree.root / "src" / "app.py", (old, old))
    h = workspace()
    result = await h.call("list_files", {"glob": "*"})
    listed = result.text.splitlines()
    assert sorted(listed) == [
        ".gitignore", "big.txt", "image.png", "src/.gitignore", "src/app.py", "src/keep.log",
        "src/notes.txt",
    ]  # fmt: skip
    assert listed[-1] == "src/app.py"  # the oldest last
    python = await h.call("list_files", {"glob": "*.py"})
    assert python.text == "src/app.py"  # src/gen/ is ignored, build/ too; links are not followed
    under = await h.call("list_files", {"glob": "*.txt", "path": "src"})
    assert under.text == "src/notes.txt"
    none = await h.call("list_files", {"glob": "*.rs"})
    assert (none.text, none.is_error) == ("no files match '*.rs'", False)


async def test_list_files_shows_the_100_newest(tree, workspace):
    many = tree.root / "many"
    many.mkdir()
    for number in range(150):
        (many / f"f{number:03}.md").write_text("")
        os.utime(many / f"f{number:03}.md", (number, number))
    h = workspace()
    result = await h.call("list_files", {"glob": "many/*.md"})
    lines = result.text.splitlines()
    assert lines[0] == "many/f149.md" and lines[99] == "many/f050.md"
    assert lines[100:] == ["(150 files match; the 100 newest are shown)"]


async def test_a_glob_matching_100000_files_is_refused_with_the_cap(crowd, workspace):
    h = workspace(root=str(crowd))
    result = await h.call("list_files", {"glob": "*.txt"})
    assert (result.text, result.is_error) == (
        "more than 10000 files match '*.txt'; narrow the glob or the path",
        True,
    )
    assert sum(len(os.listdir(folder)) for folder in crowd.iterdir()) == 100_000


async def test_list_files_refuses_paths_out_of_the_root(tree, workspace):
    h = workspace()
    result = await h.call("list_files", {"glob": "*", "path": "escape"})
    assert result.text == 'path "escape": leads outside the workspace root through a symbolic link'
    file = await h.call("list_files", {"glob": "*", "path": "big.txt"})
    assert file.text == "big.txt: is not a directory"


async def test_list_files_refuses_a_glob_that_is_not_one(tree, workspace):
    h = workspace()
    for glob, error in [
        ("", "invalid glob '': empty"),
        ("a\x00b", "invalid glob 'a\\x00b': contains a NUL character"),
        ("[abc", "invalid glob '[abc': unclosed character class; missing ']'"),
    ]:
        result = await h.call("list_files", {"glob": glob})
        assert (result.text, result.is_error) == (error, True)


async def test_list_files_with_a_glob_starting_with_an_exclamation_mark_lists_the_rest(
    tree, workspace
):
    h = workspace()
    result = await h.call("list_files", {"glob": "!*.log"})
    assert sorted(result.text.splitlines()) == [
        ".gitignore", "big.txt", "image.png", "src/.gitignore", "src/app.py", "src/notes.txt",
    ]  # fmt: skip
    under = await h.call("list_files", {"glob": "!*.py", "path": "src"})
    assert sorted(under.text.splitlines()) == ["src/.gitignore", "src/keep.log", "src/notes.txt"]
