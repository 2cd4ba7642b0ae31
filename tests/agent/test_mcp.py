"""End-to-end tests of `canon mcp` (SPEC §11.2) through the official SDK's stdio client.

The server is the real `canon mcp` process; the client is `mcp.Client` over
`StdioServerParameters` (which drives `mcp.client.stdio.stdio_client`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from canon_ls.agent.mcp import session_of
from canon_ls.core import tool
from canon_ls.core.storage.store import Store

TODAY = "2026-11-29"


def server_params(
    project: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> StdioServerParameters:
    script = Path(sys.executable).with_name("canon")
    command, args = (
        (str(script), []) if script.exists() else (sys.executable, ["-m", "canon_ls.agent.cli"])
    )
    return StdioServerParameters(
        command=command,
        args=[*args, "--project", str(project), "mcp"],
        env={"CANON_TODAY": TODAY, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **(env or {})},
        cwd=str(cwd or project),
    )


def text_of(result: object) -> str:
    content = result.content  # type: ignore[attr-defined]
    assert len(content) == 1
    return str(content[0].text)


@pytest.mark.timeout(120)
async def test_lists_one_tool_with_the_action_enum_schema(project: Path) -> None:
    """SPEC §11.2: one tool `canon`, input schema = the §6 action object (action an enum)."""
    async with Client(server_params(project)) as client:
        listed = await client.list_tools()
    assert [t.name for t in listed.tools] == ["canon"]
    schema = listed.tools[0].input_schema
    assert schema == tool.input_schema()
    assert schema["properties"]["action"]["enum"] == list(tool.ACTIONS)
    assert "action" in schema.get("required", [])
    assert not (project / ".canon").exists(), "starting the server creates nothing (SPEC §2)"


@pytest.mark.timeout(120)
async def test_the_filing_advice_follows_the_retrieval_option(project: Path) -> None:
    """Without the retrieval lane, knowledge filed where no file lies never surfaces, and the
    description says to file at the asset; with `retrieval = "lexical"` it says to file a rule
    over many files under its own name with scope "rule" (SPEC §11.4)."""
    async with Client(server_params(project)) as client:
        spine = (await client.list_tools()).tools[0].description or ""
    (project / "canon.toml").write_text('retrieval = "lexical"\n')
    async with Client(server_params(project)) as client:
        lane = (await client.list_tools()).tools[0].description or ""
    assert "never shown to an agent unless it asks" in spine and 'scope "rule"' not in spine
    assert 'with scope "rule"' in lane and "never shown" not in lane
    assert spine.startswith(tool.DESCRIPTION) and lane.startswith(tool.DESCRIPTION)


@pytest.mark.timeout(120)
async def test_the_doctrine_rides_the_description_and_the_instructions(project: Path) -> None:
    """Paid on every request, so short: journal a source as it came (names, exact numbers),
    open an article a line names, file a constraint at what it governs."""
    async with Client(server_params(project)) as client:
        described = (await client.list_tools()).tools[0].description or ""
        instructions = client.instructions or ""
    for text in (described, instructions):
        assert "exact numbers" in text and "only the journal keeps the original" in text
        assert "the line is not the article" in text
        assert "constraint at the file or folder it governs" in text
    assert len(instructions) < 500 and len(described) < 1200


@pytest.mark.timeout(120)
async def test_every_action_end_to_end(project: Path) -> None:
    """SPEC §6 via MCP: read miss, write, read, journal (harness: mcp, session), map, search."""
    async with Client(server_params(project)) as client:
        miss = await client.call_tool("canon", {"action": "read", "path": "src/core/config.py"})
        assert not miss.is_error
        assert "src/core/config" in text_of(miss)

        wrote = await client.call_tool(
            "canon",
            {"action": "write", "path": "src/core/config.py", "capsule": "Layered config."},
        )
        assert not wrote.is_error, text_of(wrote)
        assert text_of(wrote).startswith("Wrote src/core/config.")

        read = await client.call_tool("canon", {"action": "read", "path": "src/core/config.py"})
        assert "Layered config." in text_of(read)

        journal = await client.call_tool(
            "canon",
            {"action": "journal", "body": "Env now beats file.", "subject": ["src/core/config"]},
            meta={"sessionId": "sess-42"},
        )
        assert not journal.is_error, text_of(journal)

        mapped = await client.call_tool("canon", {"action": "map"})
        assert "src/core/config: Layered config." in text_of(mapped)

        found = await client.call_tool("canon", {"action": "search", "query": "layered"})
        assert "src/core/config" in text_of(found)
        with_journal = await client.call_tool(
            "canon", {"action": "search", "query": "beats", "journal": True}
        )
        assert TODAY in text_of(with_journal)

    entries = list((project / ".canon" / "journal").glob("*.md"))
    assert len(entries) == 1
    text = entries[0].read_text("utf-8")
    assert "harness: mcp" in text
    assert "sess-42" in text
    assert "src/core/config" in text


@pytest.mark.timeout(120)
async def test_bad_arguments_are_one_sentence_errors(project: Path) -> None:
    """SPEC §6: unknown actions and wrong types get one sentence (isError), never a traceback."""
    async with Client(server_params(project)) as client:
        for arguments in (
            {"action": "delete"},
            {"action": "read", "path": 5},
            {"path": "a"},
            {"action": "search", "query": "x", "journal": "yes"},
        ):
            result = await client.call_tool("canon", arguments)
            assert result.is_error, arguments
            text = text_of(result)
            assert "Traceback" not in text and "\n" not in text.strip(), text
        still_alive = await client.call_tool("canon", {"action": "map"})
        assert not still_alive.is_error
    assert not (project / ".canon").exists()


@pytest.mark.timeout(120)
async def test_external_edits_are_seen_without_restart(project: Path) -> None:
    """The store is re-validated before each call: a hand edit shows on the next call."""
    async with Client(server_params(project), mode="legacy") as client:
        await client.call_tool("canon", {"action": "write", "path": "src/a", "capsule": "First."})
        article = project / ".canon" / "articles" / "src" / "a.md"
        article.write_text(
            article.read_text("utf-8").replace("First.", "Edited by hand."), encoding="utf-8"
        )
        read = await client.call_tool("canon", {"action": "read", "path": "src/a"})
        assert "Edited by hand." in text_of(read)
        (project / ".canon" / "articles" / "src" / "b.md").write_text(
            "---\ncapsule: Added by hand.\n---\n", encoding="utf-8"
        )
        mapped = await client.call_tool("canon", {"action": "map"})
        assert "src/b: Added by hand." in text_of(mapped)


def test_session_id_comes_from_request_meta() -> None:
    """SPEC §11.2: the client's session id when offered (documented in canon_ls/agent/mcp.py)."""
    assert session_of(None) is None
    assert session_of({}) is None
    assert session_of({"sessionId": "a"}) == "a"
    assert session_of({"session_id": "b"}) == "b"
    assert session_of({"claudecode/sessionId": "c"}) == "c"
    assert session_of({"progressToken": 3}) is None


