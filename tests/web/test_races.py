"""The web console when answers and connections cross, in a real headless chromium against a
real ``app-server --web`` (the page's socket passed through a route that holds or cuts it): a
thread's late read after another was opened, a message typed while a new thread starts, a
streamed answer cut by a lost connection, a stored transcript's read cut by one, and the turn
ends of a stored thread and of a followed child after a reconnect."""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.appserver.conftest import TREE_SCRIPT
from tests.web.test_console import begin, node


def sent(tab: Any, text: str, answer: str) -> None:
    """Send ``text`` in the open thread and wait for ``answer``."""
    tab.page.fill("#message", text)
    tab.page.press("#message", "Enter")
    tab.page.wait_for_selector(f".item .text:has-text('{answer}')")


def test_a_read_answered_after_another_thread_was_opened_is_not_shown(servers, tabs) -> None:
    server, tab = servers({"user": ["Answer A.", "Answer B.", "Answer C."]}), tabs()
    armed = [False]

    def first_read_once_armed(request: dict[str, Any]) -> bool:
        if armed[0] and request["method"] == "thread/read":
            armed[0] = False
            return True
        return False

    answers = tab.holding(first_read_once_armed)
    begin(tab, server, "msg A")
    tab.page.wait_for_selector(".item .text:has-text('Answer A.')")
    tab.page.get_by_role("button", name="New thread").click()
    tab.page.wait_for_selector("#message:enabled")
    sent(tab, "msg B", "Answer B.")
    rows = tab.page.locator("#thread-list li button.thread")  # B first, then A
    armed[0] = True
    rows.nth(1).click()  # A is opened; its read is slow…
    answers.wait("A's read")
    rows.nth(0).click()  # …and B opened meanwhile
    tab.page.wait_for_selector(".item .text:has-text('Answer B.')")
    answers.release()  # A's read answers late
    sent(tab, "msg C", "Answer C.")
    texts = tab.page.locator(".item .text").all_inner_texts()
    assert texts == ["msg B", "Answer B.", "msg C", "Answer C."]
    tab.quiet()


def test_a_message_typed_while_a_new_thread_starts_waits_for_that_thread(servers, tabs) -> None:
    server, tab = servers({"user": ["Answer A.", "Answer B."]}), tabs()
    starts = [0]

    def second_start(request: dict[str, Any]) -> bool:
        starts[0] += request["method"] == "thread/start"
        return request["method"] == "thread/start" and starts[0] == 2

    answers = tab.holding(second_start)
    begin(tab, server, "msg A")
    tab.page.wait_for_selector(".item .text:has-text('Answer A.')")
    tab.page.get_by_role("button", name="New thread").click()
    answers.wait("the new thread's start")
    # Until the new thread is open, nothing typed can go to the old one.
    assert tab.page.locator("#message").is_disabled()
    assert tab.page.locator("#send").is_disabled()
    answers.release()
    sent(tab, "msg B", "Answer B.")
    assert tab.page.locator(".item .text").all_inner_texts() == ["msg B", "Answer B."]
    tab.quiet()


def test_a_streamed_answer_cut_by_a_lost_connection_is_shown_once(servers, tabs) -> None:
    server, tab = servers({"user": ["Streamed answer.", "Second."]}), tabs()
    cut = threading.Event()

    def route(socket: Any) -> None:  # the connection drops just before the stored answer
        up = socket.connect_to_server()

        def from_server(message: Any) -> None:
            data = json.loads(message)
            streamed = data.get("method") == "item/completed" and data["params"].get("streamId")
            if streamed and not cut.is_set():
                cut.set()
                socket.close()
                return
            socket.send(message)

        socket.on_message(lambda message: up.send(message))
        up.on_message(from_server)

    tab.page.route_web_socket("**/*", route)
    begin(tab, server, "go")
    tab.page.wait_for_selector(".item.marker")  # replayed after the reconnect
    assert cut.is_set()
    sent(tab, "again", "Second.")
    texts = tab.page.locator(".item .text").all_inner_texts()
    assert texts == ["go", "Streamed answer.", "again", "Second."]
    assert tab.page.locator(".streaming").count() == 0
    tab.quiet()


def test_a_read_cut_by_a_lost_connection_is_read_again_and_what_came_meanwhile_shown(
    servers, tabs
) -> None:
    server, tab = servers({"user": ["One.", "Two."]}), tabs()
    begin(tab, server, "go")
    tab.page.wait_for_selector(".item.marker")
    other, cut = tabs(), threading.Event()

    def route(socket: Any) -> None:  # the connection drops as the stored transcript is asked for
        up = socket.connect_to_server()

        def from_page(message: Any) -> None:
            if json.loads(message).get("method") == "thread/read" and not cut.is_set():
                cut.set()
                socket.close()
                return
            up.send(message)

        socket.on_message(from_page)
        up.on_message(lambda message: socket.send(message))

    other.page.route_web_socket("**/*", route)
    other.page.goto(server.console)
    other.page.locator("#thread-list li button.thread").first.click()
    other.page.wait_for_selector(".item .text:has-text('One.')")  # read again after the reconnect
    assert cut.is_set()
    sent(other, "more", "Two.")  # the new turn's items, no longer held for a read that was cut
    other.page.wait_for_selector(".item.marker")
    rows = other.page.locator("#transcript li").all_inner_texts()
    assert [row.split("\n")[-1] for row in rows] == ["go", "One.", "more", "Two.", "turn completed"]
    other.quiet()


def test_a_stored_thread_shows_no_turn_end_again_after_a_reconnect(servers, tabs) -> None:
    server, tab = servers({"user": ["One.", "Two."]}), tabs()
    begin(tab, server, "go")
    tab.page.wait_for_selector(".item.marker")
    other = tabs()
    sockets = other.routed()
    other.page.goto(server.console)
    other.page.locator("#thread-list li button.thread").first.click()
    other.page.wait_for_selector(".item .text:has-text('One.')")
    sockets[-1].close()
    other.page.wait_for_selector("#banner:visible")
    other.page.wait_for_selector("#banner", state="hidden")
    sent(other, "more", "Two.")
    other.page.wait_for_selector(".item.marker")
    rows = other.page.locator("#transcript li").all_inner_texts()
    assert [row.split("\n")[-1] for row in rows] == ["go", "One.", "more", "Two.", "turn completed"]
    other.quiet()


def test_a_settled_child_shows_no_turn_end_after_a_reconnect(servers, tabs) -> None:
    server, tab = servers(TREE_SCRIPT), tabs()
    sockets = tab.routed()
    begin(tab, server)
    tab.page.get_by_role("button", name="Approve", exact=True).click()
    tab.page.wait_for_selector(f'{node(tab, "research")}.settled')
    tab.page.locator(".node", has_text="research").first.click()
    tab.page.wait_for_selector(".item .text:has-text('Research done.')")
    before = tab.page.locator("#transcript li").all_inner_texts()
    sockets[-1].close()
    tab.page.wait_for_selector("#banner:visible")
    tab.page.wait_for_selector("#banner", state="hidden")  # hidden once the replay is in
    assert tab.page.locator("#transcript li").all_inner_texts() == before
    tab.quiet()
