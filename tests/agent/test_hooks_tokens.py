"""SPEC §11.3 'the call's input is scanned for path tokens': the pure parts of surfacing."""

from __future__ import annotations

import pytest

from canon_ls.agent.tokens import (
    Token,
    canon_cli_calls,
    is_canon_tool,
    succeeded,
    tokens,
)


def found(tool: str, tool_input: object) -> dict[str, bool]:
    return {t.text: t.mutating for t in tokens(tool, tool_input)}


def test_edit_tools_write_their_path() -> None:
    assert found("Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "y"}) == {
        "/p/a.py": True
    }
    assert found("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x"}) == {
        "n.ipynb": True
    }


def test_read_is_not_a_write() -> None:
    assert found("Read", {"file_path": "/p/a.py", "offset": 3}) == {"/p/a.py": False}


def test_apply_patch_headers() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: new/file.py\n+x\n*** Delete File: old.py\n"
        "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x\n+y\n*** End Patch\n"
    )
    assert found("apply_patch", {"command": patch}) == {
        "new/file.py": True,
        "old.py": True,
        "src/a.py": True,
        "src/b.py": True,
    }


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat src/a.py | grep -n x", {"src/a.py": False, "grep": False, "cat": False, "x": False}),
        ("rm -rf build/out", {"rm": True, "build/out": True}),
        ("echo hi > notes.txt", {"echo": False, "hi": False, "notes.txt": True}),
        ("sed -i 's/a/b/' f.py", {"sed": True, "s/a/b/": True, "f.py": True}),
        ("sed -n 1,5p f.py", {"sed": False, "1,5p": False, "f.py": False}),
        ("git mv a.py b.py", {"git": True, "mv": True, "a.py": True, "b.py": True}),
        ("git status", {"git": False, "status": False}),
        ("FOO=1 rm x.py", {"FOO=1": True, "rm": True, "x.py": True}),
        ("sudo touch t.py && ls", {"sudo": True, "touch": True, "t.py": True, "ls": False}),
        ("pytest --rootdir=tests/unit -q", {"pytest": False, "tests/unit": False}),
    ],
)
def test_shell_words_and_mutations(command: str, expected: dict[str, bool]) -> None:
    assert found("Bash", {"command": command}) == expected


def test_codex_argv_form() -> None:
    assert found("shell", {"command": ["bash", "-lc", "cat src/a.py"]}) == {
        "cat": False,
        "src/a.py": False,
    }


def test_mcp_arguments_are_walked() -> None:
    got = found("mcp__fs__read", {"request": {"paths": ["a/b.py", "c.md"], "note": "see d/e.py"}})
    assert got == {"a/b.py": False, "c.md": False, "d/e.py": False, "see": False}


def test_globs_urls_and_junk_are_dropped() -> None:
    got = found("Grep", {"pattern": "*.py", "path": "https://x.org/a", "glob": "src/**/*.ts"})
    assert got == {}
    assert tokens("Read", "not a dict") == []


def test_path_shaped_tokens_come_first() -> None:
    words = " ".join(f"w{i}" for i in range(200))
    got = tokens("Agent", {"prompt": f"{words} src/a.py"})
    assert got[0] == Token("src/a.py", False) and len(got) == 64


@pytest.mark.parametrize(
    "name", ["mcp__canon__canon", "mcp__plugin_canon_canon__canon", "mcp__memory__canon"]
)
def test_canon_tool_names(name: str) -> None:
    assert is_canon_tool(name)


@pytest.mark.parametrize("name", ["canon", "mcp__canon__canonical", "Read", "mcp__canon__map"])
def test_not_canon_tool_names(name: str) -> None:
    assert not is_canon_tool(name)


def test_canon_cli_calls() -> None:
    assert canon_cli_calls("canon read src/a.py && canon write src/b.py --capsule x") == [
        ("read", "src/a.py"),
        ("write", "src/b.py"),
    ]
    assert canon_cli_calls("canon map src") == []
    assert canon_cli_calls("echo 'unbalanced") == []


@pytest.mark.parametrize(
    ("response", "ok"),
    [
        ({"stdout": "", "interrupted": False}, True),
        ({"interrupted": True}, False),
        ({"content": [], "isError": True}, False),
        ({"exit_code": 2}, False),
        ("Exit code: 0\nOutput:\nSuccess.", True),
        ("Exit code: 1\nOutput:\nerror", False),
        ("plain output", True),
        (None, True),
    ],
)
def test_succeeded(response: object, ok: bool) -> None:
    assert succeeded(response) is ok


def test_each_line_of_a_script_is_its_own_command() -> None:
    got = found("Bash", {"command": "cat a.py\nrm b.py\n\necho 'x\ny' > c.txt"})
    assert got == {"cat": False, "a.py": False, "rm": True, "b.py": True, "echo": False,
                   "c.txt": True}  # fmt: skip
