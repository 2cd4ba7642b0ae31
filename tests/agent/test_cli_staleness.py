"""Staleness you can act on, from the CLI (SPEC §9.1 evidence, §9.2 history, §11.1 review,
links, search tags): the real `canon` process over a git history dated to the day
(tests/stale_repo.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stale_repo import Repo, build
from test_cli import canon

FETCH = 'stale: 3 commits in 39 days since updated 2026-10-21 touched src/feed/fetch.py (newest {h} 2026-11-27 "Retry on 429")'  # noqa: E501
FEED = (
    "stale: 1 commit in 24 days since reviewed 2026-11-05 touched src/feed/parse.py (newest {h} "
    '2026-11-10 "Parse dates"); 1 file changed uncommitted: src/feed/util.py'
)
POLICY = "stale: stale_after 2026-11-01 passed 28 days ago"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return build(tmp_path / "proj")


def fetch_line(repo: Repo) -> str:
    return FETCH.format(h=repo.hashes["Retry on 429"])


def test_spec_9_1_read_carries_the_evidence_in_one_line(repo: Repo):
    """SPEC §6 read, §9.1: a stale article's read has its evidence in the §9.1 one-line form;
    an asset path reads the governing article's; a fresh article has none."""
    run = canon("read", "src/feed/fetch.py", cwd=repo.root)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[:3] == [
        "src/feed/fetch",
        "capsule: Fetches feeds over HTTP; retries are the caller's job.",
        "updated: 2026-10-21",
    ]
    assert lines[3] == fetch_line(repo)
    assert sum(1 for line in lines if line.startswith("stale:")) == 1

    feed = canon("read", "src/feed/util.py", cwd=repo.root).out.splitlines()
    assert feed[0] == "src/feed governs src/feed/util"
    assert "reviewed: 2026-11-05" in feed
    assert FEED.format(h=repo.hashes["Parse dates"]) in feed

    assert POLICY in canon("read", "notes/policy", cwd=repo.root).out.splitlines()
    assert "stale:" not in canon("read", "src/app.py", cwd=repo.root).out


def test_spec_9_1_check_text_names_the_evidence_and_the_commands(repo: Repo):
    """SPEC §9.1 in `canon check` text; SPEC §11.1: the advice names real CLI commands."""
    run = canon("check", cwd=repo.root)
    stale = [line for line in run.out.splitlines() if line.endswith("[stale]")]
    assert len(stale) == 3, run.out
    fetch = next(line for line in stale if "src/feed/fetch.md" in line)
    assert fetch == (
        ".canon/articles/src/feed/fetch.md:1:1: info: src/feed/fetch is "
        + fetch_line(repo)
        + "; update it with `canon write src/feed/fetch --capsule …`, or run `canon review "
        "src/feed/fetch` if it still holds (`canon history src/feed/fetch --diff` shows what "
        "changed). [stale]"
    )
    policy = next(line for line in stale if "notes/policy.md" in line)
    assert POLICY in policy and "`canon read notes/policy`" in policy
    assert "mark it reviewed" not in run.out  # editor words never reach the CLI


def test_spec_9_1_check_json_fields(repo: Repo):
    """SPEC §9.1 in `canon check --format json`: the same facts as fields."""
    rows = json.loads(canon("check", "--format", "json", cwd=repo.root).out)
    by = {r["address"]: r for r in rows if r["code"] == "stale"}
    assert set(by) == {"src/feed/fetch", "src/feed", "notes/policy"}
    fetch = by["src/feed/fetch"]["evidence"]
    assert fetch == {
        "line": fetch_line(repo),
        "reference": "2026-10-21",
        "reference_key": "updated",
        "days": 39,
        "commits": 3,
        "newest": {
            "hash": repo.hashes["Retry on 429"],
            "date": "2026-11-27",
            "author": "Ann Lee",
            "subject": "Retry on 429",
        },
        "files": ["src/feed/fetch.py"],
        "uncommitted": [],
        "stale_after": "",
    }
    feed = by["src/feed"]["evidence"]
    assert (feed["reference"], feed["reference_key"], feed["days"], feed["commits"]) == (
        "2026-11-05",
        "reviewed",
        24,
        1,
    )
    assert feed["newest"]["subject"] == "Parse dates" and feed["uncommitted"] == [
        "src/feed/util.py"
    ]
    policy = by["notes/policy"]["evidence"]
    assert policy["stale_after"] == "2026-11-01" and policy["commits"] == 0
    assert all(r["evidence"] is None for r in rows if r["code"] != "stale")


