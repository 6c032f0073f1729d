"""Parsing one profile file: valid files, every kind of bad field, malformed front matter."""

from __future__ import annotations

import pytest

from host.profiles.frontmatter import FrontMatterError, parse_block, split
from host.profiles.model import Diagnostic, Profile
from host.profiles.parsing import parse_profile


def parse(text: str, *, source="user", plugin=None) -> Profile | Diagnostic:
    return parse_profile(text, path="agents/p.md", source=source, plugin=plugin)


def problem(text: str) -> str:
    result = parse(text)
    assert isinstance(result, Diagnostic), result
    line = str(result)
    assert "\n" not in line and line.startswith("agents/p.md: ")
    return line.removeprefix("agents/p.md: ")


def test_a_full_profile():
    profile = parse(
        "---\n"
        "# a reviewer\n"
        "name: reviewer\n"
        "description: Review the diff  and report bugs   # not part of it\n"
        "tools: read_file, grep  Bash(git log:*)\n"
        "disallowed_tools:\n"
        "  - write_file\n"
        "  - 'shell'\n"
        "model: fast\n"
        "max_steps: 12\n"
        "background: false\n"
        "---\n"
        "\n"
        "You are a careful reviewer.\n"
        "Report findings; do not edit files.\n"
    )
    assert profile == Profile(
        name="reviewer",
        description="Review the diff and report bugs",
        source="user",
        persona="You are a careful reviewer.\nReport findings; do not edit files.",
        tools=("read_file", "grep", "Bash"),
        disallowed_tools=("write_file", "shell"),
        model="fast",
        max_steps=12,
        background=False,
        path="agents/p.md",
    )


def test_minimal_profile_defaults_and_the_plugin_name():
    profile = parse("---\nname: writer\ndescription: Writes docs\n---\n", plugin="docs")
    assert (profile.name, profile.bare_name, profile.plugin) == ("docs:writer", "writer", "docs")
    assert (profile.tools, profile.disallowed_tools, profile.persona) == (None, (), None)
    assert (profile.model, profile.max_steps, profile.background) == (None, None, None)


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ("[a, 'b', \"c\"]", ("a", "b", "c")),
        ("a,b", ("a", "b")),
        ("a b a", ("a", "b")),
        ("'*'", None),
        ("[]", ()),
        ("", None),
    ],
)
def test_tool_lists(tools, expected):
    profile = parse(f"---\nname: n\ndescription: d\ntools: {tools}\n---\n")
    assert profile.tools == expected


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ("[time, 'git']", ("time", "git")),
        ("time,git", ("time", "git")),
        ("time git time", ("time", "git")),
        ("[]", ()),
        ("", None),
    ],
)
def test_mcp_server_lists(servers, expected):
    profile = parse(f"---\nname: n\ndescription: d\nmcp_servers: {servers}\n---\n")
    assert profile.mcp_servers == expected


def test_model_inherit_means_the_default():
    assert parse("---\nname: n\ndescription: d\nmodel: Inherit\n---\n").model is None


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("description: d", "name: required"),
        ("name: n", "description: required"),
        ("name:\ndescription: d", "name: required"),
        ("name: 123\ndescription: d", "name: expected string, got integer"),
        ("name: n\ndescription: true", "description: expected string, got boolean"),
        ("name: n\ndescription: d\nmax_steps: five", "max_steps: expected integer, got string"),
        ("name: n\ndescription: d\nmax_steps: 0", "max_steps: must be a positive integer, got 0"),
        ("name: n\ndescription: d\nbackground: yes", "background: expected boolean, got string"),
        ("name: n\ndescription: d\ntools: [1, 2]", "tools: expected string, got integer"),
        (
            "name: n\ndescription: d\ntools: a, *",
            "tools: '*' (every tool) must stand alone in tools",
        ),
        (
            "name: n\ndescription: d\ndisallowed_tools: '*'",
            "disallowed_tools: '*' (every tool) must stand alone in tools",
        ),
        ("name: n\ndescription: d\ntools: a/b", "tools: 'a/b' is not a tool name"),
        ("name: n\ndescription: d\nmodel: ''", "model: must be a model name"),
        ("name: n\ndescription: d\nmcp_servers: 5", "mcp_servers: expected array, got integer"),
        ("name: n\ndescription: d\nmcp_servers: [1]", "mcp_servers: expected string, got integer"),
        (
            "name: n\ndescription: d\nmcp_servers: time, a.b",
            "mcp_servers: 'a.b' is not an MCP server name (1-32 of A-Z a-z 0-9 _ -)",
        ),
        (
            "name: n\ndescription: d\nmcp_servers: '*'",
            "mcp_servers: '*' is not an MCP server name (1-32 of A-Z a-z 0-9 _ -)",
        ),
        (
            "name: n\ndescription: d\nmemory: global",
            "memory: must be one of 'user', 'project', 'local'",
        ),
        (
            "name: n\ndescription: d\ncolor: purple",
            "color: unknown field (known: name, description, tools, disallowed_tools, model, max_steps, background, mcp_servers, memory)",
        ),
        (
            "name: n\ndescription: d\ndisallowedTools: x",
            "disallowedTools: unknown field (known: name, description, tools, disallowed_tools, model, max_steps, background, mcp_servers, memory)",
        ),
    ],
)
def test_bad_fields_are_one_line_diagnostics(front, expected):
    assert problem(f"---\n{front}\n---\nbody\n") == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../etc/passwd", "name: '../etc/passwd' is not a valid name"),
        ("a:b", "name: must not contain ':' (reserved for '<plugin>:<name>')"),
        ('"bad\\u0007bell"', "name: 'bad\\x07bell' is not a valid name"),
        ('"two\\nlines"', "name: 'two\\nlines' is not a valid name"),
        ("-dash", "name: '-dash' is not a valid name"),
        ("x" * 65, "name: longer than 64 characters"),
        ("ｒｅｖｉｅｗｅｒ", "name: 'ｒｅｖｉｅｗｅｒ' is not in Unicode NFKC form"),
        ('"  "', "name: must not be empty"),
    ],
)
def test_hostile_names(name, expected):
    assert problem(f"---\nname: {name}\ndescription: d\n---\n").startswith(expected)


