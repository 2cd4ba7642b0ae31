"""The workspace-symbol search worker's process (searcher.py starts it and asks it): no
asyncio nor git here, so it holds ~8 MB less than a process importing the server's side."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

from canon_ls.core.retrieval.search_corpus import SearchCorpus, spec_of
from canon_ls.lsp.helpers.child import step_back


def serve(spec: dict[str, Any]) -> None:
    """Answer questions on stdin; `spec` is search_corpus.spec_of the store."""
    step_back(0)
    corpus = SearchCorpus(spec=spec)  # the index only: no articles kept
    if corpus.build() >= REEXEC_READS and os.environ.get(REEXEC) != "1":
        # Articles were read and the index file rewritten: the memory that took stays with
        # this process (freed, not returned). The same worker started again maps the new
        # file and reads nothing; nobody has asked anything yet, so no question is lost.
        os.environ[REEXEC] = "1"
        with contextlib.suppress(OSError):
            os.execv(sys.executable, sys.orig_argv)
    os.environ.pop(REEXEC, None)
    gc.freeze()  # what the start made is never garbage: later collections skip it
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            with contextlib.suppress(Exception):
                corpus.update([str(a) for a in request.get("changed", [])])
            hits, total = corpus.query(str(request["query"]), int(request["limit"]))
            reply: dict[str, Any] = {"hits": [a for a, _ in hits], "total": total}
        except Exception as exc:  # a bad query is an empty answer, never a dead worker
            reply = {"hits": [], "total": 0, "error": str(exc)}
        print(json.dumps(reply), flush=True)


REEXEC = "CANON_SEARCH_REEXEC"  # set for the one start again after a build
REEXEC_READS = 1000  # articles read at start above which the worker starts again


def main(argv: list[str]) -> None:
    """`--spec JSON` (what the server passes), or `PROJECT [OPTIONS_JSON]` by hand."""
    if argv[:1] == ["--spec"] and len(argv) > 1:
        serve(json.loads(argv[1]))
        return
    from canon_ls.core.storage.project import open_store

    serve(spec_of(open_store(Path(argv[0]), json.loads(argv[1]) if len(argv) > 1 else {})))


if __name__ == "__main__":
    main(sys.argv[1:])
