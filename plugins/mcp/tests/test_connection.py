"""The MCP connection layer against real server processes: the reference ``mcp-server-time`` and
``mcp-server-git``, a fault server on the SDK's ``MCPServer`` (tests/fault_server.py) over stdio
and streamable HTTP, and plain scripts that misbehave. No transport is mocked."""

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from agent_host_mcp.config import ServerSpec, load_servers
from agent_host_mcp.connection import CallOutcome, McpError, ServerConnection
from agent_host_mcp.content import render_content
from agent_host_mcp.loop import McpLoop

from tests.support import free_port

PY = sys.executable


def server_spec(name: str, transport: str = "stdio", **fields) -> ServerSpec:
    """A server definition as the configuration would produce it."""
    return ServerSpec(name, transport, **fields)  # type: ignore[arg-type]


FAULT = str(Path(__file__).with_name("fault_server.py"))
BIN = Path(sys.executable).parent
GRACE = 0.2


def _script(name: str, module: str) -> tuple[str, tuple[str, ...]]:
    """The installed console script, or ``python -m`` when it is not on this venv's bin."""
    path = BIN / name
    return (str(path), ()) if path.exists() else (PY, ("-m", module))


def _children() -> set[int]:
    """Live (non-zombie) child processes of this process, read from /proc."""
    me = os.getpid()
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def _gone(pid: int | None) -> bool:
    return pid is not None and not Path(f"/proc/{pid}").exists()


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


