"""The web console's turns and lists in a real headless chromium against a real ``app-server
--web``: a running turn's tool progress under its call and a steer joining it, an interrupt,
a thread opened while another client's turn runs (Send steers), approve-for-session, the
threads by last activity (live or stored, paged) and a stored tree after a restart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.appserver.client import TIMEOUT, environment
from tests.appserver.conftest import TREE_SCRIPT, project
from tests.cli.support import AGENT_HOST
from tests.web.test_console import ROOT_ONLY, begin, node

FAULT = Path(__file__).parents[2] / "plugins" / "mcp" / "tests" / "fault_server.py"
WITH_FAULT = (
    f"[plugins.mcp.servers.fault]\ncommand = {json.dumps(sys.executable)}\n"
    f"args = [{json.dumps(str(FAULT))}]\n"
)
"""More lines of ``agent-host.toml``: the MCP test server whose ``wait_for`` blocks, reporting
progress, until a file appears."""


def waiting(flag: Path) -> dict[str, Any]:
    """A root whose turn calls ``fault__wait_for`` on ``flag``, then says ``Done.``; the
    project in ``flag``'s directory trusts the fault server (``agent-host mcp trust``)."""
    call = {"name": "fault__wait_for", "arguments": {"path": str(flag)}}
    script = {"user": [{"tool_calls": [call]}, "Done."]}
    path = flag.parent
    project(path, script, WITH_FAULT)
    subprocess.run(
        [AGENT_HOST, "--data-dir", str(path / "data"), "mcp", "trust", "fault"],
        check=True, capture_output=True, timeout=TIMEOUT, cwd=path,
        env=environment(path / "home"),
    )  # fmt: skip
    return script


def sent(tab: Any, text: str) -> None:
    """Type ``text`` in the message box and send it by keyboard; wait until it is taken."""
    from playwright.sync_api import expect  # as tests.web.browser: imported when a tab is used

    tab.page.fill("#message", text)
    tab.page.press("#message", "Enter")
    # Not ``wait_for_function``: its expression is evaluated in the page, which the console's
    # Content-Security-Policy (no 'unsafe-eval') refuses unless it holds at the first look.
    expect(tab.page.locator("#message")).to_have_value("", timeout=TIMEOUT * 1000)


def test_a_running_turn_shows_its_progress_and_a_steer_joins_it(
    servers, tabs, tmp_path: Path
) -> None:
    flag = tmp_path / "go.flag"
    server, tab = servers(waiting(flag), WITH_FAULT), tabs()
    begin(tab, server)
    progress = tab.page.locator(".toolCall .progress")
    progress.wait_for()
    assert progress.inner_text() == "waiting for go.flag"
    assert tab.page.inner_text("#send") == "Steer"
    tab.shot("progress-1440")
    sent(tab, "also this")
    flag.write_text("")
    tab.page.wait_for_selector(".item.marker")
    assert tab.page.locator(".item .text").all_inner_texts() == ["go", "also this", "Done."]
    assert tab.page.locator(".item.marker").all_inner_texts() == ["turn completed"]
    assert tab.page.locator(".toolCall .result").all_inner_texts() == [" ✓ found"]
    assert progress.count() == 0  # the result ended it
    assert tab.page.inner_text("#send") == "Send"
    tab.quiet()


def test_a_running_turn_is_interrupted(servers, tabs, tmp_path: Path) -> None:
    server, tab = servers(waiting(tmp_path / "never.flag"), WITH_FAULT), tabs()
    begin(tab, server)
    tab.page.locator(".toolCall .progress").wait_for()
    tab.page.get_by_role("button", name="Interrupt").click()
    tab.page.wait_for_selector(".item.marker")
    assert tab.page.locator(".item.marker").all_inner_texts() == ["turn interrupted"]
    assert tab.page.locator("#errors li").all_inner_texts() == ["turn ended: interrupted"]
    assert tab.page.inner_text("#send") == "Send"
    tab.quiet()


