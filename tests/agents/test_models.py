"""The model registry, the scripted model and prompt sections."""

from __future__ import annotations

import pytest

from host.agents import ModelError, ModelRegistry, ModelRequest, ScriptedModel, call, say
from host.agents.prompt import PromptSection, SectionView, register_section, section_registry
from host.agents.scripted import DEFAULT_PREFIX
from host.cancel import CancelSignal
from host.naming import DuplicateNameError
from host.sessions.model import MessageEvent, ToolCall


def request(label: str | None, text: str = "hello") -> ModelRequest:
    return ModelRequest("agent-1", label, "sys", (MessageEvent(role="user", content=text),))


async def test_model_registry_resolves_names_and_the_default() -> None:
    models = ModelRegistry()
    with pytest.raises(ModelError, match="no model is registered"):
        models.resolve()
    first, second = ScriptedModel(), ScriptedModel()
    built: list[ScriptedModel] = []

    def factory() -> ScriptedModel:
        built.append(ScriptedModel())
        return built[-1]

    dispose_first = models.register("first", first)
    models.register("second", second)
    models.register("lazy", factory)
    assert models.resolve() is first and models.resolve("second") is second
    assert built == []
    assert models.resolve("lazy") is models.resolve("lazy") is built[0]
    with pytest.raises(ModelError, match='model "gpt" is not registered') as caught:
        models.resolve("gpt")
    assert caught.value.code == "UNKNOWN_MODEL"
    with pytest.raises(DuplicateNameError):
        models.register("second", first)
    dispose_first()
    assert models.resolve() is second
    models.register("chosen", ScriptedModel, default=True)  # a class is a factory too
    assert isinstance(models.resolve(), ScriptedModel) and models.default_name == "chosen"


async def test_scripted_model_matches_by_label_or_predicate_and_records() -> None:
    model = ScriptedModel()
    model.script("a", say("for a"), call("echo", text="x"))
    model.script(lambda r: r.label is None, say("for the unlabelled"))
    signal = CancelSignal()

    assert (await model.complete(request("a"), signal=signal)).text == "for a"
    assert (await model.complete(request(None), signal=signal)).text == "for the unlabelled"
    asked = await model.complete(request("a"), signal=signal)
    assert asked.tool_calls == (ToolCall("call_1", "echo", {"text": "x"}),)
    default = await model.complete(request("a", "anything"), signal=signal)
    assert default.text == DEFAULT_PREFIX + "anything" and default.tool_calls == ()
    assert [r.label for r in model.requests] == ["a", None, "a", "a"]
    assert len(model.requests_for("a")) == 3
    model.assert_consumed()


async def test_scripted_model_functions_errors_and_leftovers() -> None:
    model = ScriptedModel()

    async def answer(req: ModelRequest) -> object:
        return say(f"echo {req.messages[-1].content}")

    model.script("a", lambda req: say(req.system_prompt), answer, KeyError("boom"), say("left"))
    signal = CancelSignal()
    assert (await model.complete(request("a"), signal=signal)).text == "sys"
    assert (await model.complete(request("a", "x"), signal=signal)).text == "echo x"
    with pytest.raises(KeyError):
        await model.complete(request("a"), signal=signal)
    with pytest.raises(AssertionError, match="label 'a': 1 left"):
        model.assert_consumed()


def test_sections_layer_shadow_and_order() -> None:
    global_sections = section_registry()
    register_section(global_sections, PromptSection("late", "Late.", order=9), owner="p")
    register_section(global_sections, PromptSection("base", "Global base."), owner="p")
    register_section(global_sections, PromptSection("empty", ""), owner="p")
    view = SectionView(global_sections)
    assert view.system_prompt() == "Global base.\n\nLate."
    register_section(view.own, PromptSection("base", "Own base.", order=10), owner="agent")
    register_section(view.own, PromptSection("first", "First.", order=-1), owner="agent")
    assert [s.name for s in view.sections()] == ["first", "empty", "late", "base"]
    assert view.system_prompt() == "First.\n\nLate.\n\nOwn base."
    with pytest.raises(DuplicateNameError, match='"base" from other duplicates'):
        register_section(view.own, PromptSection("base", "again"), owner="other")