async def _until(check, timeout: float = 5.0) -> None:
    """Poll ``check`` (bounded) for effects in another process, which cannot be awaited."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


@pytest.fixture(scope="module")
def mcp_loop():
    loop = McpLoop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def cancel_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fault") / "cancel.log"


@pytest.fixture(scope="module")
def fault(mcp_loop, cancel_log):
    """One fault server shared by the tests that do not kill it."""
    spec = server_spec(
        "fault", command=PY, args=(FAULT, "--cancel-log", str(cancel_log)), call_timeout=0.5
    )
    connection = ServerConnection(spec, mcp_loop, grace=GRACE)
    connection.start()
    connection.wait_ready(20)
    yield connection
    connection.close()
    assert _gone(connection.pid)


# -- the reference servers ---------------------------------------------------------------------


async def test_time_server_answers_and_leaves_no_process(mcp_loop):
    command, args = _script("mcp-server-time", "mcp_server_time")
    connection = ServerConnection(server_spec("time", command=command, args=args), mcp_loop)
    connection.start()
    tools = await asyncio.to_thread(connection.wait_ready, 20)
    assert {"get_current_time", "convert_time"} <= {tool.name for tool in tools}
    assert connection.pid in _children()

    outcome = await connection.call_tool("get_current_time", {"timezone": "UTC"})

    assert not outcome.is_error
    assert outcome.structured["timezone"] == "UTC"
    assert '"timezone": "UTC"' in outcome.text
    await asyncio.to_thread(connection.close)
    assert _gone(connection.pid)
    connection.close()  # idempotent


async def test_git_server_reports_the_status_of_a_temporary_repository(mcp_loop, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    for argv in (["init", "-q"], ["add", "a.txt"], ["commit", "-q", "-m", "first"]):
        if argv[0] == "add":
            (repo / "a.txt").write_text("a\n")
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    (repo / "b.txt").write_text("untracked\n")
    command, args = _script("mcp-server-git", "mcp_server_git")
    spec = server_spec("git", command=command, args=(*args, "--repository", str(repo)))
    connection = ServerConnection(spec, mcp_loop)
    connection.start()
    try:
        tools = await asyncio.to_thread(connection.wait_ready, 20)
        assert "git_status" in {tool.name for tool in tools}
        outcome = await connection.call_tool("git_status", {"repo_path": str(repo)})
    finally:
        await asyncio.to_thread(connection.close)
    assert not outcome.is_error, outcome.text
    assert "b.txt" in outcome.text
    assert _gone(connection.pid)


# -- the shared fault server -------------------------------------------------------------------


def test_lists_every_tool_with_its_schemas(fault):
    tools = {tool.name: tool for tool in fault.tools}
    assert {"echo", "crash", "slow", "bad_schema", "fail", "media", "grow"} <= set(tools)
    assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
    assert tools["echo"].description == "Return the text."
    # Listed as the server sends it: rejecting it is the adapter's decision.
    assert tools["bad_schema"].input_schema["properties"]["x"]["type"] == "no-such-type"


async def test_results_text_structured_errors_and_placeholders(fault):
    echo = await fault.call_tool("echo", {"text": "hello"})
    assert echo == CallOutcome("hello", structured={"result": "hello"})

    media = await fault.call_tool("media", {})
    assert media.text.splitlines() == [
        "a picture",
        "[image/png, 100 bytes]",
        "[resource link: file:///tmp/doc.txt]",
    ]
    assert not media.is_error

    failed = await fault.call_tool("fail", {})
    assert failed.is_error
    assert "\n" not in failed.text


def test_render_content_never_shows_base64():
    import base64

    import mcp_types as types

    blob = base64.b64encode(bytes(1000)).decode()
    blocks: list[types.ContentBlock] = [
        types.AudioContent(type="audio", data=blob, mime_type="audio/wav"),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(uri="file:///x.bin", blob=blob, mime_type="a/b"),
        ),
        types.EmbeddedResource(
            type="resource", resource=types.TextResourceContents(uri="file:///x.txt", text="héllo")
        ),
    ]
    assert render_content(blocks).splitlines() == [
        "[audio/wav, 1000 bytes]",
        "[resource: file:///x.bin, a/b, 1000 bytes]",
        "[resource: file:///x.txt, 6 bytes]",
    ]


async def test_call_timeout_is_an_error_line_and_cancels_on_the_server(fault, cancel_log):
    before = _lines(cancel_log).count("cancelled")
    started = time.monotonic()

    outcome = await fault.call_tool("slow", {"seconds": 30})

    assert outcome.is_error
    assert outcome.text == 'MCP server "fault": tool "slow" did not answer within 0.5s'
    # A timeout is timing: a generous bound, well before the 30 s the server would sleep.
    assert time.monotonic() - started < 15
    await _until(lambda: _lines(cancel_log).count("cancelled") > before)


async def test_cancelling_the_awaiting_task_sends_cancelled_and_returns_at_once(fault, cancel_log):
    started_before = _lines(cancel_log).count("started")
    cancelled_before = _lines(cancel_log).count("cancelled")
    call = asyncio.ensure_future(fault.call_tool("slow", {"seconds": 30}))
    await _until(lambda: _lines(cancel_log).count("started") > started_before)

    call.cancel()
    begun = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert time.monotonic() - begun < 15  # generous: not after the 30 s the server would sleep

    # The server saw notifications/cancelled: its handler was cancelled, not timed out.
    await _until(lambda: _lines(cancel_log).count("cancelled") > cancelled_before)
    assert (await fault.call_tool("echo", {"text": "still here"})).text == "still here"


async def test_list_changed_relists_and_reports_the_new_tools(fault):
    here = asyncio.get_running_loop()
    changed: asyncio.Future[list[str]] = here.create_future()
    threads: list[threading.Thread] = []

    def on_change(tools):
        threads.append(threading.current_thread())
        names = [tool.name for tool in tools]

        def settle() -> None:
            if not changed.done():
                changed.set_result(names)

        here.call_soon_threadsafe(settle)

    fault.on_tools_changed(on_change)

    assert (await fault.call_tool("grow", {})).text == "grown"
    names = await asyncio.wait_for(changed, 5)

    assert "added" in names
    assert "added" in {tool.name for tool in fault.tools}
    assert threads[0] is not threading.current_thread()  # the MCP loop's thread
    assert (await fault.call_tool("added", {})).text == "added here"


async def test_list_changed_twice_quickly_ends_with_the_newest_list(mcp_loop):
    spec = server_spec("churn", command=PY, args=(FAULT,), call_timeout=30)
    connection = ServerConnection(spec, mcp_loop, grace=GRACE)
    reported: list[list[str]] = []
    connection.on_tools_changed(lambda tools: reported.append([tool.name for tool in tools]))
    connection.start()
    await asyncio.to_thread(connection.wait_ready, 20)
    try:
        assert (await connection.call_tool("churn", {})).text == "churned"
        await _until(lambda: len(reported) == 2, timeout=30)
    finally:
        await asyncio.to_thread(connection.close)
    # the first listing (only "first") is answered while the second is asked, not after it
    assert ["first" in names and "second" not in names for names in reported] == [True, False]
    assert "second" in reported[-1]
    assert {"first", "second"} <= {tool.name for tool in connection.tools}


async def _started_fault(mcp_loop, name: str, flag: str) -> tuple[ServerConnection, list[str]]:
    """A ready fault server of its own, and the list its ``on_exit`` lines go to."""
    spec = server_spec(name, command=PY, args=(FAULT, flag))
    connection = ServerConnection(spec, mcp_loop, grace=GRACE)
    exits: list[str] = []
    connection.on_exit(exits.append)
    connection.start()
    await asyncio.to_thread(connection.wait_ready, 20)
    return connection, exits


# -- servers that fail -------------------------------------------------------------------------


async def test_a_crash_mid_call_is_the_exit_line_everywhere(mcp_loop, capfd):
    connection, exits = await _started_fault(mcp_loop, "crashy", "--noise")
    assert connection.stderr_tail == "noise line 2"
    line = 'MCP server "crashy" exited (status 3): fatal: crashing on purpose'

    outcome = await connection.call_tool("crash", {})

    assert outcome == CallOutcome(line, is_error=True)
    assert await connection.call_tool("echo", {"text": "x"}) == CallOutcome(line, is_error=True)
    assert connection.error == line
    await _until(lambda: _gone(connection.pid))
    await asyncio.to_thread(connection.close)
    assert exits == [line]
    # The server's stderr went to the log, not to the host's terminal.
    assert "noise line" not in capfd.readouterr().err


def test_a_missing_command_could_not_start(mcp_loop):
    connection = ServerConnection(server_spec("nope", command="/nonexistent/mcp-x"), mcp_loop)
    connection.start()
    with pytest.raises(McpError) as raised:
        connection.wait_ready(5)
    assert raised.value.message == (
        'MCP server "nope" could not start: No such file or directory: /nonexistent/mcp-x'
    )
    connection.close()


def test_a_server_exiting_at_startup_reports_status_and_stderr(mcp_loop):
    code = "import sys; print('warming up', file=sys.stderr); print('bad config', file=sys.stderr); sys.exit(4)"
    connection = ServerConnection(server_spec("dies", command=PY, args=("-c", code)), mcp_loop)
    with pytest.raises(McpError, match=r'^MCP server "dies" exited \(status 4\): bad config$'):
        connection.wait_ready(10)
    assert _gone(connection.pid)
    connection.close()


def test_never_answering_initialize_times_out_and_the_process_is_killed(mcp_loop):
    spec = server_spec(
        "silent", command=PY, args=(FAULT, "--silent", "--stubborn"), startup_timeout=0.5
    )
    connection = ServerConnection(spec, mcp_loop, grace=GRACE)
    started = time.monotonic()
    with pytest.raises(McpError) as raised:
        connection.wait_ready(10)
    assert raised.value.message == 'MCP server "silent" did not answer initialize within 0.5s'
    # It ignores stdin closing and SIGTERM: killed after two grace periods, before the raise
    # (and not after wait_ready's own 10 s, which would be another line).
    assert time.monotonic() - started >= 0.5 + 2 * GRACE
    assert _gone(connection.pid)
    connection.close()


def test_garbage_on_stdout_is_named_in_the_line(mcp_loop):
    code = "import sys; print('garbage here', flush=True); sys.stdin.read()"
    spec = server_spec("garbage", command=PY, args=("-c", code), startup_timeout=0.5)
    connection = ServerConnection(spec, mcp_loop, grace=GRACE)
    with pytest.raises(McpError) as raised:
        connection.wait_ready(10)
    assert raised.value.message == (
        'MCP server "garbage" did not answer initialize within 0.5s'
        " (unreadable output: not JSON-RPC: 'garbage here')"
    )
    assert _gone(connection.pid)


def test_close_while_starting_stops_the_server(mcp_loop):
    spec = server_spec("slowstart", command=PY, args=(FAULT, "--silent"), startup_timeout=30)
    connection = ServerConnection(spec, mcp_loop, grace=GRACE)
    connection.start()
    deadline = time.monotonic() + 5
    while connection.pid is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    connection.close()
    assert time.monotonic() - started < 15  # generous: not the 30 s startup timeout waited out
    assert _gone(connection.pid)
    with pytest.raises(McpError, match="closed while starting"):
        connection.wait_ready(1)


async def test_close_kills_a_ready_server_that_ignores_stdin_and_sigterm(mcp_loop):
    connection, exits = await _started_fault(mcp_loop, "stubborn", "--stubborn")
    pid = connection.pid
    assert pid in _children()
    started = time.monotonic()

    await asyncio.to_thread(connection.close, 0.3)

    assert 0.6 <= time.monotonic() - started < 4
    assert _gone(pid)
    assert exits == []  # closing is not dying
    closed = await connection.call_tool("echo", {"text": "x"})
    assert closed == CallOutcome('MCP server "stubborn" is closed', is_error=True)


# -- streamable HTTP ---------------------------------------------------------------------------


@pytest.fixture
def http_log(tmp_path) -> Path:
    return tmp_path / "http-cancel.log"


@pytest.fixture
def http_server(http_log):
    port = free_port()
    process = subprocess.Popen(
        [PY, FAULT, "--http", str(port), "--cancel-log", str(http_log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, "the HTTP server exited"
            assert time.monotonic() < deadline, "the HTTP server never listened"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_streamable_http_on_loopback(mcp_loop, http_server, http_log):
    spec = server_spec(
        "web", transport="http", url=http_server, headers={"X-Test": "1"}, call_timeout=5
    )
    connection = ServerConnection(spec, mcp_loop)
    connection.start()
    tools = await asyncio.to_thread(connection.wait_ready, 20)
    assert "echo" in {tool.name for tool in tools}
    assert connection.pid is None

    assert await connection.call_tool("echo", {"text": "over http"}) == CallOutcome(
        "over http", structured={"result": "over http"}
    )
    call = asyncio.ensure_future(connection.call_tool("slow", {"seconds": 30}))
    await _until(lambda: "started" in _lines(http_log))
    call.cancel()
    begun = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert time.monotonic() - begun < 5  # before the call's 5 s timeout: the cancel, at once
    await _until(lambda: "cancelled" in _lines(http_log))
    await asyncio.to_thread(connection.close)


def _failure(mcp_loop: McpLoop, spec: ServerSpec) -> str:
    """The one-line ``McpError`` of a connection to ``spec`` that never gets ready."""
    connection = ServerConnection(spec, mcp_loop)
    with pytest.raises(McpError) as raised:
        connection.wait_ready(10)
    connection.close()
    return raised.value.message


def _with_secret(name: str, definition: dict[str, Any]) -> ServerSpec:
    """``definition`` loaded from agent-host.toml with ``ACC_SECRET`` set to a secret value."""
    found = load_servers({name: definition}, None, {"ACC_SECRET": "acc-secret-value"},
                         toml_project=False, mcp_json_project=False)  # fmt: skip
    return found.specs[0]


def test_an_unreachable_http_server_fails_in_one_line(mcp_loop):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    spec = server_spec("away", transport="http", url=url, startup_timeout=5)
    assert _failure(mcp_loop, spec) == (
        f'MCP server "away" ({url}) failed to connect: ConnectError: All connection attempts failed'
    )


def test_a_failed_connection_names_the_url_as_written_never_a_secret_in_it(mcp_loop):
    url = f"http://127.0.0.1:{free_port()}/mcp?key=${{ACC_SECRET}}"
    definition = {"url": url, "headers": {"X": "ACC_SECRET"}, "startup_timeout": 5}
    assert _failure(mcp_loop, _with_secret("away", definition)) == (
        f'MCP server "away" ({url}) failed to connect: ConnectError: All connection attempts failed'
    )


def test_a_command_that_cannot_start_is_named_as_written_never_a_secret_in_it(mcp_loop):
    command = "/nonexistent/${ACC_SECRET}/server"
    assert _failure(mcp_loop, _with_secret("gone", {"command": command})) == (
        f'MCP server "gone" could not start: No such file or directory: {command}'
    )


# -- the loop ----------------------------------------------------------------------------------


def test_mcp_loop_runs_submitted_work_on_its_thread_and_restarts():
    loop = McpLoop()
    assert not loop.running

    async def where() -> threading.Thread:
        return threading.current_thread()

    thread = loop.submit(where()).result(5)
    assert thread is not threading.current_thread()

    async def forever() -> None:
        await asyncio.Event().wait()

    pending = loop.submit(forever())
    loop.close()
    loop.close()
    assert pending.cancelled()
    assert not thread.is_alive()
    assert loop.submit(where()).result(5) is not thread  # a fresh loop after close
    loop.close()


def test_closing_the_loop_stops_its_servers_gracefully():
    loop = McpLoop()
    connection = ServerConnection(
        server_spec("orphan", command=PY, args=(FAULT, "--stubborn")), loop, grace=GRACE
    )
    connection.start()
    connection.wait_ready(20)
    started = time.monotonic()

    loop.close()  # without closing the connection first

    # Stopped through the connection's own escalation (two grace periods), not the SDK's 4 s
    # (timing is the behaviour here: the bound is the SDK's own 4 s).
    assert time.monotonic() - started < 4
    assert _gone(connection.pid)
    connection.close()
    assert not loop.running


def test_no_server_process_outlives_the_module(mcp_loop, fault):
    # Only the shared fault server may still run here; every other test closed its own.
    assert _children() <= {fault.pid}


def test_reconnection_waits_double_from_half_a_second_up_to_thirty():
    from agent_host_mcp.http import Backoff

    backoff = Backoff()
    assert [backoff.next() for _ in range(9)] == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]
    backoff.reset()
    assert backoff.next() == 0.5