@pytest.mark.timeout(120)
async def test_mcp_text_is_the_cli_text(project: Path) -> None:
    """SPEC §6: the CLI and the MCP server return the same text for the same action."""
    cli = server_params(project).args[:-1]  # the same command line without "mcp"
    command = server_params(project).command
    env = {**os.environ, "CANON_TODAY": TODAY}
    subprocess.run(
        [command, *cli, "write", "src/core/config.py", "--capsule", "Same text."],
        env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    async with Client(server_params(project)) as client:
        for action in (
            {"action": "read", "path": "src/core/config.py"},
            {"action": "map"},
            {"action": "search", "query": "same"},
        ):
            via_mcp = text_of(await client.call_tool("canon", action))
            via_cli = subprocess.run(
                [command, *cli, "tool", json.dumps(action)],
                env=env, capture_output=True, text=True, timeout=120,
            ).stdout  # fmt: skip
            assert via_cli == via_mcp + "\n", action


@pytest.mark.timeout(120)
async def test_session_from_the_environment_when_meta_has_none(project: Path) -> None:
    """Claude Code starts the server with CLAUDE_CODE_SESSION_ID and sends no session in
    `_meta` (observed with 2.1.332); a `_meta` session id, when sent, wins."""
    params = server_params(project, env={"CLAUDE_CODE_SESSION_ID": "cc-session-7"})
    async with Client(params) as client:
        await client.call_tool("canon", {"action": "journal", "body": "From env.", "slug": "a"})
        await client.call_tool(
            "canon",
            {"action": "journal", "body": "From meta.", "slug": "b"},
            meta={"sessionId": "meta-session-9"},
        )
    journal = project / ".canon" / "journal"
    assert "cc-session-7" in (journal / f"{TODAY}-a.md").read_text("utf-8")
    text_b = (journal / f"{TODAY}-b.md").read_text("utf-8")
    assert "meta-session-9" in text_b and "cc-session-7" not in text_b


@pytest.mark.timeout(120)
async def test_spec_6_string_subject_through_mcp_and_cli(project: Path) -> None:
    """SPEC §6 journal: a bare string subject is a one-element array through the MCP server
    (its input schema admits it) and `canon tool` alike."""
    async with Client(server_params(project)) as client:
        result = await client.call_tool(
            "canon",
            {"action": "journal", "body": "About config.", "subject": "src/core/config.py"},
        )
        assert not result.is_error, text_of(result)
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "canon_ls.agent.cli",
            "--project",
            str(project),
            "tool",
            json.dumps({"action": "journal", "body": "Again.", "subject": "src/core/config.py"}),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "CANON_TODAY": TODAY},
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    store = Store(project)
    assert len(store.journal_names("src/core/config")) == 2
    names = sorted(p.name for p in (project / ".canon/journal").iterdir())
    assert len(names) == 2
    for name in names:
        text = (project / ".canon/journal" / name).read_text()
        assert "subject: [src/core/config]\n" in text, text


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("client_name", "source"),
    [("codex-mcp-client", "codex"), ("Claude Code", "claude-code"), ("My IDE/2", "my-ide-2")],
)
async def test_spec_11_2_journal_source_is_the_harness_named_by_client_info(
    project: Path, client_name: str, source: str
) -> None:
    """SPEC §11.2: the journal entry's `source` is the harness the client names in its
    `clientInfo` (one short lowercase word), with the session id it offers."""
    from mcp.types import Implementation

    info = Implementation(name=client_name, version="1.0")
    async with Client(server_params(project), client_info=info) as client:
        result = await client.call_tool(
            "canon",
            {"action": "journal", "body": "From a named client.", "slug": "named"},
            meta={"sessionId": "thread-5"},
        )
        assert not result.is_error, text_of(result)
    text = (project / ".canon" / "journal" / f"{TODAY}-named.md").read_text("utf-8")
    assert f"harness: {source}\n" in text and "session: thread-5" in text


