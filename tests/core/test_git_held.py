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
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