def test_spec_9_2_history_interleaves_around_the_reference_date(repo: Repo):
    """SPEC §9.2: article and asset commits newest first with hash, date, side, author and
    subject; the reference date marked; the journal entries naming the address at the end."""
    h = repo.hashes
    run = canon("history", "src/feed/fetch.py", cwd=repo.root)
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "History of src/feed/fetch (governs src/feed/fetch.py), newest first: 6 commits, "
        "3 after updated 2026-10-21.",
        f"{h['Retry on 429']} 2026-11-27 asset Ann Lee: Retry on 429",
        f"{h['Fix fetch and its article']} 2026-11-20 both Bob Ray: Fix fetch and its article",
        f"{h['Add backoff']} 2026-11-02 asset Bob Ray: Add backoff",
        "-- updated 2026-10-21: the article's reference date (39 days ago) --",
        f"{h['Document the fetcher']} 2026-10-21 article Ann Lee: Document the fetcher",
        f"{h['Tune timeouts']} 2026-10-15 asset Bob Ray: Tune timeouts",
        f"{h['Initial import']} 2026-10-01 asset Ann Lee: Initial import",
        "journal 2026-11-21 2026-11-21-fetch-retries.md",
        "journal 2026-10-10 2026-10-10-fetch-choice.md",
    ]


def test_spec_9_2_history_since_updated_keeps_what_came_after(repo: Repo):
    """SPEC §9.2 --since-updated: only what happened after the reference date."""
    h = repo.hashes
    out = canon("history", "src/feed/fetch", "--since-updated", cwd=repo.root).out.splitlines()
    assert out[1:] == [
        f"{h['Retry on 429']} 2026-11-27 asset Ann Lee: Retry on 429",
        f"{h['Fix fetch and its article']} 2026-11-20 both Bob Ray: Fix fetch and its article",
        f"{h['Add backoff']} 2026-11-02 asset Bob Ray: Add backoff",
        "-- updated 2026-10-21: the article's reference date (39 days ago) --",
        "journal 2026-11-21 2026-11-21-fetch-retries.md",
    ]
    feed = canon("history", "src/feed", "--since-updated", cwd=repo.root).out.splitlines()
    assert feed[0].startswith("History of src/feed (2 governed files)")
    assert feed[1] == "uncommitted 2026-11-28 asset src/feed/util.py"
    assert feed[2] == (
        f"{h['Parse dates']} 2026-11-10 asset Ann Lee: Parse dates [src/feed/parse.py]"
    )
    assert feed[3].startswith("-- reviewed 2026-11-05:")


def test_spec_9_2_since_updated_drops_a_journal_entry_of_the_reference_day(repo: Repo):
    """SPEC §9.2 --since-updated: an entry dated on the reference day itself (fetch's updated
    2026-10-21) is not after it; the day after is. Text and JSON agree; the full history
    keeps both."""
    import json

    journal = repo.root / ".canon/journal"
    for day in ("2026-10-21", "2026-10-22"):
        (journal / f"{day}-boundary.md").write_text(
            f"---\ndate: {day}\nsubject:\n  - src/feed/fetch\nsource: cli\n---\nOn {day}.\n"
        )
    after = "journal 2026-10-22 2026-10-22-boundary.md"
    same_day = "journal 2026-10-21 2026-10-21-boundary.md"
    since = canon("history", "src/feed/fetch", "--since-updated", cwd=repo.root).out
    assert after in since.splitlines() and same_day not in since, since
    whole = canon("history", "src/feed/fetch", cwd=repo.root).out.splitlines()
    assert after in whole and same_day in whole, whole
    run = canon("history", "src/feed/fetch", "--since-updated", "--format", "json", cwd=repo.root)
    named = json.dumps(json.loads(run.out)["journal"])
    assert "2026-10-22-boundary" in named and "2026-10-21-boundary" not in named, named


