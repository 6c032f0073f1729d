"""Subagent profiles: Markdown files defining reusable children (persona, tools, model).

A profile is a Markdown file with a front-matter block (``host.profiles.parsing``); profiles
come from the built-ins, the user's ``~/.agent-host/agents/``, the project's
``.agent-host/agents/``, Claude Code's agent files (``host.profiles.claude``) and plugins
(``register_profiles``), later sources overriding earlier ones by name
(``host.profiles.sources``). A profile may give its children a persistent memory
(``host.profiles.memory``). The delegation tool resolves its ``subagent_type`` argument with
``host.profiles.matching.resolve``. The ``profiles`` service is a ``ProfileLibrary``. See
docs/profiles.md.

Names are imported from their modules on first use: the host imports
``host.profiles.library`` at start-up, and the profile values are needed only once profiles
are read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.lazy import lazy_attributes

if TYPE_CHECKING:
    from host.profiles.library import ProfileLibrary
    from host.profiles.model import Diagnostic, Profile, ProfileError, ProfileSet

_SOURCES = {
    "Diagnostic": "host.profiles.model",
    "Profile": "host.profiles.model",
    "ProfileError": "host.profiles.model",
    "ProfileLibrary": "host.profiles.library",
    "ProfileSet": "host.profiles.model",
}

__getattr__ = lazy_attributes(__name__, _SOURCES)

__all__ = ["Diagnostic", "Profile", "ProfileError", "ProfileLibrary", "ProfileSet"]
