"""Resolving subagent_type: exact, forgiving, ambiguous, unknown."""

from __future__ import annotations

import pytest

from host.profiles.matching import normalize, resolve
from host.profiles.model import Profile, ProfileError, ProfileSet


def profiles(*names: str, aliases=()) -> ProfileSet:
    made = [
        Profile(
            name=n,
            description="d",
            source="plugin" if ":" in n else "user",
            plugin=n.split(":")[0] if ":" in n else None,
        )
        for n in names
    ]
    return ProfileSet(profiles=tuple(made), aliases=tuple(aliases))


def test_normalize():
    assert normalize("Code_Reviewer - X") == "codereviewerx"
    assert (
        normalize("ＣＯＤＥ　reviewer") == "codereviewer"
    )  # NFKC: full-width letters, ideographic space


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("code-reviewer", "code-reviewer"),
        ("Code Reviewer", "code-reviewer"),
        ("CODE_REVIEWER", "code-reviewer"),
        ("ｃｏｄｅ－ｒｅｖｉｅｗｅｒ", "code-reviewer"),
        ("writer", "docs:writer"),  # exact alias
        ("Writer", "docs:writer"),  # forgiving alias
        ("DOCS:WRITER", "docs:writer"),
    ],
)
def test_resolves_to_the_canonical_name(query, expected):
    found = resolve(
        query, profiles("code-reviewer", "docs:writer", aliases=[("writer", "docs:writer")])
    )
    assert found.name == expected


def test_exact_wins_over_forgiving():
    assert resolve("Reviewer", profiles("reviewer", "Reviewer")).name == "Reviewer"


def test_several_forgiving_matches_are_ambiguous():
    with pytest.raises(ProfileError) as caught:
        resolve("code reviewer", profiles("code-reviewer", "Code_Reviewer", "other"))
    assert caught.value.code == "AMBIGUOUS_PROFILE"
    assert caught.value.message == (
        "subagent_type 'code reviewer' matches several profiles: code-reviewer, Code_Reviewer; "
        "use one exactly"
    )


@pytest.mark.parametrize("query", ["nobody", "", "  ", "-"])
def test_no_match_lists_what_exists(query):
    with pytest.raises(ProfileError) as caught:
        resolve(query, profiles("alpha", "docs:writer"))
    assert caught.value.code == "UNKNOWN_PROFILE"
    assert caught.value.message == (
        f"unknown subagent_type {query!r}; available profiles: alpha, docs:writer"
    )