def test_spec_9_2_history_diff_shows_what_changed_since_the_reference(repo: Repo):
    """SPEC §9.2: the diff of the governed files since the last commit at or before the
    reference date, against the working tree."""
    run = canon("history", "src/feed/fetch.py", "--diff", cwd=repo.root)
    assert run.code == 0, run.err
    text = run.out
    assert text.startswith(
        "# Changes to the files src/feed/fetch governs since updated 2026-10-21\n"
    )
    assert f"# {fetch_line(repo)}\n" in text
    assert f"# base: {repo.hashes['Document the fetcher']} 2026-10-21 Document the fetcher" in text
    assert "-    return get(timeout=5)\n" in text
    assert "+    return retry(429, backoff(get, timeout=10))\n" in text
    assert "diff --git a/src/feed/fetch.py b/src/feed/fetch.py" in text
    feed = canon("history", "src/feed", "--diff", cwd=repo.root).out
    assert "+    return 2\n" in feed and "+    return dates(x)\n" in feed  # uncommitted too


def test_spec_11_1_review_clears_stale_without_touching_updated(repo: Repo):
    """SPEC §11.1 canon review: `reviewed: <today>` on the governing article, `updated`
    untouched, the stale verdict clears (read and check agree)."""
    file = repo.root / ".canon/articles/src/feed/fetch.md"
    before = file.read_text(encoding="utf-8")
    run = canon("review", "src/feed/fetch.py", cwd=repo.root)
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "Marked src/feed/fetch reviewed on 2026-11-29; updated stays 2026-10-21.",
        f"It is no longer stale (it was {fetch_line(repo)}).",
    ]
    after = file.read_text(encoding="utf-8")
    assert "updated: 2026-10-21\n" in after and "reviewed: 2026-11-29\n" in after
    assert after.replace("reviewed: 2026-11-29\n", "") == before
    assert "stale:" not in canon("read", "src/feed/fetch.py", cwd=repo.root).out
    stale = [
        r["address"]
        for r in json.loads(canon("check", "--format", "json", cwd=repo.root).out)
        if r["code"] == "stale"
    ]
    assert "src/feed/fetch" not in stale
    # a second review the same day changes nothing on disk
    mtime = file.stat().st_mtime_ns
    assert canon("review", "src/feed/fetch", cwd=repo.root).code == 0
    assert file.stat().st_mtime_ns == mtime


def test_spec_11_1_review_keeps_a_passed_stale_after_stale(repo: Repo):
    run = canon("review", "notes/policy", cwd=repo.root)
    assert run.code == 0
    assert run.out.splitlines()[1] == (
        f"It is still {POLICY}; update it or move its stale_after date "
        "(`canon read notes/policy` shows it)."
    )


def test_spec_11_1_review_and_links_of_nothing_are_one_sentence(repo: Repo):
    for command in ("review", "links", "history"):
        run = canon(command, "lib/none.py", cwd=repo.root)
        assert run.code == 2 and run.out == ""
        assert run.err.strip() == (
            "No article governs lib/none yet; write one with `canon write lib/none --capsule …`."
            if command != "history"
            else "No article governs lib/none yet, so it has no history to show."
        )


def test_spec_11_1_links_lists_outbound_links_and_backlinks(repo: Repo):
    """SPEC §11.1 canon links: outbound wikilinks and backlinks (articles linking in, journal
    entries naming it), one per line, from core's inverse link index."""
    run = canon("links", "src/feed/fetch.py", cwd=repo.root)
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "src/feed/fetch: 0 outbound links, 2 backlinks, 2 journal entries",
        "linked from src/app",
        "linked from src/feed",
        "named by journal/2026-11-21-fetch-retries.md",
        "named by journal/2026-10-10-fetch-choice.md",
    ]
    assert canon("links", "src/feed", cwd=repo.root).out.splitlines() == [
        "src/feed: 2 outbound links, 0 backlinks, 0 journal entries",
        "links to src/feed/fetch",
        "links to src/feed/gone (no such article)",
    ]


def test_search_finds_an_article_by_its_tag_and_shows_tags(repo: Repo):
    """Tags (`tags:` list or string) are indexed with a boost over body words: the tagged
    article outranks one whose body says the word; results show the tags."""
    out = canon("search", "retry", cwd=repo.root).out.splitlines()
    assert out[0] == '2 articles match "retry":'
    assert out[1] == (
        "src/feed/fetch: Fetches feeds over HTTP; retries are the caller's job. "
        "(tags: retry, http, network)"
    )
    assert out[2].startswith("src/app: ")
    only_tag = canon("search", "network", cwd=repo.root).out.splitlines()
    assert only_tag[:2] == [
        '1 article matches "network":',
        "src/feed/fetch: Fetches feeds over HTTP; retries are the caller's job. "
        "(tags: retry, http, network)",
    ]


