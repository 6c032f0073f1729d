"""``grep``: lines matching a regular expression, by ``rg`` when installed, else in Python.

Both give the same text: ``path:line:text`` for a matching line, ``path-line-text`` for a
context line, ``--`` between groups that are not adjacent (with context), files in ``rg
--sort path`` order, paths relative to the root. Both walk as ``walk`` does (``.gitignore``
honoured, hidden files searched, ``.git``, symbolic links, binary files — a NUL byte — and
files larger than ``MAX_FILE_BYTES`` skipped); ``glob`` chooses the files as ``rg --glob``
does: a file matching it is searched even if ``.gitignore`` excludes it.
The pattern is checked as a Python regular expression first (an invalid one is one error
line); ``rg`` runs it with its own engine, which lacks look-around and back-references.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from agent_host_workspace.base import Refused
from agent_host_workspace.paths import Root
from agent_host_workspace.walk import Select, Stop, compile_glob, walk
from host.api import FileRefused, read_listed, read_regular

MAX_LINES = 250
MAX_LINE_CHARS = 500
MAX_CONTEXT = 10
MAX_FILE_BYTES = 20 * 1024 * 1024
RG_FLAGS = (
    "--no-config", "--no-heading", "--with-filename", "--line-number", "--color=never",
    "--sort=path", "--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-exclude",
    "--no-ignore-global", "--no-messages", "--glob=!.git", "--max-filesize=20M",
)  # fmt: skip
_BINARY_NOTE = re.compile(r": binary file matches \(found .* byte around offset \d+\)$")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled; ``Refused`` with the reason when it is not a valid regex."""
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as error:
        raise Refused(f"invalid regular expression {pattern!r}: {error}") from None


def check_context(context: int) -> None:
    """``Refused`` unless ``0 <= context <= MAX_CONTEXT``."""
    if not 0 <= context <= MAX_CONTEXT:
        raise Refused(f"context must be between 0 and {MAX_CONTEXT} lines")


def python_grep(
    root: Root, start: Path, regex: re.Pattern[str], glob: str | None, context: int, stop: Stop
) -> tuple[list[str], bool]:
    """The output lines (at most ``MAX_LINES``) and whether there were more, in Python."""
    select = Select(glob, str(root.path)) if glob else None
    read: Callable[[str, int], bytes | None] = read_listed  # walked: listed as regular files
    if start.is_file():
        files: Iterable[str] = [str(start)]
        read = read_regular  # a path the tool was given, resolved inside the root
    else:
        files = walk(str(start), stop, select)
    prefilter = "\\A" not in regex.pattern and "\\Z" not in regex.pattern
    out: list[str] = []
    for file in files:
        text = _text(file, read)
        if text is None or (prefilter and regex.search(text) is None):
            continue
        relative = root.relative(file)
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        found = _file_lines(relative, lines, regex, context)
        if found and out and context:
            out.append("--")
        out += found
        if len(out) > MAX_LINES:
            return out[:MAX_LINES], True
    return out, False


def _text(file: str, read: Callable[[str, int], bytes | None]) -> str | None:
    """The file's text (``read`` reads it), or None when it is not searched (binary, too
    large, unreadable)."""
    try:
        data = read(file, MAX_FILE_BYTES)
    except FileRefused:
        return None
    if data is None or b"\x00" in data:
        return None
    return data.decode("utf-8", "replace")


def _file_lines(relative: str, lines: list[str], regex: re.Pattern[str], context: int) -> list[str]:
    out: list[str] = []
    last = -1
    for hit in (i for i, line in enumerate(lines) if regex.search(line)):
        low, high = max(0, hit - context), min(len(lines) - 1, hit + context)
        if context and last >= 0 and low > last + 1:
            out.append("--")
        for i in range(max(low, last + 1), high + 1):
            mark = ":" if i == hit or regex.search(lines[i]) else "-"
            out.append(cut(f"{relative}{mark}{i + 1}{mark}{lines[i]}"))
        last = max(last, high)
    return out


async def rg_grep(
    rg: str, root: Root, start: Path, pattern: str, glob: str | None, context: int
) -> tuple[list[str], bool]:
    """The output lines (at most ``MAX_LINES``) and whether there were more, by ``rg``."""
    where = root.relative(start)
    arguments = [*RG_FLAGS, f"--context={context}"]
    if glob:
        arguments.append(f"--glob={glob}")
    process = await asyncio.create_subprocess_exec(
        rg, *arguments, "--regexp", pattern, "--", where if where != "." else "./",
        cwd=root.path, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        limit=2 * MAX_FILE_BYTES,  # a line of output: a whole file, at most, and its path
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    out: list[str] = []
    try:
        async for raw in process.stdout:
            line = raw.decode("utf-8", "replace").removesuffix("\n")
            if _BINARY_NOTE.search(line):
                continue
            out.append(cut(line.removeprefix("./")))
            if len(out) > MAX_LINES:
                return out[:MAX_LINES], True
        errors = await process.stderr.read()
        if await process.wait() == 2 and not out:
            lines = errors.decode("utf-8", "replace").strip().splitlines() or ["failed"]
            reason = next((line for line in lines if line.startswith("error: ")), lines[-1])
            raise Refused(f"rg cannot run pattern {pattern!r}: {reason.removeprefix('error: ')}")
        return out, False
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def grep(
    root: Root, rg: str | None, pattern: str, path: str | None, glob: str | None, context: int
) -> str:
    """The tool's text: the matching lines (``rg`` when ``rg`` is its path), cut to
    ``MAX_LINES`` lines of at most ``MAX_LINE_CHARS`` characters."""
    regex = compile_pattern(pattern)
    check_context(context)
    if glob is not None:
        compile_glob(glob)
    start = root.resolve(path or ".")
    if not start.exists():
        raise Refused(f"{path}: no such file or directory")
    if rg is not None:
        lines, more = await rg_grep(rg, root, start, pattern, glob, context)
    else:
        stop = threading.Event()
        try:
            lines, more = await asyncio.to_thread(
                python_grep, root, start, regex, glob, context, stop.is_set
            )
        finally:
            stop.set()
    return render(lines, more)


def cut(line: str) -> str:
    """``line`` as shown: at most ``MAX_LINE_CHARS`` characters, then `` … (line cut)``. Each
    engine cuts a line as it finds it, so a file of long lines is never held whole in the
    output."""
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " … (line cut)"


def render(lines: list[str], more: bool) -> str:
    """The output (its lines already ``cut``), a note when there was more, ``no matches`` for
    nothing."""
    if not lines:
        return "no matches"
    shown = list(lines)
    if more:
        shown.append(f"(output cut at {MAX_LINES} lines; narrow the pattern, the path or the glob)")
    return "\n".join(shown)
