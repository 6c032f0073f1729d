"""A real terminal for the terminal client's tests: a command in a tmux pane, typed into with
``send-keys`` and read with ``capture-pane``, as a person at a keyboard would.

Each ``Pane`` runs its own tmux server (a socket in the test's directory), so tests never see
each other's panes. Without tmux the tests are skipped on a developer machine and fail under
``CI=true`` (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
EXIT_MARK = "EXIT="


def require_tmux() -> str:
    """The tmux executable; skip without it, except under ``CI=true`` (a failure there)."""
    if TMUX is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but tmux is not installed: the terminal client tests must run")
        pytest.skip("tmux is not installed")
    return TMUX


class Pane:
    """``command`` running in a ``width`` x ``height`` tmux pane in ``cwd`` with ``env``.

    The shell around the command outlives a Ctrl-C that reaches it as a signal. When the
    command ends the pane prints ``EXIT=<code>`` and stays (deaf to Ctrl-C), so its
    last screen and exit status can still be read.
    """

    def __init__(
        self,
        directory: Path,
        command: Sequence[str],
        env: Mapping[str, str],
        *,
        width: int = 100,
        height: int = 30,
    ) -> None:
        self.tmux = require_tmux()
        self.socket = str(directory / "tmux.sock")
        launcher = directory / "launch.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        launcher.write_text(
            f"cd {shlex.quote(str(directory))}\n{exports}"
            f"trap : INT\n{shlex.join(command)}\ncode=$?\ntrap '' INT\n"
            f"echo {EXIT_MARK}$code\nsleep 600\n"
        )
        self._run("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                  f"bash {shlex.quote(str(launcher))}")

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [self.tmux, "-S", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def screen(self) -> str:
        """Everything the pane showed, scrollback included, wrapped lines joined."""
        return self._run("capture-pane", "-p", "-J", "-S", "-", "-t", "t")

    def visible(self) -> list[str]:
        """The lines on screen now (no scrollback), as shown."""
        return self._run("capture-pane", "-p", "-t", "t").splitlines()

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self._run("send-keys", "-t", "t", "-l", text)
        self._run("send-keys", "-t", "t", "Enter")

    def keys(self, *keys: str) -> None:
        """Press keys by tmux name (``C-c``, ``Tab``, ``Enter``) or type literal text."""
        self._run("send-keys", "-t", "t", *keys)

    def paste(self, text: str) -> None:
        """Paste ``text`` the way a terminal does (bracketed, when the program asks for it)."""
        path = Path(self.socket).with_name("paste.txt")
        path.write_text(text)
        self._run("load-buffer", str(path))
        self._run("paste-buffer", "-p", "-t", "t")

    def resize(self, width: int, height: int) -> None:
        """Resize the terminal, as a person dragging the window would."""
        self._run("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def wait_for(self, wanted: str | Callable[[str], bool], timeout: float = 30) -> str:
        """The screen once it shows ``wanted`` (text, or a test of the whole screen)."""
        test = wanted if callable(wanted) else (lambda screen: wanted in screen)
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout}s for {wanted!r}; the screen:\n{screen}")
            time.sleep(0.1)

    def status(self) -> str:
        """The last line on screen that is not blank (the client's status line); "" while
        the screen is being redrawn."""
        lines = [line for line in self.visible() if line.strip()]
        return lines[-1] if lines else ""

    def exit_code(self, timeout: float = 60) -> int:
        """Wait for the command to end; its exit status."""
        screen = self.wait_for(lambda s: re.search(rf"{EXIT_MARK}\d+", s) is not None, timeout)
        match = re.search(rf"{EXIT_MARK}(\d+)", screen)
        assert match is not None
        return int(match.group(1))

    def pid(self) -> int:
        """The pid of the command, while it runs (the only child of the pane's shell)."""
        shell = self._run("display-message", "-p", "-t", "t", "#{pane_pid}").strip()
        (child,) = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        return int(child)

    def close(self) -> None:
        """Stop the pane's tmux server (and whatever still runs in it)."""
        subprocess.run([self.tmux, "-S", self.socket, "kill-server"], capture_output=True)
