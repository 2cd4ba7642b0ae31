"""`canon graph` (SPEC §11.1, §12): self-contained HTML, every piece of store content escaped."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from canon_ls.agent.graph import graph_data
from canon_ls.core.storage.project import open_store

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>&amp;'


def canon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("canon")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "canon_ls.agent.cli"]
    env = dict(os.environ, CANON_TODAY="2026-11-29")
    return subprocess.run(
        [*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    articles = project / ".canon" / "articles"
    (articles / "src").mkdir(parents=True)
    (articles / "src" / "app.md").write_text(
        f"---\ncapsule: '{HOSTILE}'\n---\n# src/app\nSee [[src/lib]] and [[{HOSTILE}]].\n",
        encoding="utf-8",
    )
    (articles / "src" / "lib.md").write_text("---\ncapsule: Library.\n---\n", encoding="utf-8")
    journal = project / ".canon" / "journal"
    journal.mkdir()
    (journal / "2026-11-01-x.md").write_text(
        "---\ndate: 2026-11-01\nsubject: [src/app]\nsource: cli\n---\nBody.\n", encoding="utf-8"
    )
    return project


def test_hostile_capsule_is_escaped_everywhere(tmp_path: Path) -> None:
    """SPEC §12: content shown in HTML (`canon graph`) is escaped."""
    project = make_project(tmp_path)
    run = canon("graph", cwd=project)
    assert run.returncode == 0, run.stderr
    page = run.stdout
    assert "<script>alert" not in page
    assert "<img" not in page
    assert "onerror=alert(1)>" not in page
    # Exactly the page's own two script elements, nothing injected.
    assert len(re.findall(r"<script\b", page)) == 2
    assert "&lt;script&gt;alert" in page  # the escaped index table shows it as text
    embedded = re.search(
        r'<script type="application/json" id="canon-data">(.*?)</script>', page, re.S
    )
    assert embedded is not None
    data = json.loads(embedded.group(1))
    capsules = [n.get("capsule") for n in data["nodes"] if n["kind"] == "article"]
    assert HOSTILE in capsules  # the data round-trips exactly; only the encoding is escaped


def test_page_is_self_contained(tmp_path: Path) -> None:
    """No network resources: no src/href to http(s), a CSP that forbids loading anything."""
    project = make_project(tmp_path)
    page = canon("graph", cwd=project).stdout
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "default-src 'none'" in page


def test_out_file_and_graph_content(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    out = tmp_path / "graph.html"
    run = canon("graph", "--out", str(out), cwd=project)
    assert run.returncode == 0, run.stderr
    assert out.read_text("utf-8").startswith("<!DOCTYPE html>")
    data = graph_data(open_store(project))
    kinds = {n["id"]: n["kind"] for n in data["nodes"]}
    assert kinds["a:src/app"] == "article"
    assert kinds["f:src/app.py"] == "asset"
    assert kinds["j:2026-11-01-x.md"] == "journal"
    edges = {(e["source"], e["target"], e["kind"]) for e in data["edges"]}
    assert ("a:src/app", "a:src/lib", "link") in edges
    assert ("a:src/app", "f:src/app.py", "asset") in edges
    assert ("j:2026-11-01-x.md", "a:src/app", "subject") in edges
    assert any(kind == "broken" for _, _, kind in edges)


def test_out_writes_through_a_symlink(tmp_path: Path) -> None:
    """Issue 24 item 1 (SPEC §12): an output path that is a symlink is written through, the
    link kept; a dangling link creates its target, as a shell's `>` does."""
    project = make_project(tmp_path)
    (tmp_path / "real.html").write_text("old", encoding="utf-8")
    for link, target in (("link.html", "real.html"), ("dangling.html", "new.html")):
        (tmp_path / link).symlink_to(target)
        assert canon("graph", "--out", str(tmp_path / link), cwd=project).returncode == 0
        assert (tmp_path / link).is_symlink(), link
        assert (tmp_path / target).read_text("utf-8").startswith("<!DOCTYPE html>")


def test_out_through_a_symlink_leaves_no_old_tail(tmp_path: Path) -> None:
    """Issue 43 row 1 (SPEC §12): written through a link, the target holds exactly the new
    page: a longer file behind the link is truncated first, no old bytes trail the page."""
    project = make_project(tmp_path)
    real = tmp_path / "long.html"
    real.write_text("OLD TAIL " * 200_000, encoding="utf-8")  # far longer than any page
    (tmp_path / "link.html").symlink_to(real)
    run = canon("graph", "--out", str(tmp_path / "link.html"), cwd=project)
    assert run.returncode == 0, run.stderr
    page = real.read_text("utf-8")
    assert page == canon("graph", cwd=project).stdout
    assert "OLD TAIL" not in page


