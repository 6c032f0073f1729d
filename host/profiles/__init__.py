"""Subagent profiles: Markdown files defining reusable children (persona, tools, model).

A profile is a Markdown file with a front-matter block (``host.profiles.parsing``); profiles
come from the built-ins, the user's ``~/.agent-host/agents/``, the project's
``.agent-host/agents/`` and plugins (``register_profiles``), later sources overriding earlier
ones by name (``host.profiles.sources``). The delegation tool resolves its ``subagent_type``
argument with ``host.profiles.matching.resolve``. The ``profiles`` service is a
``ProfileLibrary``. See docs/profiles.md.
"""

from __future__ import annotations

from host.profiles.library import ProfileLibrary
from host.profiles.model import Diagnostic, Profile, ProfileError, ProfileSet

__all__ = ["Diagnostic", "Profile", "ProfileError", "ProfileLibrary", "ProfileSet"]
