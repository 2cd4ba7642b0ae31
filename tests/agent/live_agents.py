"""Shared set-up for the live agent tests: a project with `canon init AGENT`, the agent's
environment pointed at a loopback fake model API, and one scripted headless run."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from fake_anthropic import FakeAnthropic, Recorded
from fake_openai import FakeOpenAI, Request
from hookrun import canon_command, make_project


class Session(NamedTuple):
    """One finished agent run: the process, what reached the model, and the hook trace."""

    run: subprocess.CompletedProcess[str]
    requests: list[Any]
    trace: Path


def initialised_project(root: Path, agent: str) -> Path:
    """make_project, then `canon init AGENT` in it (which must succeed)."""
    project = make_project(root)
    done = subprocess.run([*canon_command(), "init", agent], cwd=project,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return project


def agent_path() -> str:
    """PATH for the agent: the `canon` script and this interpreter first, then the caller's."""
    bin_dir = str(Path(canon_command()[0]).parent) if len(canon_command()) == 1 else ""
    return os.pathsep.join(p for p in (bin_dir, str(Path(sys.executable).parent),
                                       os.environ.get("PATH", "")) if p)  # fmt: skip


def _assert_ran(run: subprocess.CompletedProcess[str]) -> None:
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def claude_env(home: Path, base_url: str, state: Path, trace: Path) -> dict[str, str]:
    return {
        "PATH": agent_path(),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "XDG_STATE_HOME": str(state),
        "CANON_TRACE": str(trace),
        "CANON_TODAY": "2026-11-29",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # the checkout under test, if given
    }


def run_claude(
    claude_bin: Path,
    project: Path,
    tmp_path: Path,
    script: Callable[[int, Recorded], list[dict]],
    prompt: str,
    *extra: str,
) -> Session:
    """`claude -p PROMPT --output-format json EXTRA...` against a scripted fake Messages API;
    the run must succeed."""
    home, state, trace = tmp_path / "home", tmp_path / "state", tmp_path / "trace.jsonl"
    home.mkdir(exist_ok=True)  # a test may have installed a plugin there first
    with FakeAnthropic(script) as fake:
        run = subprocess.run(
            [claude_bin, "-p", prompt, "--output-format", "json", *extra],
            cwd=project, env=claude_env(home, fake.url, state, trace),
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        requests = fake.main_requests()
    _assert_ran(run)
    return Session(run, requests, trace)


def codex_home(tmp_path: Path, base_url: str, project: Path) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)  # a test may have installed a plugin there first
    installed = (home / "config.toml").read_text() if (home / "config.toml").exists() else ""
    (home / "config.toml").write_text(
        'model = "gpt-5.5"\n'
        'model_provider = "fake"\n\n'
        "[model_providers.fake]\n"
        'name = "Fake"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        'env_key = "FAKE_OPENAI_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n\n"
        f'[projects."{project}"]\n'
        'trust_level = "trusted"\n\n' + installed  # the plugins' tables after the provider
    )
    return home


def run_codex(
    codex_bin: Path,
    project: Path,
    tmp_path: Path,
    script: Callable[[int, Request], list[dict]],
    prompt: str,
    *,
    traced: bool = True,
) -> Session:
    """`codex exec PROMPT` (trusted project, hooks unreviewed-ok, no sandbox) against a
    scripted fake Responses API; the run must succeed."""
    state, trace, home = tmp_path / "state", tmp_path / "trace.jsonl", tmp_path / "home"
    home.mkdir(exist_ok=True)  # a test may have installed a plugin there first
    with FakeOpenAI(script) as fake:
        env = {
            "PATH": agent_path(),
            "HOME": str(home),
            "CODEX_HOME": str(codex_home(tmp_path, fake.url, project)),
            "FAKE_OPENAI_KEY": "sk-test-not-a-key",
            "XDG_STATE_HOME": str(state),
            "CANON_TODAY": "2026-11-29",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # the checkout under test, if given
        }
        if traced:
            env["CANON_TRACE"] = str(trace)
        run = subprocess.run(
            [codex_bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
             "--dangerously-bypass-approvals-and-sandbox", prompt],
            cwd=project, env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        requests = fake.responses()
    _assert_ran(run)
    return Session(run, requests, trace)