def test_a_thread_opened_while_another_client_runs_its_turn_is_steered(
    servers, tabs, tmp_path: Path
) -> None:
    flag = tmp_path / "go.flag"
    server, tab = servers(waiting(flag), WITH_FAULT), tabs()
    other = server.client()
    other.initialize()
    thread = other.call("thread/start")["thread"]["id"]
    other.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
    other.notification("item/toolCall/progress")  # the turn runs, blocked in its tool
    tab.page.goto(server.console)
    tab.page.locator(f'[data-thread="{thread}"] .thread').click()
    tab.page.locator(".toolCall .call").wait_for()
    assert tab.page.inner_text("#send") == "Steer"
    tab.page.locator(".toolCall .progress").wait_for()  # its progress reaches this page too
    sent(tab, "also this")
    flag.write_text("")
    tab.page.wait_for_selector(".item.marker")
    assert tab.page.locator(".item .text").all_inner_texts() == ["go", "also this", "Done."]
    assert tab.page.inner_text("#send") == "Send"
    tab.quiet()


def test_approve_for_session_is_not_asked_again(servers, tabs) -> None:
    twice = {"name": "list_agents", "arguments": {}}
    script = {"user": [{"tool_calls": [twice]}, {"tool_calls": [twice]}, "Listed twice."]}
    server, tab = servers(script), tabs()
    begin(tab, server)
    dialog = tab.page.locator("dialog[open]")
    dialog.wait_for()
    dialog.get_by_role("button", name="Approve for session").click()
    tab.page.wait_for_selector(".agentMessage .text:has-text('Listed twice.')")  # never asked
    results = tab.page.locator(".toolCall .result").all_inner_texts()
    assert len(results) == 2 and all(result.startswith(" ✓ ") for result in results)
    assert tab.page.locator("#ask").is_hidden()
    tab.quiet()


def test_threads_are_listed_by_last_activity_live_or_stored_a_page_at_a_time(
    servers, tabs
) -> None:
    first = servers(ROOT_ONLY)
    client = first.client()
    client.initialize()
    made = [client.call("thread/start")["thread"]["id"] for _ in range(51)]
    assert first.stop() == 143
    second, tab = servers(ROOT_ONLY), tabs()
    other = second.client()
    other.initialize()
    other.call("thread/resume", {"threadId": made[0]})  # the oldest, active now and live
    other.call("turn/start", {"threadId": made[0], "input": [{"type": "text", "text": "hi"}]})
    other.notification("turn/completed")
    tab.page.goto(second.console)
    rows = tab.page.locator("#thread-list li")
    rows.nth(49).wait_for()
    assert rows.count() == 50
    assert [rows.nth(i).get_attribute("data-thread") for i in (0, 1)] == [made[0], made[50]]
    assert rows.nth(0).locator(".live").inner_text() == "live"
    assert rows.nth(1).locator(".stored").inner_text() == "stored"
    tab.shot("threads-1440", ".threads")
    tab.page.get_by_role("button", name="Show more").click()
    rows.nth(50).wait_for()
    assert rows.count() == 51
    assert rows.nth(50).get_attribute("data-thread") == made[1]
    assert tab.page.locator("#more-threads").is_hidden()
    tab.quiet()


def test_a_stored_tree_after_a_restart_shows_its_settled_child_and_grandchild(
    servers, tabs
) -> None:
    server, tab = servers(TREE_SCRIPT), tabs()
    begin(tab, server)
    tab.page.get_by_role("button", name="Approve", exact=True).click()
    tab.page.wait_for_selector(f'{node(tab, "research")}.settled')
    tab.page.wait_for_selector(".item.marker >> nth=1")
    thread = tab.page.locator("#thread-list li").first.get_attribute("data-thread")
    assert server.stop() == 143
    again, reader = servers(TREE_SCRIPT), tabs()
    reader.page.goto(again.console)
    reader.page.locator(f'[data-thread="{thread}"] .thread').click()
    reader.page.wait_for_selector(".subagentSettled")
    research, deep = node(reader, "research"), node(reader, "deep")
    assert reader.page.inner_text(research) == "settled"
    assert reader.page.inner_text(deep) == "settled"
    reader.shot("tree-stored-after-restart", ".tree")
    reader.quiet()
