"""Bad input in the web console: a transcript holding HTML, script tags, ANSI escapes and a
1 MB line is shown as text, never as markup; a malformed or oversized message from the server
is one error line in the page, and the page keeps working."""

from __future__ import annotations

from tests.web.test_console import begin

MARKUP = '<img src=x onerror="document.title=\'owned\'"><script>document.title="owned"</script>'
ANSI = "\x1b[31mred\x1b[0m and \x1b]0;title\x07plain"
LONG = "x" * 1_000_000
HOSTILE = {"user": [f"{MARKUP}\n{ANSI}\n{LONG}", "Still here."]}


def test_markup_escapes_and_a_long_line_are_shown_as_text(servers, tabs) -> None:
    server, tab = servers(HOSTILE), tabs()
    begin(tab, server, "<b>bold?</b>")
    answer = tab.page.locator(".agentMessage .text").first
    answer.wait_for()
    tab.page.wait_for_selector(".item.marker")
    text = answer.inner_text()
    assert text.startswith(MARKUP + "\nred and plain\nxxxx")
    assert len(text) == len(MARKUP) + len("\nred and plain\n") + len(LONG)
    assert tab.page.locator(".userMessage .text").inner_text() == "<b>bold?</b>"
    assert tab.page.locator("#transcript img, #transcript script, #transcript b").count() == 0
    assert tab.page.title() == "agent-host console"
    assert tab.page.evaluate("document.scrollingElement.scrollWidth") <= 1440
    tab.quiet()


def test_a_malformed_or_oversized_message_is_one_error_line(servers, tabs) -> None:
    server, tab = servers(HOSTILE), tabs()
    routes = tab.routed()
    begin(tab, server, "first")
    tab.page.wait_for_selector(".item.marker")
    routes[-1].send("{not json")
    routes[-1].send('"a string"')
    routes[-1].send("[" + " " * (8 * 1024 * 1024) + "]")
    errors = tab.page.locator("#errors li")
    errors.nth(2).wait_for()
    assert errors.all_inner_texts() == [
        "the server sent a message that is not JSON: ignored",
        "the server sent a message that is not a JSON object: ignored",
        "the server sent a message that is not text or is over 8 MiB: ignored",
    ]
    tab.page.fill("#message", "second")
    tab.page.press("#message", "Enter")
    tab.page.wait_for_selector(".agentMessage .text:has-text('Still here.')")
    tab.quiet()
