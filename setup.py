"""Refuses to build from a checkout whose ``importable/host`` is not the link to ``host``.

The package is found under ``importable/`` (pyproject.toml); ``importable/host`` is a symbolic
link to ``host``. A checkout made without symlink support (git's ``core.symlinks=false``, the
default on Windows) holds a small text file there instead, and setuptools would quietly build
a distribution without the ``host`` package.
"""

from pathlib import Path

from setuptools import setup

if not (Path(__file__).parent / "importable" / "host").is_dir():
    raise SystemExit(
        "agent-host-core: importable/host is not a link to host/ (a checkout without symlink "
        "support?): clone again with `git clone -c core.symlinks=true`"
    )
setup()