def test_spec_9_2_history_lists_an_uncommitted_article_edit(repo: Repo):
    """SPEC §9.2: an edit of the article file not yet committed is on the article side."""
    import os

    from stale_repo import noon

    path = repo.root / ".canon/articles/src/feed/fetch.md"
    path.write_text(path.read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    os.utime(path, (noon("2026-11-29"), noon("2026-11-29")))
    out = canon("history", "src/feed/fetch.py", cwd=repo.root).out.splitlines()
    assert out[1] == "uncommitted 2026-11-29 article .canon/articles/src/feed/fetch.md"
    assert out[2].endswith("asset Ann Lee: Retry on 429")


def test_spec_9_2_history_without_git_says_so(tmp_path: Path):
    """No repository: history lists no commits and says why; --diff is one sentence (exit 2)."""
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x\n", encoding="utf-8")
    assert canon("write", "src/a.py", "--capsule", "A.", cwd=root).code == 0
    out = canon("history", "src/a.py", cwd=root).out.splitlines()
    assert (
        out[0]
        == "History of src/a (governs src/a.py): no git repository here, so no commits to list."
    )
    assert out[1].startswith("-- updated 2026-11-29:")
    run = canon("history", "src/a.py", "--diff", cwd=root)
    assert run.code == 2 and run.out == ""
    assert run.err.strip() == f"{root} is not a git work tree; there is no history to diff."


def _run(repo: Repo, cache: Path, *args: str) -> tuple[int, str]:
    """One `canon` run with the cache under `cache`; it must end within 60 s (a damaged cache
    once made it spin forever)."""
    import os
    import subprocess

    from test_cli import TODAY, canon_command

    env = dict(os.environ, CANON_TODAY=TODAY, XDG_CACHE_HOME=str(cache))
    env.pop("CANON_NO_CACHE", None)
    done = subprocess.run(
        [*canon_command(), *args], cwd=repo.root, env=env, capture_output=True, timeout=60
    )
    return done.returncode, done.stdout.decode() + done.stderr.decode()


def _damaged(data: bytes) -> list[tuple[str, bytes]]:
    """The change-times cache cut short, extended, and with one byte flipped: in its head, in
    its list of paths (out of order: once a spin), and at each of the next 120 bytes (the paths'
    offsets and commit indices: once an IndexError)."""
    size = len(data)
    paths_end = data.index(b"src/feed/util.py\0") + len("src/feed/util.py\0")
    places = [0, 5, 9, paths_end - 8, paths_end - 3, *range(paths_end + 1, paths_end + 120, 6)]
    out = []
    for at in places:
        flipped = bytearray(data)
        flipped[at] ^= 0x5A
        out.append((f"flip-{at}", bytes(flipped)))
    out += [("empty", b""), ("cut-8", data[:8]), ("cut-half", data[: size // 2])]
    return [*out, ("cut-1", data[:-1]), ("extended", data + b"\0junk" * 100)]


@pytest.mark.timeout(900)
def test_a_damaged_change_times_cache_is_rebuilt(repo: Repo, tmp_path: Path) -> None:
    """SPEC §9.2: the change-times cache (changes-*.bin under the user's cache directory)
    damaged in any way (cut short, bytes flipped, extended) is discarded and rebuilt: `status`
    and `check` end promptly with the same answer as over a sound cache."""
    cache = tmp_path / "cache"
    want = {args: _run(repo, cache, *args) for args in (("check",), ("status",))}
    assert "stale: 3 commits" in want[("check",)][1], want
    [file] = (cache / "canon-ls").glob("changes-*.0.bin")  # the chunk of paths
    [head] = [f for f in (cache / "canon-ls").glob("changes-*.bin") if f.name.count(".") == 1]
    sound = file.read_bytes()
    index = head.read_bytes()
    damages = [(file, name, data) for name, data in _damaged(sound)]
    flips = [index[:at] + bytes([index[at] ^ 0x5A]) + index[at + 1 :] for at in (0, 5, 9, -1)]
    damages += [(head, f"head {n}", d) for n, d in enumerate(flips)]
    damages += [(head, "head cut", index[: len(index) // 2]), (head, "head +", index + b"\0")]
    for damaged, name, data in damages:
        kept = damaged.read_bytes()
        damaged.write_bytes(data)
        for args, answer in want.items():
            assert _run(repo, cache, *args) == answer, (name, args)
        assert damaged.read_bytes() == kept, (name, "the cache is written again")
