"""Issue 40 item 3 (SPEC §10): the whole-store check's git work runs one process at a time and,
when the language server loads its own store (`git_first`), ends before the check's store
loads: each git that reads the whole index held ~180 MB at 500k files, beside a loaded store
of as much. The rename search for the orphans runs then too (its answer kept for the check's
own). Real git, a PATH spy recording each git's argv and whether the store had loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from renamed_repo import logging_git, renamed

from canon_ls.core.checking import check


def kinds(lines: list[str]) -> list[str]:
    """Each whole-index or history git by kind, in the order they started."""
    named = {" ls-files ": "listing", " status ": "status", " -M ": "renames", " log ": "history"}
    out = []
    for line in lines:
        kind = next((k for needle, k in named.items() if needle in f" {line} "), None)
        if kind is not None and (kind != "history" or "--name-status" in line):
            out.append(kind)
    return out


@pytest.mark.parametrize("git_first", [True, False])
def test_git_reads_end_before_the_store_loads_when_the_server_has_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_first: bool
) -> None:
    root = renamed(tmp_path)
    log = logging_git(tmp_path, monkeypatch)
    at_load: list[list[str]] = []
    survey = check._whole

    def whole(store, assets):  # noqa: ANN001, ANN202 (the pass's own arguments)
        at_load.append(log.read_text().splitlines())
        return survey(store, assets)

    monkeypatch.setattr(check, "_whole", whole)
    done = check.run(root, {}, True, git_first=git_first)
    assert done.moves["src/auth/login"][0] == "src/auth/signin"
    every = kinds(log.read_text().splitlines())
    assert every[:4] == ["listing", "renames", "status", "history"]
    assert every.count("renames") == 1
    before = kinds(at_load[0])
    if git_first:  # all of it, the rename search included, before the store's survey
        assert before == every
    else:  # the listing at least (the survey needs it; the rename search need not be done)
        assert before[:1] == ["listing"]


def test_the_history_is_dropped_before_the_rename_search_asks_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without git_first, the search runs after the verdicts: the history (~40 MB at 500k
    files) is no longer held by the pass when it does."""
    root = renamed(tmp_path)
    import gc

    from canon_ls.core.git import changes, renames

    held: list[int] = []
    search = renames._git_renames

    def counted(*args):  # noqa: ANN002, ANN202
        held.append(sum(isinstance(o, changes.ChangeTimes) for o in gc.get_objects()))
        return search(*args)

    monkeypatch.setattr(renames, "_git_renames", counted)
    monkeypatch.setattr(renames, "_kept", {})
    monkeypatch.setenv("CANON_NO_CACHE", "1")
    check.run(root, {}, True, git_first=False)
    assert held[-1] == 0


def test_the_loaded_store_holds_a_git_slot_when_git_went_first(tmp_path: Path) -> None:
    """With `git_first` (the language server's check child) the store is loaded and checked
    holding one of the tree's slots, as a git would: the server's search worker neither
    starts nor stays beside it; `holding` keeps it past the return (while the child sends its
    answer). In a child Python: the shared slots reach no other test."""
    import subprocess
    import sys
    import textwrap

    root = renamed(tmp_path)
    script = textwrap.dedent(
        """
        import contextlib, sys
        from pathlib import Path
        from canon_ls.core.checking import check
        from canon_ls.core.git import gitrun
        gitrun.share()
        free, survey = [], check._whole

        def whole(store, assets):
            held = gitrun.Held()
            free.append(held.take())  # True: every slot was free
            held.release()
            return survey(store, assets)

        check._whole = whole
        check.run(Path(sys.argv[1]), {}, True, git_first=True)
        with contextlib.ExitStack() as holding:  # the check child's: kept until it has answered
            check.run(Path(sys.argv[1]), {}, True, git_first=True, holding=holding)
            held = gitrun.Held()
            free.append(held.take())
            held.release()
        free.append(held.take())
        print(free)
        """
    )
    argv = [sys.executable, "-c", script, str(root)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    # one slot is the store's, then the caller's until it lets go
    assert done.stdout.strip() == "[False, False, False, True]", done.stderr
