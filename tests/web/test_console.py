"""The web console in a real headless chromium against a real ``app-server --web``: the
tree of a background child running, waiting and settling; an approval from a grandchild
answered in the page and recorded in the grandchild's log; a decision in one tab closing the
other's dialog; a stored thread after a restart shown as ``agent-host sessions show`` shows it;
a wrong token; both widths; a lost connection replayed without duplicates; a child followed;
and a question answered."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.appserver.client import TIMEOUT, environment
from tests.appserver.conftest import TREE_SCRIPT
from tests.cli.support import AGENT_HOST
from tests.web.browser import Console, ConsoleServer

MESSAGE = re.compile(r"^(?:user|assistant)(?: \([^)]*\))?: (.*)$", re.MULTILINE)
"""A message line of ``sessions show`` (``user (settled: sub_…): text``), its text."""
ROOT_ONLY = {"user": ["Hello from the root.", "Second answer.", "Third."]}


def begin(tab: Console, server: ConsoleServer, message: str = "go") -> None:
    """Open the console, start a thread and send ``message`` by keyboard."""
    tab.page.goto(server.console)
    tab.page.get_by_role("button", name="New thread").click()
    tab.page.wait_for_selector("#message:enabled")
    tab.page.fill("#message", message)
    tab.page.press("#message", "Enter")


def node(tab: Console, label: str) -> str:
    """The tree's node of the subagent ``label``, as a CSS selector of its state."""
    found = tab.page.locator(".node", has_text=label).first
    return f'[data-node="{found.get_attribute("data-node")}"] .state'


def words(text: str) -> list[str]:
    """The words of a text (``sessions show`` writes a line break as ``⏎``, and one for
    several)."""
    return text.replace("⏎", " ").split()


