"""Meta-tests of the plugin author's guide (docs/plugin-guide.md): every hook and every typed
service is documented there, and every Python example passes ``mypy --strict``."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from host import api
from host.testing import MakeHost
from tests.plugins.hooks import ACTIVATION_ORDER, HOOKS, SPEC_MODULES
from tests.support import in_checkout
from tests.typecheck import ROOT, run_mypy

GUIDE = ROOT / "docs" / "plugin-guide.md"
SERVICES = sorted(
    name for name, value in vars(api.ServiceContext).items() if isinstance(value, property)
)
EXAMPLE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_section(hook: str) -> None:
    assert f"\n### `{hook}`\n" in guide(), f"docs/plugin-guide.md has no section for {hook}"


@pytest.mark.parametrize("hook", sorted(ACTIVATION_ORDER))
def test_every_activation_hook_has_an_example_implementing_it(hook: str) -> None:
    implemented = re.compile(rf"@hookimpl\n(?:    )?def {hook}\(")
    assert any(implemented.search(example) for example in EXAMPLE.findall(guide())), hook


@pytest.mark.parametrize("service", SERVICES)
def test_every_typed_service_is_in_the_table(service: str) -> None:
    assert f"| `ctx.{service}` |" in guide()


def test_every_name_authors_import_is_described() -> None:
    text = guide()
    for name in api.__all__:
        assert f"`{name}`" in text, name


def test_no_placeholder_is_left() -> None:
    assert "Placeholder" not in guide()


def test_the_function_tools_section_shows_the_type_mapping() -> None:
    text = guide()
    section = text[text.index("\n## Function tools\n") : text.index("\n## Configuration")]
    for python in ("`list[T]`", "`Literal[", "`T \\| None`", "a `TypedDict`", "`dict[str, T]`"):
        assert python in section, python


@in_checkout
def test_every_python_example_passes_mypy_strict(tmp_path: Path) -> None:
    examples = EXAMPLE.findall(guide())
    assert len(examples) >= len(ACTIVATION_ORDER)
    paths = []
    for number, example in enumerate(examples, 1):
        path = tmp_path / f"guide_example_{number}.py"
        path.write_text(example, encoding="utf-8")
        paths.append(path)
    run = run_mypy(*paths)
    problems = {p.name: run.messages(p) for p in paths if run.messages(p)}
    assert problems == {}, run.report


def test_every_plugin_example_activates(tmp_path: Path, make_host: MakeHost) -> None:
    """Each example that is a plugin loads into a host and activates."""
    plugins = []
    for number, example in enumerate(EXAMPLE.findall(guide()), 1):
        if "@hookimpl" not in example:
            continue
        path = tmp_path / f"guide_plugin_{number}.py"
        path.write_text(example, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        plugins.append((path.stem, module))
    greeters = [name for name, module in plugins if hasattr(module, "Greeter")]
    config = {"plugins": {name: {"names": ["ada"]} for name in greeters}}
    host = make_host(*plugins, config=config)
    states = {name: (r.state, r.error) for name, r in host.plugins.records.items()}
    assert len(plugins) >= len(ACTIVATION_ORDER)
    assert {name: states[name] for name, _ in plugins} == {
        name: ("active", None) for name, _ in plugins
    }
    assert [states[f"{name}.ada"] for name in greeters] == [("active", None)]
    assert "greet_ada" in host.tools


@pytest.mark.parametrize("specs", SPEC_MODULES, ids=lambda module: module.__name__)
def test_every_hookspecs_module_points_to_the_guide(specs: object) -> None:
    assert "docs/plugin-guide.md" in (inspect.getdoc(specs) or "")
