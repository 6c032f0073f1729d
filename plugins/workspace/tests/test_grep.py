"""grep over a real tree, by the Python fallback always and by rg when it is installed: the
same text both ways."""

from __future__ import annotations

import re
import shutil
import tracemalloc

from agent_host_workspace.paths import Root
from agent_host_workspace.search import MAX_LINE_CHARS, python_grep

ENGINES = ["python", *(["rg"] if shutil.which("rg") else [])]
"""How grep runs here: the Python fallback always, rg as well when it is installed."""


async def grep_all(workspace, **args) -> str:
    """grep's text, checked to be the same by every engine."""
    texts = []
    for engine in ENGINES:
        result = await workspace(engine).call("grep", args)
        assert not result.is_error, (engine, result.text)
        texts.append(result.text)
    assert texts == [texts[0]] * len(ENGINES), dict(zip(ENGINES, texts, strict=True))
    return texts[0]


async def test_matches_honour_nested_gitignores_and_skip_binaries_links_and_big_files(
    tree, workspace
):
    # debug.log, build/ and src/gen/ are ignored (src/keep.log is re-included); image.png is
    # binary; escape/ and secret-link.txt lead out of the root and are not followed.
    assert await grep_all(workspace, pattern="needle") == (
        "src/app.py:4:    return 'needle'\n"
        "src/keep.log:1:needle kept\n"
        "src/notes.txt:2:second needle"
    )


async def test_context_lines_and_separators(tree, workspace):
    (tree.root / "src" / "long.md").write_text("".join(f"line {n}\n" for n in range(1, 13)))
    text = await grep_all(workspace, pattern="line (2|9)$", path="src", context=1)
    assert text == (
        "src/long.md-1-line 1\n"
        "src/long.md:2:line 2\n"
        "src/long.md-3-line 3\n"
        "--\n"
        "src/long.md-8-line 8\n"
        "src/long.md:9:line 9\n"
        "src/long.md-10-line 10"
    )


async def test_glob_chooses_files_as_rg_does(tree, workspace):
    assert await grep_all(workspace, pattern="needle", glob="*.py") == (
        "src/app.py:4:    return 'needle'"
    )  # src/gen/ stays ignored: the glob chooses files, not ignored folders
    assert await grep_all(workspace, pattern="needle", glob="*.log") == (
        "debug.log:1:needle ignored\nsrc/keep.log:1:needle kept"
    )  # as with rg --glob, a file the glob names is searched though .gitignore excludes it


async def test_paths_sort_as_rg_sorts_them(tree, workspace):
    (tree.root / "a").mkdir()
    (tree.root / "a" / "b.txt").write_text("hit\n")
    (tree.root / "a.txt").write_text("hit\n")
    (tree.root / "a.d").mkdir()
    (tree.root / "a.d" / "c.txt").write_text("hit\n")
    assert await grep_all(workspace, pattern="hit") == (
        "a/b.txt:1:hit\na.d/c.txt:1:hit\na.txt:1:hit"
    )


async def test_nothing_found_and_the_output_cap(tree, workspace):
    assert await grep_all(workspace, pattern="absent words") == "no matches"
    (tree.root / "many.txt").write_text("hit\n" * 400 + "hit " + "z" * 900 + "\n")
    text = await grep_all(workspace, pattern="hit", path="many.txt")
    lines = text.splitlines()
    assert len(lines) == 251 and lines[0] == "many.txt:1:hit"
    assert lines[-1] == "(output cut at 250 lines; narrow the pattern, the path or the glob)"
    wide = await grep_all(workspace, pattern="z{900}", path="many.txt")
    assert wide == "many.txt:401:hit " + "z" * (500 - len("many.txt:401:hit ")) + " … (line cut)"


