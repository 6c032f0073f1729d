"""Resolving a ``subagent_type`` to a profile: exact first, then forgiving.

Exact: a canonical name or a plugin profile's bare alias. Forgiving: both sides compared after
Unicode NFKC normalization, case folding, and removing whitespace, hyphens and underscores.
One match resolves to its canonical name; several are an ``AMBIGUOUS_PROFILE`` error listing
the candidates; none is an ``UNKNOWN_PROFILE`` error listing what exists.
"""

from __future__ import annotations

import unicodedata

from host.profiles.model import Profile, ProfileError, ProfileSet


def normalize(name: str) -> str:
    """The forgiving form of a name: NFKC, case-folded, without spaces, ``-`` and ``_``."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(char for char in folded if not char.isspace() and char not in "-_")


def resolve(query: str, profiles: ProfileSet, *, asked: str = "subagent_type") -> Profile:
    """The profile ``query`` names (see the module docstring); errors name what asked for it
    (``asked``: the delegation tool's ``subagent_type``, or a root's ``profile``)."""
    exact = profiles.get(query)
    if exact is not None:
        return exact
    aliases = dict(profiles.aliases)
    if query in aliases:
        found = profiles.get(aliases[query])
        if found is not None:
            return found
    wanted = normalize(query)
    candidates: list[Profile] = []
    for profile in profiles.profiles:
        forms = {
            normalize(profile.name),
            *(normalize(a) for a in profiles.aliases_of(profile.name)),
        }
        if wanted and wanted in forms:
            candidates.append(profile)
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        names = ", ".join(profile.name for profile in candidates)
        raise ProfileError(
            "AMBIGUOUS_PROFILE",
            f"{asked} {query!r} matches several profiles: {names}; use one exactly",
        )
    known = ", ".join(profiles.names()) or "none"
    raise ProfileError(
        "UNKNOWN_PROFILE", f"unknown {asked} {query!r}; available profiles: {known}"
    )
