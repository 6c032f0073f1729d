#!/usr/bin/env python3
"""Reject test code that cannot fail (run by .ci/run; stdlib only, reads the files as AST).

Two rules, over every ``test_*.py`` below the pytest testpaths:

- an ``assert`` whose condition is an ``or`` with a constant true operand (``assert x or True``);
- a test function (``test_*``, module level or in a ``Test*`` class) with no check: no
  ``assert``, no ``pytest.raises`` / ``pytest.warns`` / ``pytest.fail``, no
  ``raise AssertionError``, and no call to a helper that has one. Helpers are the functions
  of the same module (followed transitively) and, by name, any ``assert_*`` / ``check_*`` /
  ``expect_*`` / ``verify_*`` callable from elsewhere.

Usage: ``python .ci/lint_tests.py [ROOT]``; prints one line per problem and exits 1 if any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

TEST_DIRS = ("tests", "plugins", "tool_subagent_control", "tool_subagent_report")
CHECK_PREFIXES = ("assert_", "check_", "expect_", "verify_")
PYTEST_CHECKS = {"raises", "warns", "fail", "deprecated_call"}

Function = ast.FunctionDef | ast.AsyncFunctionDef


def test_files(root: Path) -> Iterator[Path]:
    for top in TEST_DIRS:
        for path in sorted((root / top).rglob("test_*.py")):
            if ".venv" not in path.parts and "tests" in path.relative_to(root).parts:
                yield path


def called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def always_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value)


class Module:
    def __init__(self, tree: ast.Module) -> None:
        self.functions: dict[str, Function] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions.setdefault(node.name, node)
        self._memo: dict[str, bool] = {}

    def checks(self, function: Function) -> bool:
        """Whether ``function``'s body (nested code included) can fail a test."""
        name = function.name
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = False  # recursion guard
        found = any(self._is_check(node) for node in ast.walk(function))
        self._memo[name] = found
        return found

    def _is_check(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            return isinstance(exc, ast.Name) and exc.id == "AssertionError"
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "pytest"
            and func.attr in PYTEST_CHECKS
        ):
            return True
        name = called_name(node)
        if name is None:
            return False
        if name.startswith(CHECK_PREFIXES):
            return True
        helper = self.functions.get(name)
        return helper is not None and self.checks(helper)


def problems(path: Path, root: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(root)
    module = Module(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assert)
            and isinstance(node.test, ast.BoolOp)
            and isinstance(node.test.op, ast.Or)
            and any(always_true(value) for value in node.test.values)
        ):
            yield f"{rel}:{node.lineno}: assertion cannot fail (`or` with a constant true)"
    candidates: list[Function] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            candidates.append(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            candidates += [
                n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    for function in candidates:
        if function.name.startswith("test") and not module.checks(function):
            yield f"{rel}:{function.lineno}: {function.name} checks nothing (no assert or raises)"


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent)
    found = [line for path in test_files(root) for line in problems(path, root)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
