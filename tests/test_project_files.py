"""``host.project_files.read_regular`` and ``read_listed``: a regular file of bounded size, or
one line saying why not — with real devices, FIFOs, sockets and links."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from host.project_files import FileRefused, read_regular


def refusal(path: Path, limit: int = 100) -> str:
    with pytest.raises(FileRefused) as caught:
        read_regular(path, limit)
    assert str(caught.value) == f"{path}: {caught.value.reason}"
    return caught.value.reason


def test_a_regular_file_and_a_link_to_one_are_read(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    assert read_regular(tmp_path / "real.json", 100) == b"{}"
    assert read_regular(str(tmp_path / "link.json"), 2) == b"{}"  # exactly the limit
    assert read_regular(tmp_path / "real.json", 0, cut=True) == b"{"


def test_nothing_there_is_none(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    assert read_regular(tmp_path / "missing", 100) is None
    assert read_regular(tmp_path / "dangling", 100) is None
    assert read_regular(tmp_path / "file" / "below", 100) is None


def test_devices_are_refused_without_reading(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").symlink_to("/dev/zero")
    (tmp_path / "random").symlink_to("/dev/urandom")
    assert refusal(tmp_path / ".mcp.json") == (
        "is a character device (a link to /dev/zero), not a regular file"
    )
    assert refusal(tmp_path / "random") == (
        "is a character device (a link to /dev/urandom), not a regular file"
    )
    assert refusal(Path("/dev/null")) == "is a character device, not a regular file"


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    assert refusal(tmp_path / "dir.md") == "is a directory, not a regular file"


@pytest.fixture
def no_writer_fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO nobody writes to: a blocking open of it would wait forever."""
    path = tmp_path / ".mcp.json"
    os.mkfifo(path)
    yield path


def refusal_in_a_thread(path: Path, refuse: Callable[[Path], str] = refusal) -> list[str]:
    """``[refuse(path)]`` from a thread given 30 s: ``[]`` if it is still blocked by then."""
    outcome: list[str] = []
    reader = threading.Thread(target=lambda: outcome.append(refuse(path)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    return outcome


def test_a_fifo_is_refused_and_never_blocks(no_writer_fifo: Path) -> None:
    assert refusal_in_a_thread(no_writer_fifo) == ["is a FIFO, not a regular file"]


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.md"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert refusal(path) == "is a socket, not a regular file"


def test_a_file_over_the_limit_is_refused_unless_cut(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 101)
    assert refusal(path, 100) == "larger than 100 bytes"
    assert read_regular(path, 100, cut=True) == b"x" * 101  # one more: the caller sees the cut
    assert read_regular(path, 10, cut=True) == b"x" * 11


def test_a_file_that_cannot_be_opened_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.toml"
    path.symlink_to(path)
    assert refusal(path) == "cannot be read: Too many levels of symbolic links"


def swapped_after_the_check(monkeypatch: pytest.MonkeyPatch, path: Path, seen: Path) -> None:
    """Make the check before the open see ``seen`` (a regular file) where ``path`` is: as if
    ``path`` were swapped for what it is now right after that check."""
    real = os.stat
    looks = real(seen)

    def stat(target: str | Path, *args: Any, **kwargs: Any) -> os.stat_result:
        return looks if str(target) == str(path) else real(target, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(
    no_writer_fifo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "regular").write_text("{}")
    swapped_after_the_check(monkeypatch, no_writer_fifo, tmp_path / "regular")
    # what was opened is what counts, and opening it did not wait for a writer
    assert refusal_in_a_thread(no_writer_fifo) == ["is a FIFO, not a regular file"]


def opens_recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every ``os.open`` from now on, as (path, flags)."""
    opened: list[tuple[str, int]] = []
    real = os.open

    def record(target: str | Path, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append((os.fspath(target), flags))
        return real(target, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", record)
    return opened


def test_a_fifo_or_device_swapped_in_is_never_opened_for_reading(
    no_writer_fifo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "regular").write_text("{}")
    (tmp_path / "zero").symlink_to("/dev/zero")  # Linux: the open goes through O_PATH
    for swapped in (no_writer_fifo, tmp_path / "zero"):
        swapped_after_the_check(monkeypatch, swapped, tmp_path / "regular")
        opened = opens_recorded(monkeypatch)
        refusal(swapped)
        # only a handle on the name (O_PATH: no open effects), never the FIFO or device itself
        assert opened == [(str(swapped), os.O_PATH | os.O_CLOEXEC)]


def test_a_regular_file_is_opened_with_the_callers_flags(tmp_path: Path) -> None:
    from host.project_files import open_regular

    path = tmp_path / "log.jsonl"
    path.write_bytes(b"one\n")
    fd = open_regular(path, os.O_RDWR | os.O_APPEND)
    assert fd is not None
    try:
        os.write(fd, b"two\n")
        assert os.fstat(fd).st_ino == path.stat().st_ino
    finally:
        os.close(fd)
    assert path.read_bytes() == b"one\ntwo\n"


def listed_refusal(path: Path, limit: int = 100) -> str:
    from host.project_files import read_listed

    with pytest.raises(FileRefused) as caught:
        read_listed(str(path), limit)
    return caught.value.reason


def test_a_listed_regular_file_is_opened_once_and_read_in_one_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from host.project_files import read_listed

    path = tmp_path / "module.py"
    path.write_bytes(b"x" * 100)
    opened = opens_recorded(monkeypatch)
    reads: list[int] = []
    real_read = os.read

    def read(fd: int, size: int) -> bytes:
        reads.append(size)
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", read)
    assert read_listed(str(path), 100) == b"x" * 100  # exactly the limit
    assert [flags & os.O_NOFOLLOW for _, flags in opened] == [os.O_NOFOLLOW]
    assert reads == [101]
    assert read_listed(str(tmp_path / "gone.py"), 100) is None
    assert listed_refusal(path, 99) == "larger than 99 bytes"


def test_a_link_fifo_or_device_swapped_in_for_a_listed_file_is_refused_without_blocking(
    no_writer_fifo: Path, tmp_path: Path
) -> None:
    (tmp_path / "real.py").write_text("x")
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")  # never followed, even to a file
    assert listed_refusal(tmp_path / "link.py") == "is a symbolic link, not a regular file"
    assert listed_refusal(Path("/dev/null")) == "is a character device, not a regular file"
    (tmp_path / "dir.py").mkdir()
    assert listed_refusal(tmp_path / "dir.py") == "is a directory, not a regular file"
    assert refusal_in_a_thread(no_writer_fifo, listed_refusal) == ["is a FIFO, not a regular file"]
