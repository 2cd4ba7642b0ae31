"""Issue 40 item 3: the language server holds every git slot while its search worker builds
its index, so no git of its process tree starts meanwhile (a check's git beside that build and
two loaded stores was the tree's peak at start-up). Slots taken as they come free, and given
back. Run in a child Python so that the slots shared here never leak into other tests."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_held_slots_keep_every_git_of_the_tree_waiting_until_released() -> None:
    script = textwrap.dedent(
        """
        import subprocess, sys
        from canon_ls.core.git import gitrun
        gitrun.share()
        ask = "from canon_ls.core.git import gitrun; print(gitrun._slot())"
        probe = [sys.executable, "-c", ask]
        def child_slot():  # what a git start in a child process gets: -1 means it waits
            return int(subprocess.run(probe, capture_output=True, text=True).stdout)
        held = gitrun.Held()
        assert child_slot() >= 0
        assert held.take() and held.take()
        assert child_slot() == -1
        held.release()
        assert child_slot() >= 0
        other = gitrun.Held()  # two folders' search workers: the slots go with the last one
        assert held.take() and other.take()
        held.release()
        assert child_slot() == -1
        other.release()
        assert child_slot() >= 0
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_a_git_start_that_waits_is_seen_and_heavy_work_holds_a_slot() -> None:
    """`Held.wanted` tells the server a git of its tree waits (its search worker then makes
    way); `heavy()` holds a slot as a git does (a check's loaded store), and the git its
    thread starts meanwhile runs in it."""
    script = textwrap.dedent(
        """
        import subprocess, sys, time
        from canon_ls.core.git import gitrun
        gitrun.share()
        held = gitrun.Held()
        assert held.take() and not held.wanted()
        waiter = subprocess.Popen([sys.executable, "-c", (
            "from canon_ls.core.git import gitrun\\n"
            "print(gitrun.run('.', 'version') is not None)"
        )], stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not held.wanted():
            assert time.monotonic() < deadline and waiter.poll() is None
        held.release()
        assert waiter.stdout.read().strip() == "True"
        waiter.wait()
        assert not held.wanted()
        with gitrun.heavy():
            assert not held.take()  # one slot is the heavy work's, the other held now
            # the heavy work's own git runs in its slot (the other may be held meanwhile)
            assert gitrun.run(".", "version") is not None
            held.release()
        assert held.take()
        held.release()
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "ok", done.stderr
