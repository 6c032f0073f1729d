"""The real workspace tree the tests work in (``tree``), and harnesses over it (``workspace``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import agent_host_subagent
import agent_host_workspace
import attrs
import pytest

from host.testing import Answer, HostHarness, MakeHarness
from host.tools import ToolResult

BIG_BYTES = 50 * 1024 * 1024
CROWD = 100_000
MEMORY_FILE_SYSTEM = Path("/dev/shm")
PLUGIN = ("workspace", agent_host_workspace)


@attrs.frozen
class Tree:
    """The root of a workspace and a directory beside it (outside the root)."""

    root: Path
    outside: Path


def make_tree(base: Path, big: Path) -> Tree:
    """A workspace with a nested ``.gitignore``, a binary file, a 50 MB file (a hard link to
    ``big``), links leading out of the root, a FIFO, and a secret file outside it."""
    root, outside = base / "root", base / "outside"
    (root / "src" / "gen").mkdir(parents=True)
    (root / "build").mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src" / ".gitignore").write_text("gen/\n!keep.log\n")
    (root / "src" / "app.py").write_text("import os\n\ndef main():\n    return 'needle'\n")
    (root / "src" / "notes.txt").write_text("first\nsecond needle\nthird\n")
    (root / "src" / "keep.log").write_text("needle kept\n")
    (root / "src" / "gen" / "out.py").write_text("needle generated\n")
    (root / "build" / "app.bin").write_text("needle built\n")
    (root / "debug.log").write_text("needle ignored\n")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00needle\x00")
    os.link(big, root / "big.txt")
    (root / "escape").symlink_to(outside)
    (root / "secret-link.txt").symlink_to(outside / "secret.txt")
    (root / "inside-link.txt").symlink_to("src/notes.txt")
    os.mkfifo(root / "pipe")
    return Tree(root, outside)


@pytest.fixture(scope="session")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """50 MB of 100-character lines, written once for every tree of the session."""
    path = tmp_path_factory.mktemp("big") / "big.txt"
    line = b"x" * 99 + b"\n"
    path.write_bytes(line * (BIG_BYTES // len(line)))
    return path


@pytest.fixture(scope="session")
def crowd() -> Iterator[Path]:
    """A directory of ``CROWD`` empty ``.txt`` files in ten folders, made once per session: in
    memory (``/dev/shm``) where there is such a file system — about 1 s to make and 1 s to
    remove here, against about 35 s on this machine's disk."""
    where = MEMORY_FILE_SYSTEM if os.access(MEMORY_FILE_SYSTEM, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="crowd-", dir=where) as directory:
        base = Path(directory)
        for folder in range(10):
            (base / f"f{folder}").mkdir()
            fd = os.open(base / f"f{folder}", os.O_RDONLY | os.O_DIRECTORY)
            try:
                for number in range(CROWD // 10):
                    os.close(os.open(f"{number}.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
            finally:
                os.close(fd)
        yield base


@pytest.fixture
def tree(tmp_path: Path, big_file: Path) -> Tree:
    """A fresh workspace tree (``make_tree``)."""
    return make_tree(tmp_path / "tree", big_file)


class WorkspaceHarness(HostHarness):
    """A harness whose user approves every call (unless told otherwise: ``approvals``)."""

    async def use(self, name: str, args: dict[str, object]) -> ToolResult:
        """Run the global tool ``name`` as a root agent would, asking the user when it must."""
        return await self.call(name, args, agent=await self.root())


@pytest.fixture
def workspace(tree: Tree, make_harness: MakeHarness):
    """Make a harness with the workspace plugin over ``tree`` (``grep`` by ``engine``: ``rg``
    or ``python``), the delegation plugin with it when ``delegation``, and ``others``."""

    def make(
        engine: str = "python",
        delegation: bool = False,
        others: tuple[tuple[str, object], ...] = (),
        **keys: object,
    ) -> WorkspaceHarness:
        plugins = [PLUGIN, *([("subagent", agent_host_subagent)] if delegation else []), *others]
        settings = {"root": str(tree.root), "ripgrep": engine == "rg", **keys}
        made = make_harness(
            *plugins, cls=WorkspaceHarness, config={"plugins": {"workspace": settings}}
        )
        made.approvals.answer(Answer.approve())
        return made

    return make