def test_harness_name_is_one_short_lowercase_word() -> None:
    from canon_ls.agent.mcp import harness_name

    assert harness_name("claude-code") == "claude-code"
    assert harness_name("codex-mcp-client") == "codex"
    assert harness_name("mcp") == "mcp"  # the SDK's default client name
    assert harness_name("") == harness_name("  ") == harness_name("!!") == "mcp"
    assert harness_name(None) == harness_name(7) == "mcp"
    assert harness_name("Zed Editor Assistant Panel Client") == "zed-editor-assistant"
    assert harness_name("x" * 100) == "x" * 24
    assert harness_name("cursor\nsource: evil") == "cursor-source-evil"


@pytest.mark.timeout(120)
async def test_spec_13_retrieval_flag_flips_the_filing_advice(project: Path) -> None:
    """`canon mcp --retrieval lexical` is the explicit layer: the tool description gives the
    lane's filing advice though canon.toml says none."""
    (project / "canon.toml").write_text('retrieval = "none"\n', encoding="utf-8")
    params = server_params(project)
    params.args = [*params.args, "--retrieval", "lexical"]
    async with Client(params) as client:
        listed = await client.list_tools()
    assert listed.tools[0].description == tool.description(lane=True)
    async with Client(server_params(project)) as client:
        listed = await client.list_tools()
    assert listed.tools[0].description == tool.description(lane=False)


@pytest.mark.timeout(120)
async def test_issue_24_paths_outside_the_project_or_in_git_are_refused(project: Path) -> None:
    """The MCP tool refuses what the CLI refuses: one sentence, isError, nothing written."""
    async with Client(server_params(project)) as client:
        for path in ("/etc/hosts", ".git/config", "file:///etc/hosts"):
            result = await client.call_tool(
                "canon", {"action": "write", "path": path, "capsule": "x"}
            )
            assert result.is_error and text_of(result).startswith("Refused: "), path
    assert not (project / ".canon").exists()


