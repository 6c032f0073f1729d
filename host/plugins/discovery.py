"""Discovery of installed plugin distributions through the ``agent_host.plugins`` entry points.

Installed distributions are scanned once per call; nothing is imported here. Each candidate
is loaded later, in its own try, so one broken distribution never stops the host.

The scan reads ``*.dist-info``/``*.egg-info`` directories on ``sys.path`` directly: only
``entry_points.txt`` of every distribution, and the name/version lines of ``METADATA`` of the
few that declare plugins. That keeps ``importlib.metadata`` (and the ``email`` package it
imports) off the start-up path; it is still used for path entries that are not directories
(zip archives), where it knows more than this scanner. As in ``importlib.metadata``, the first
distribution of a name on the path wins.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import attrs

GROUP = "agent_host.plugins"
_SUFFIXES = (".dist-info", ".egg-info")
_SEPARATORS = re.compile(r"[-_.]+")
_CHUNK = 1 << 16


@attrs.frozen
class PluginCandidate:
    """A plugin the host may load: where it comes from and how to import it."""

    name: str
    load: Callable[[], Any]
    entry_point: str
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    parent: str | None = None
    """The plugin that contributed this one (``register_plugins``), or None."""

    module: str = attrs.field(init=False)
    """The module of its entry point (``module:attribute``)."""
    package: str | None = attrs.field(init=False)
    """The top-level package holding its code (``host`` for a built-in); None for an object
    handed over in code."""

    @module.default
    def _module(self) -> str:
        return self.entry_point.split(":")[0].strip()

    @package.default
    def _package(self) -> str | None:
        if self.distribution is None or not self.module:
            return None
        return self.module.split(".")[0]


def discover(group: str = GROUP) -> list[PluginCandidate]:
    """Every entry point of ``group`` installed on ``sys.path``, sorted by name."""
    found: dict[str, PluginCandidate] = {}
    seen: set[str] = set()
    for entry in sys.path:
        path = entry or "."
        if os.path.isdir(path):
            candidates = _scan_directory(path, group, seen)
        elif os.path.isfile(path):
            candidates = _scan_archive(path, group, seen)
        else:
            continue
        for candidate in candidates:
            found.setdefault(candidate.name, candidate)
    return sorted(found.values(), key=lambda c: c.name)


def load_reference(reference: str) -> Any:
    """Import ``module`` or ``module:attr.path`` (an entry point value)."""
    module_name, _, attr = reference.partition(":")
    target: Any = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        target = getattr(target, part)
    return target


def _scan_directory(path: str, group: str, seen: set[str]) -> Iterator[PluginCandidate]:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return
    prefix = os.path.join(path, "")
    for name in names:
        if not name.endswith(_SUFFIXES):
            continue
        key = _normalize(name.rsplit(".", 1)[0].split("-", 1)[0])
        if key in seen:
            continue
        seen.add(key)
        info = prefix + name + os.sep
        entries = _read_group(info + "entry_points.txt", group)
        if entries is None:
            continue
        dist, version = _name_and_version(info)
        for ep_name, value in entries:
            yield _candidate(ep_name, value, dist, version)


def _scan_archive(path: str, group: str, seen: set[str]) -> Iterator[PluginCandidate]:
    from importlib.metadata import distributions

    for dist in distributions(path=[path]):
        key = _normalize(dist.name or "")
        if key in seen:
            continue
        seen.add(key)
        for ep in dist.entry_points.select(group=group):
            yield _candidate(ep.name, ep.value, dist.name, dist.version)


def _candidate(name: str, value: str, dist: str | None, version: str | None) -> PluginCandidate:
    reference = value.split("[", 1)[0].strip()
    return PluginCandidate(
        name=name,
        load=functools.partial(load_reference, reference),
        entry_point=reference,
        distribution=dist,
        version=version,
    )


def _read_text(path: str) -> str | None:
    """A metadata file's UTF-8 text, or None when it is missing, unreadable or not UTF-8.

    Read through the file descriptor and decoded in one go: a scan opens hundreds of these
    small files, and file objects cost more than the reads themselves.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, _CHUNK)
        while chunk := os.read(fd, _CHUNK):
            data += chunk
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def _read_group(path: str, group: str) -> list[tuple[str, str]] | None:
    """The ``name = value`` lines of ``[group]``, or None when the file lacks that group."""
    text = _read_text(path)
    header = f"[{group}]"
    if text is None or header not in text:
        return None
    entries: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line == header
        elif inside and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            entries.append((name.strip(), value.strip()))
    return entries


def _name_and_version(info: str) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the header lines of METADATA (or PKG-INFO) in ``info``,
    a metadata directory's path ending with a separator."""
    name = version = None
    for file_name in ("METADATA", "PKG-INFO"):
        text = _read_text(info + file_name)
        if text is None:
            continue
        for line in text.splitlines():
            if line.startswith("Name:"):
                name = line[5:].strip()
            elif line.startswith("Version:"):
                version = line[8:].strip()
            elif not line.strip() or (name and version):
                break
        return name, version
    return name, version


def _normalize(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


def from_object(name: str, obj: Any, *, builtin: bool = False) -> PluginCandidate:
    """A candidate for a plugin object already in hand (built-ins, tests, the testing fixture)."""
    module = getattr(obj, "__name__", type(obj).__name__)
    return PluginCandidate(
        name=name,
        load=lambda: obj,
        entry_point=str(module),
        distribution="agent-host-core" if builtin else None,
        builtin=builtin,
    )
