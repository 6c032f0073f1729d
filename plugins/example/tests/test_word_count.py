"""Testing a plugin with the fixtures agent-host ships (``make_host`` and ``make_harness``)."""

from __future__ import annotations

import agent_host_example

from host.testing import call, call_tool, say


async def test_word_count_counts(make_host):
    host = make_host(("word_count", agent_host_example))
    result = await call_tool(host, "word_count", {"text": "three little words"}, agent=object())
    assert (result.text, result.is_error, result.structured) == ("3 words", False, {"words": 3})


async def test_word_count_respects_its_config(make_host):
    config = {"plugins": {"word_count": {"max_words": 2}}}
    host = make_host(("word_count", agent_host_example), config=config)
    result = await call_tool(host, "word_count", {"text": "three little words"}, agent=object())
    assert result.is_error and result.text == "text has more than 2 words"


async def test_bad_arguments_are_an_error_result(make_host):
    host = make_host(("word_count", agent_host_example))
    result = await call_tool(host, "word_count", {"txt": "typo"}, agent=object())
    assert result.is_error
    assert result.text == "invalid arguments for word_count: text: required; txt: unknown key"


def test_inactive_without_the_sessions_service(make_host):
    host = make_host(("word_count", agent_host_example), builtins=False)
    row = next(r for r in host.plugin_rows() if r["name"] == "word_count")
    assert (row["state"], row["missing"]) == ("inactive", ["sessions"])


async def test_an_agent_counts_words_through_the_scripted_model(make_harness):
    h = make_harness(("word_count", agent_host_example))
    root = await h.root("root")
    h.model.script("root", call("word_count", text="two words"), say("counted"))
    before = h.session_files()
    root.followup("count these")
    await root.wait_idle()
    assert [m.content for m in await h.stored_messages(root.id, "tool")] == ["2 words"]
    assert h.session_files() != before