@pytest.mark.timeout(120)
async def test_issue_24_an_untrusted_canon_toml_cannot_move_the_mcp_store(
    project: Path, tmp_path: Path
) -> None:
    """canon.toml pointing at another project's store: the MCP server serves the project's
    own store until `canon trust` (a cloned repository cannot read another's memory)."""
    other = tmp_path / "other"
    other.mkdir()
    Store(other).write("src", capsule="PRIVATE capsule.")
    (project / "canon.toml").write_text(f'root = "{other / ".canon"}"\n', encoding="utf-8")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    async with Client(server_params(project, env=env)) as client:
        mapped = text_of(await client.call_tool("canon", {"action": "map"}))
    assert "PRIVATE" not in mapped
    params = server_params(project, env=env)
    trusted = subprocess.run(
        [params.command, *params.args[:-1], "trust"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert trusted.returncode == 0, trusted.stderr
    async with Client(params) as client:
        assert "PRIVATE" in text_of(await client.call_tool("canon", {"action": "map"}))


class RawMcp:
    """The real `canon mcp` process spoken to line by line (JSON-RPC as bytes), for requests
    the SDK's client would never send."""

    def __init__(self, project: Path) -> None:
        params = server_params(project)
        self.proc = subprocess.Popen(
            [params.command, *params.args],
            cwd=params.cwd,
            env={**os.environ, **(params.env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.call(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw"}},
        )
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30) -> dict:
        """The next line the server writes, within `timeout` seconds."""
        import select

        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no answer"
        return json.loads(self.proc.stdout.readline())

    def call(self, method: str, params: dict | None = None, raw_params: str = "") -> dict:
        self.next_id += 1
        body = raw_params or json.dumps(params or {})
        self.send(
            f'{{"jsonrpc": "2.0", "id": {self.next_id}, "method": "{method}", "params": {body}}}'
        )
        got = self.answer()
        assert got.get("id") == self.next_id, got
        return got

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


@pytest.mark.timeout(120)
def test_every_request_gets_an_answer(project: Path) -> None:
    """SPEC §6, §11.2: a tools/call whose arguments hold a lone surrogate escape, or nest 250
    or 50,000 levels deep, is answered (as `canon tool` answers it, or with one sentence), and
    the server keeps serving."""
    raw = RawMcp(project)
    try:
        call = '{"name": "canon", "arguments": {"action": "journal", "body": %s}}'
        lone = raw.call("tools/call", raw_params=call % '"\\ud800 lone surrogate"')
        assert "Journaled" in lone["result"]["content"][0]["text"], lone
        deep = raw.call("tools/call", raw_params=call % ("[" * 250 + "]" * 250))
        assert deep["result"]["isError"], deep
        assert '"body" must be a string' in deep["result"]["content"][0]["text"], deep
        deeper = raw.call("tools/call", raw_params=call % ("[" * 50_000 + "]" * 50_000))
        assert "nested too deeply" in deeper["error"]["message"], deeper
        mapped = raw.call("tools/call", {"name": "canon", "arguments": {"action": "map"}})
        assert not mapped["result"].get("isError"), mapped
    finally:
        raw.close()


def test_spec_11_2_a_read_rechecks_only_the_files_up_its_address(project: Path) -> None:
    """A server that stays up answers a read without re-scanning the whole store (46k article
    files at 50k articles); an article another process writes meanwhile still shows."""
    from canon_ls.agent.mcp import _call

    (project / "src").mkdir(exist_ok=True)
    (project / "src/a.py").write_text("A = 1\n")
    tool.run(Store(project), {"action": "write", "path": "src/a", "capsule": "First."})
    served = Store(project)
    assert "capsule: First." in _call(served, {"action": "read", "path": "src/a"}, None, "mcp").text
    tool.run(Store(project), {"action": "write", "path": "src/a/b", "capsule": "Second."})
    text = _call(served, {"action": "read", "path": "src/a/b/c.py"}, None, "mcp").text
    assert text.startswith("src/a/b governs src/a/b/c") and "capsule: Second." in text
    assert not served.loaded


SCAN_SPY = """
import os, sys
_scandir, _log = os.scandir, os.environ["CANON_TEST_SCANS"]

def scandir(path="."):
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if caller == "canon_ls.core.git.evidence_cache":
        with open(_log, "a", encoding="utf-8") as fh:
            fh.write(os.fspath(path) + "\\n")
    return _scandir(path)

os.scandir = scandir
"""


@pytest.mark.timeout(180)
async def test_spec_9_1_a_warm_read_walks_no_folder_and_an_edit_inside_still_shows(
    tmp_path: Path,
) -> None:
    """SPEC §6 read, §9.1, §11.2: the server that stays up knows each folder's newest change
    (one walk of ctimes, then file events), so a read of a folder article whose evidence is kept
    runs no git and lists none of the folders it governs (a folder article at 50k governs up
    to 78k files: 60 ms of stats per read); an edit of a file deep inside, in place (no folder
    moves), still shows in the very next read, as a read with no cache says; so does one after
    a folder it walked was replaced, or after events were lost (then it walks again)."""
    from stale_repo import build, git, noon, write

    root = build(tmp_path / "proj").root
    for i in range(20):
        write(root, f"src/deep/d{i}/e/f.py", f"X = {i}\n")
    write(root, "noise/.keep", "")  # a folder outside the article's, for many events
    article = "---\ncapsule: Deep.\nupdated: 2026-11-28\n---\nBody.\n"
    write(root, ".canon/articles/src/deep.md", article)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Deep", date="2026-11-27")
    spy, scans, gits = tmp_path / "spy", tmp_path / "scans.log", tmp_path / "git.log"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(SCAN_SPY)
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (spy / "git").write_text(f'#!/bin/sh\necho "$*" >> "{gits}"\nexec {real} "$@"\n')
    (spy / "git").chmod(0o755)
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(spy), os.environ.get("PYTHONPATH")) if p),
        "PATH": f"{spy}{os.pathsep}{os.environ['PATH']}",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "CANON_TEST_SCANS": str(scans),
    }

    def logged(log: Path) -> list[str]:
        lines = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return lines

    def fresh() -> str:  # a read in a new process with no cache at all
        params = server_params(root)
        done = subprocess.run(
            [params.command, *params.args[:-1], "tool", '{"action": "read", "path": "src/deep"}'],
            cwd=root,
            env={**os.environ, "CANON_TODAY": TODAY, "CANON_NO_CACHE": "1"},
            capture_output=True,
            text=True,
        )
        return done.stdout.rstrip("\n")

    def edit(rel: str, text: str) -> None:  # dated the day after the article's update
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)  # in place: no folder moves
        os.utime(root / rel, (noon("2026-11-29"), noon("2026-11-29")))

    async with Client(server_params(root, env=env)) as client:

        async def read() -> str:
            return text_of(await client.call_tool("canon", {"action": "read", "path": "src/deep"}))

        async def warm() -> str:
            """A read once the files just written settled (3 s) and the server's walk ended."""
            deadline, walked = time.monotonic() + 60, ["(no read yet)"]
            while time.monotonic() < deadline:
                logged(scans), logged(gits)
                text = await read()
                walked = [p for p in logged(scans) if p.startswith(str(root / "src/deep"))]
                if not walked and not logged(gits):
                    return text
                await anyio.sleep(0.2)
            raise AssertionError(f"a warm read still lists the folders it governs: {walked[:3]}")

        first = await read()
        assert first.startswith("src/deep\ncapsule: Deep.") and "stale:" not in first, first
        assert await warm() == first
        edit("src/deep/d7/e/f.py", "X = 70\n")
        after = await read()
        assert "1 file changed uncommitted in 1 day since updated 2026-11-28" in after, after
        assert after == fresh()
        assert await warm() == after
        shutil.rmtree(root / "src/deep/d3")  # a folder walked goes: the server walks again
        edit("src/deep/d3/e/f.py", "X = 30\n")
        assert "2 files changed uncommitted" in (replaced := await read()), replaced
        assert replaced == fresh()
        assert await warm() == replaced
        edit("src/deep/d12/e/f.py", "X = 120\n")
        assert "3 files changed uncommitted" in (last := await read()), last
        assert last == fresh()
        queue = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        assert await warm() == last and queue < 200_000, queue
        for i in range(queue):  # more events than the kernel keeps: the edit's event is lost
            (root / f"noise/{i}.o").write_bytes(b"")
        edit("src/deep/d15/e/f.py", "X = 150\n")
        assert "4 files changed uncommitted" in (lost := await read()), lost
    assert lost == fresh()
