"""The README's Python examples import or define every name they use."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def undefined_names(source: str) -> set[str]:
    """Names a block reads that it neither imports, defines, binds nor gets from builtins."""
    tree = ast.parse(source)
    bound: set[str] = set(dir(builtins))
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    return read - bound


def test_there_are_examples() -> None:
    assert len(python_blocks()) >= 4


def test_every_example_imports_what_it_uses() -> None:
    for block in python_blocks():
        assert undefined_names(block) == set(), block


def test_the_check_sees_a_missing_import() -> None:
    assert undefined_names("async def t(h):\n    h.run(call('x'), say('y'))\n") == {
        "call",
        "say",
    }