async def test_bad_input_is_one_error_line(tree, workspace):
    for engine in ENGINES:
        h = workspace(engine)
        for args, error in [
            ({"pattern": "("}, "invalid regular expression '(': missing ), unterminated subpattern at position 0"),
            ({"pattern": "x", "path": "../outside"}, 'path "../outside": ".." is not allowed; name paths inside the root'),
            ({"pattern": "x", "path": "escape"}, 'path "escape": leads outside the workspace root through a symbolic link'),
            ({"pattern": "x", "path": "nowhere"}, "nowhere: no such file or directory"),
            ({"pattern": "x", "path": "a\x00b"}, 'path "a\\x00b": contains a NUL character'),
            ({"pattern": "x", "context": 11}, "context must be between 0 and 10 lines"),
            ({"pattern": "x", "glob": "src/[ab"}, "invalid glob 'src/[ab': unclosed character class; missing ']'"),
            ({"pattern": "x", "glob": "!"}, "invalid glob '!': Invalid git pattern: '!'"),
        ]:
            result = await h.call("grep", args)
            assert (result.text, result.is_error) == (error, True), engine


async def test_rg_says_which_patterns_it_cannot_run(tree, workspace):
    if "rg" not in ENGINES:  # without rg the fallback runs every Python pattern
        result = await workspace("python").call("grep", {"pattern": "(?<=second )needle"})
        assert result.text == "src/notes.txt:2:second needle"
        return
    result = await workspace("rg").call("grep", {"pattern": "(?<=second )needle"})
    assert (result.text, result.is_error) == (
        "rg cannot run pattern '(?<=second )needle': look-around, including look-ahead and "
        "look-behind, is not supported",
        True,
    )


TRICKY_IGNORE = """# a comment, then a blank line

*.gen
!keep.gen
/top-only.txt
docs/**/draft*
cache/
[(?P<ps_d>]x.txt
"""


async def test_each_gitignore_rule_kind_is_honoured_alike_by_both_engines(tree, workspace):
    from agent_host_workspace.walk import Rule
    from pathspec import GitIgnoreSpec

    base = tree.root / "rules"
    for name in (
        "a.gen", "keep.gen", "top-only.txt", "sub/top-only.txt", "docs/a/b/draft1.md",
        "docs/final.md", "cache/c.txt", "sub/cache", "(x.txt", "Px.txt", "zx.txt",
    ):  # fmt: skip
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text("needle\n")
    (base / ".gitignore").write_text(TRICKY_IGNORE)
    assert await grep_all(workspace, pattern="needle", path="rules") == (
        "rules/docs/final.md:1:needle\n"
        "rules/keep.gen:1:needle\n"
        "rules/sub/cache:1:needle\n"
        "rules/sub/top-only.txt:1:needle\n"
        "rules/zx.txt:1:needle"
    )
    # the patterns are joined into one expression, tried before the spec itself
    assert Rule("/", GitIgnoreSpec.from_lines(TRICKY_IGNORE.splitlines())).quick is not None


async def test_a_glob_starting_with_an_exclamation_mark_excludes_what_it_matches(tree, workspace):
    # rg's rule: "!glob" searches every file but those glob matches, .gitignore still
    # applying to the rest (src/keep.log, which .gitignore re-includes, is excluded here).
    assert await grep_all(workspace, pattern="needle", glob="!*.log") == (
        "src/app.py:4:    return 'needle'\n"
        "src/notes.txt:2:second needle"
    )
    assert await grep_all(workspace, pattern="needle", glob="!app.py") == (
        "src/keep.log:1:needle kept\n"
        "src/notes.txt:2:second needle"
    )
    assert await grep_all(workspace, pattern="needle", glob="!src") == "no matches"


def test_the_python_engine_never_holds_a_long_matching_line_whole(tmp_path):
    # 30 files of one 1 MB matching line: kept whole until the end, the output alone held 30 MB
    for n in range(30):
        (tmp_path / f"min{n:02}.js").write_text("needle" + "x" * 1_000_000)
    root = Root(tmp_path)
    tracemalloc.start()
    try:
        lines, more = python_grep(root, tmp_path, re.compile("needle"), None, 0, lambda: False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not more and len(lines) == 30
    assert lines[0] == "min00.js:1:needle" + "x" * (MAX_LINE_CHARS - 17) + " … (line cut)"
    assert peak < 8_000_000  # one file's bytes and text at a time, not 30 lines of 1 MB