def show(cwd: Path, session_id: str) -> str:
    """``agent-host sessions show SESSION`` on the test's data."""
    done = subprocess.run(
        [AGENT_HOST, "--data-dir", str(cwd / "data"), "sessions", "show", session_id],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd, env=environment(cwd / "home"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_tree_shows_a_background_child_running_then_its_report_and_settlement(
    servers, tabs, tmp_path: Path
) -> None:
    server, tab = servers(TREE_SCRIPT), tabs()
    begin(tab, server)
    tab.page.wait_for_selector("dialog[open]")  # the grandchild waits on the user…
    research, deep = node(tab, "research"), node(tab, "deep")
    assert tab.page.inner_text(research).startswith("running ")  # …while its parent runs
    assert tab.page.inner_text(deep) == "waiting"
    tab.shot("approval-dialog-1440")
    tab.shot("tree-waiting", ".tree")
    tab.page.keyboard.press("Enter")  # the focused first button: Approve
    tab.page.wait_for_selector(f"{research}.settled")
    report = tab.page.locator(".subagentReport")
    assert "Found it." in report.inner_text()
    assert report.locator(".mark").inner_text().startswith("report from research")
    settled = tab.page.locator(".subagentSettled .mark")
    settled.wait_for()
    assert settled.inner_text().startswith("settled: research")
    assert not tab.page.locator("dialog[open]").count()
    tab.shot("tree-settled", ".tree")
    tab.shot("transcript-settled-1440")
    tab.quiet()


def test_an_approval_from_a_grandchild_denied_in_the_page_reaches_its_log(
    servers, tabs, tmp_path: Path
) -> None:
    server, tab = servers(TREE_SCRIPT), tabs()
    begin(tab, server)
    dialog = tab.page.locator("dialog[open]")
    dialog.wait_for()
    assert dialog.locator("#ask-title").inner_text() == "Allow list_agents?"
    assert dialog.locator("#ask-origin").inner_text() == "asked by deep (depth 2)"
    assert dialog.locator("#ask-body").inner_text() == "list_agents {}"
    deep = tab.page.locator(".node", has_text="deep").first.get_attribute("data-node")
    dialog.locator("#ask-text").fill("not now")
    dialog.get_by_role("button", name="Deny").click()
    tab.page.wait_for_selector(f'{node(tab, "research")}.settled')
    assert server.stop() == 143
    assert deep is not None
    assert "  ✗ the user denied list_agents: not now\n" in show(tmp_path, deep)
    tab.quiet()


def test_a_decision_in_another_tab_closes_the_dialog(servers, tabs) -> None:
    server, first, second = servers(TREE_SCRIPT), tabs(), tabs()
    begin(first, server)
    first.page.wait_for_selector("dialog[open]")
    second.page.goto(server.console)
    second.page.locator(".thread").first.click()  # follows the same thread: asked too
    second.page.wait_for_selector("dialog[open]")
    second.page.get_by_role("button", name="Approve", exact=True).click()
    first.page.wait_for_selector("dialog[open]", state="detached")
    first.page.wait_for_selector(f'{node(first, "research")}.settled')
    assert first.page.locator("#ask").is_hidden()
    first.quiet()
    second.quiet()


def test_a_stored_thread_after_a_restart_shows_what_sessions_show_shows(
    servers, tabs, tmp_path: Path
) -> None:
    server, tab = servers(TREE_SCRIPT), tabs()
    begin(tab, server)
    tab.page.get_by_role("button", name="Approve", exact=True).click()
    tab.page.wait_for_selector(f'{node(tab, "research")}.settled')
    tab.page.wait_for_selector(".item.marker >> nth=2")  # the settlement's turn ended too
    thread = tab.page.locator("#thread-list li").first.get_attribute("data-thread")
    assert server.stop() == 143
    tab.page.wait_for_selector("#banner:has-text('The server does not answer: retrying…')")
    again, reader = servers(TREE_SCRIPT), tabs()
    reader.page.goto(again.console)
    row = reader.page.locator("#thread-list li").first
    assert row.get_attribute("data-thread") == thread
    assert row.locator(".stored").inner_text() == "stored"
    row.click()
    reader.page.wait_for_selector(".subagentSettled")
    reader.shot("stored-after-restart-1440")
    assert row.inner_text().split()[:1] == ["user"]  # its label, which thread/resume gave
    assert row.locator(".live").inner_text() == "live"  # followed live now
    assert thread is not None
    stored = show(tmp_path, thread)
    expected = [found.group(1) for found in MESSAGE.finditer(stored)]
    shown = reader.page.locator(".item .text").all_inner_texts()
    assert [words(text) for text in shown] == [words(text) for text in expected]
    calls = [line.split()[1] for line in stored.splitlines() if line.startswith("  → ")]
    lines = reader.page.locator(".toolCall .call").all_inner_texts()
    assert [call.split()[1] for call in lines] == calls
    reader.quiet()


def test_a_wrong_token_gets_the_login_message_and_no_data(servers, tabs) -> None:
    server, tab = servers(ROOT_ONLY), tabs(375, 812)
    begin(tabs(), server)  # a thread exists
    tab.page.goto(server.base + "#token=wrong")
    message = tab.page.locator("#login-message")
    message.wait_for()
    assert message.inner_text().startswith("The server refused the connection (token or origin).")
    assert tab.page.locator("#console").is_hidden()
    assert tab.page.locator(".thread").count() == 0
    assert tab.page.url == server.base  # the token left the address bar
    tab.shot("login-wrong-token-375")
    tab.page.fill("#login-token", server.token)  # pasted: now it connects
    tab.page.press("#login-token", "Enter")
    tab.page.wait_for_selector(".thread")
    assert tab.page.locator("#login").is_hidden()
    assert tab.logged == [  # the browser's own line for the refused handshake, nothing else
        f"error: WebSocket connection to 'ws://127.0.0.1:{server.port}/' failed: "
        "HTTP Authentication failed; no valid credentials available"
    ]
    assert tab.raised == []


def test_both_widths_are_readable_without_sideways_scrolling(servers, tabs) -> None:
    server, narrow, wide = servers(TREE_SCRIPT), tabs(375, 812), tabs(1440, 900)
    begin(narrow, server)
    wide.page.goto(server.console)
    wide.page.locator(".thread").first.click()
    for tab, width in ((narrow, 375), (wide, 1440)):
        tab.page.wait_for_selector("dialog[open]")
        tab.shot(f"approval-{width}")
        assert tab.page.evaluate("document.scrollingElement.scrollWidth") <= width
    narrow.page.get_by_role("button", name="Approve", exact=True).click()
    narrow.page.wait_for_selector(f'{node(narrow, "research")}.settled')
    narrow.shot("settled-375", None, full=True)
    assert narrow.page.evaluate("document.scrollingElement.scrollWidth") <= 375
    narrow.quiet()
    wide.quiet()


def test_a_lost_connection_shows_a_banner_and_replays_what_it_missed_once(servers, tabs) -> None:
    server, tab = servers(ROOT_ONLY), tabs()
    sockets: list[Any] = []
    away = threading.Event()  # while set, the page's attempts to reconnect are dropped

    def route(socket: Any) -> None:  # the page's socket, passed through to the server
        if away.is_set():
            socket.close()
            return
        sockets.append(socket)
        socket.connect_to_server()

    tab.page.route_web_socket("**/*", route)
    begin(tab, server, "first")
    tab.page.wait_for_selector(".item.marker")
    thread = tab.page.locator("#thread-list li").first.get_attribute("data-thread")
    away.set()
    sockets[-1].close()  # the connection drops…
    tab.page.wait_for_selector("#banner:visible")
    other = server.client()  # …and the thread goes on meanwhile
    other.initialize()
    other.call("thread/resume", {"threadId": thread})
    other.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "away"}]})
    other.notification("turn/completed")
    away.clear()
    tab.page.wait_for_selector("#banner", state="hidden")  # reconnected, replayed
    tab.page.wait_for_selector(".item.marker >> nth=1")
    tab.page.fill("#message", "back")
    tab.page.press("#message", "Enter")
    tab.page.wait_for_selector(".item.marker >> nth=2")
    texts = tab.page.locator(".item .text").all_inner_texts()
    assert texts == ["first", "Hello from the root.", "away", "Second answer.", "back", "Third."]
    assert len(sockets) == 2
    assert tab.page.locator("#errors li").count() == 0
    tab.quiet()