def test_out_writes_through_a_fifo(tmp_path: Path) -> None:
    """Issue 24 item 1: a FIFO named as the output is opened and written, never replaced by a
    regular file; the page arrives at its reader."""
    project = make_project(tmp_path)
    fifo = tmp_path / "page.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        run = canon("graph", "--out", str(fifo), cwd=project)
        assert run.returncode == 0, run.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was renamed over"
        page, _ = reader.communicate(timeout=60)
        assert page.startswith(b"<!DOCTYPE html>")
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_out_writes_through_a_character_device(tmp_path: Path) -> None:
    """Issue 24 item 1: `--out /dev/null` (as root) must leave the device in place; tried on a
    null device made inside the temp dir, never on /dev itself."""
    project = make_project(tmp_path)
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    run = canon("graph", "--out", str(null), cwd=project)
    assert run.returncode == 0, run.stderr
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def test_missing_store_gives_an_empty_page(tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    run = canon("graph", cwd=project)
    assert run.returncode == 0
    assert "0 articles" in run.stdout
    assert not (project / ".canon").exists()


REPO = Path(__file__).resolve().parents[2]


def chromium() -> str:
    """Headless chromium: a skip naming the installer on a machine that promised none, a
    failure where the suite's setup promised one (CI=true, or scripts/install_editor_deps.sh
    ran: it installs chromium before the playwright-core step that leaves this marker)."""
    found = shutil.which("chromium")
    if found:
        return found
    cache = Path(os.environ.get("CANON_EDITOR_CACHE", REPO / ".cache" / "editors"))
    message = "chromium is missing: run scripts/install_editor_deps.sh"
    if os.environ.get("CI") or any(cache.glob("pw/.installed-*")):
        pytest.fail(message)
    pytest.skip(message)


def test_page_runs_in_a_real_browser_and_injects_nothing(tmp_path: Path) -> None:
    """SPEC §12 in a real browser: the page's script draws the graph; store content that
    would run script if it were inserted as markup never runs."""
    browser = chromium()
    project = make_project(tmp_path)
    marker = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
    (project / ".canon" / "articles" / "src" / "lib.md").write_text(
        f"---\ncapsule: '{marker}'\n---\n# {marker}\n", encoding="utf-8"
    )
    out = tmp_path / "graph.html"
    assert canon("graph", "--out", str(out), cwd=project).returncode == 0
    dom = subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu",
            "--virtual-time-budget=3000", "--dump-dom", out.as_uri(),
        ],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    assert "<svg" in dom
    assert len(re.findall(r"<line\b", dom)) >= 3  # the script ran and drew the edges
    assert not re.search(r"<body[^>]*data-pwned", dom)
    assert "<img" not in dom


@pytest.mark.parametrize(
    ("promise", "outcome"),
    [("CI", "failed"), ("installer", "failed"), ("", "skipped")],
    ids=["ci", "installer-ran", "nothing-promised"],
)
def test_browser_test_fails_where_a_browser_was_promised(
    tmp_path: Path, promise: str, outcome: str
) -> None:
    """Issue 9 item 18: without chromium, the browser test fails where the suite's setup
    promised one (CI=true, or scripts/install_editor_deps.sh has run, which installs it
    first) and skips, naming the installer, on a machine that promised nothing."""
    cache = tmp_path / "editor-cache"
    if promise == "installer":
        (cache / "pw").mkdir(parents=True)
        (cache / "pw" / ".installed-1.0").touch()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CANON_EDITOR_CACHE")}
    env.update(PATH=str(tmp_path / "no-tools"), CANON_EDITOR_CACHE=str(cache))
    if promise == "CI":
        env["CI"] = "true"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", __file__,
         "-k", "real_browser"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert f"1 {outcome}" in run.stdout, run.stdout
    assert "install_editor_deps" in run.stdout


def _graph_in_a_terminal(project: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    """`canon graph` with its stdout on a pseudo-terminal, as a user at a shell runs it."""
    import pty

    script = Path(sys.executable).with_name("canon")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "canon_ls.agent.cli"]
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [*command, "graph", *args], cwd=project, env=env, stdout=follower, stderr=subprocess.PIPE
    ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=120)
    os.close(leader)
    return code, b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_gets_a_file_and_its_path_never_the_page(tmp_path: Path) -> None:
    """Issue 27: `canon graph` at a terminal writes the page to a file and says where."""
    project = make_project(tmp_path)
    env = dict(os.environ, CANON_TODAY="2026-11-29", XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("CANON_NO_CACHE", None)
    code, shown = _graph_in_a_terminal(project, env)
    assert code == 0, shown
    assert "<html" not in shown.lower() and len(shown) < 500, shown
    (page,) = (tmp_path / "cache" / "canon-ls").glob("graph-*.html")
    assert str(page) in shown.replace("\r\n", "").replace("\n", "")
    assert "<html" in page.read_text("utf-8").lower()
    assert not list(project.rglob("*.html"))


def test_open_starts_the_browser_on_the_page(tmp_path: Path) -> None:
    """Issue 27: `canon graph --open` writes the page and hands it to the user's browser."""
    project = make_project(tmp_path)
    seen = tmp_path / "browser-args"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{seen}"\n', encoding="utf-8")
    browser.chmod(0o755)
    out = tmp_path / "g.html"
    env = dict(os.environ, CANON_TODAY="2026-11-29", BROWSER=str(browser))
    script = Path(sys.executable).with_name("canon")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "canon_ls.agent.cli"]
    run = subprocess.run(
        [*command, "graph", "--open", "--out", str(out)],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert seen.read_text("utf-8") == out.resolve().as_uri()
    assert "<html" in out.read_text("utf-8").lower() and "<html" not in run.stdout.lower()