def test_unicode_names_in_nfkc_form_are_fine():
    assert parse("---\nname: 审查员\ndescription: 审查代码\n---\n").name == "审查员"


def test_hostile_descriptions():
    assert problem('---\nname: n\ndescription: "a\\u202eb"\n---\n') == (
        "description: contains control or format characters"
    )
    assert problem(f"---\nname: n\ndescription: {'d' * 1025}\n---\n") == (
        "description: longer than 1024 characters"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: n\ndescription: d\n", "no front matter: the file must start with a '---' line"),
        ("", "no front matter: the file must start with a '---' line"),
        ("---\nname: n\ndescription: d\n", "front matter is not closed by a '---' line"),
        ("---\nname: n\nname: m\n---\n", "name: given twice (line 3)"),
        ("---\nname n\n---\n", "line 2: expected 'key: value'"),
        (
            "---\nname: n\nmeta:\n  key: v\n---\n",
            "line 4: unexpected indentation (nested values are not supported)",
        ),
        ("---\n- a\n---\n", "line 2: list item outside a list"),
        ("---\nname: n\n\tdescription: d\n---\n", "line 3: tabs are not allowed for indentation"),
        (
            "---\ndescription: |\n  long\n---\n",
            "description: line 2: block scalars ('|', '>') are not supported; write it on one line",
        ),
        ("---\nname: {a: 1}\n---\n", "name: line 2: only plain values and lists are supported"),
        ('---\nname: "open\n---\n', "name: line 2: unterminated or malformed quoted string"),
        ("---\ntools: [a, b\n---\n", "tools: line 2: list is not closed by ']'"),
    ],
)
def test_malformed_front_matter(text, expected):
    assert problem(text) == expected


def test_front_matter_scalars_and_crlf():
    data, body = split(
        "\ufeff---\r\na: 'it''s'\r\nb: \"x\\ty\"\r\nc: ~\r\nd: -3\r\ne: FALSE\r\n---\r\nhi\r\n"
    )
    assert data == {"a": "it's", "b": "x\ty", "c": None, "d": -3, "e": False}
    assert body == "hi"
    assert parse_block(["k: a # note", "l: C# code", "m: [x, 'y, z'] "]) == {
        "k": "a",
        "l": "C# code",
        "m": ["x", "y, z"],
    }
    with pytest.raises(FrontMatterError):
        parse_block(["k: [a, 'b]"])


def test_plain_values_are_read_as_a_profile_means_them_not_as_yaml_1_1():
    assert parse_block(["a: yes", "b: on", "c: 010", "d: 1.5", "e: 2024-01-01", "f: 1_000"]) == {
        "a": "yes",
        "b": "on",
        "c": 10,
        "d": "1.5",
        "e": "2024-01-01",
        "f": "1_000",
    }
    assert parse_block(["description: Use it when: the user asks"]) == {
        "description": "Use it when: the user asks"
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nname: &n n\n---\n", "name: line 2: only plain values and lists are supported"),
        ("---\nname: !!str n\n---\n", "name: line 2: only plain values and lists are supported"),
        ("---\ntools: [a, [b]]\n---\n", "tools: line 2: only plain values and lists are supported"),
        (
            "---\ntools:\n  - a\n  - a: b\n---\n",
            "tools: line 4: only plain values and lists are supported",
        ),
        ('---\nname: "a\\qb"\n---\n', "name: line 2: bad escape in quoted string"),
        ("---\nname: n\ndescription\n---\n", "line 3: expected 'key: value'"),
    ],
)
def test_yaml_beyond_a_profile_is_one_line(text, expected):
    assert problem(text) == expected