def test_a_child_is_followed_and_a_refused_send_shows_the_error_text(servers, tabs) -> None:
    server, tab = servers(TREE_SCRIPT), tabs()
    begin(tab, server)
    tab.page.get_by_role("button", name="Approve", exact=True).click()
    tab.page.wait_for_selector(f'{node(tab, "research")}.settled')
    tab.page.locator(".node", has_text="research").first.focus()
    tab.page.keyboard.press("Enter")
    tab.page.wait_for_selector("#viewing:has-text('research')")
    tab.page.wait_for_selector(".item .text:has-text('Research done.')")
    assert tab.page.locator(".item .text").all_inner_texts() == ["Look.", "Research done."]
    assert tab.page.inner_text("#send") == "Send to subagent"
    deep = tab.page.locator(".node", has_text="deep").first
    child = deep.get_attribute("data-node")
    deep.click()
    tab.page.wait_for_selector(".item .text:has-text('Dug.')")
    tab.page.fill("#message", "more")
    tab.page.press("#message", "Enter")
    error = tab.page.locator("#errors li").last
    error.wait_for()
    assert error.inner_text() == (
        f'message was not delivered: subagent "{child}" belongs to another parent session'
    )
    tab.quiet()


ASKING = {
    "user": [
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which branch?",
                                                           "choices": ["main", "dev"]}}]},
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Ship it?"}}]},
        "Done.",
    ],
}


def test_a_question_is_answered_by_a_choice_and_declined_by_keyboard(servers, tabs) -> None:
    server, tab = servers(ASKING), tabs()
    begin(tab, server)
    dialog = tab.page.locator("dialog[open]")
    dialog.wait_for()
    assert dialog.locator("#ask-body").inner_text() == "Which branch?"
    tab.page.keyboard.press("Escape")
    tab.page.keyboard.press("Escape")  # an undecided request is not dismissed
    assert dialog.locator("#ask-body").inner_text() == "Which branch?"
    assert dialog.get_by_role("button").all_inner_texts() == ["main", "dev", "Answer", "Decline"]
    dialog.get_by_role("button", name="dev").click()
    tab.page.wait_for_selector("#ask-body:has-text('Ship it?')")
    tab.page.fill("#ask-text", "not sure")
    tab.page.locator("#ask-buttons button", has_text="Decline").focus()
    tab.page.keyboard.press("Enter")
    tab.page.wait_for_selector("#ask", state="hidden")
    tab.page.wait_for_selector(".agentMessage .text:has-text('Done.')")
    results = tab.page.locator(".toolCall .result").all_inner_texts()
    assert results == [" ✓ dev", " ✗ error: the user did not answer: not sure"]
    tab.quiet()
