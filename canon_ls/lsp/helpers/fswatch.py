"""File events, watched in a child process and handed to the server as JSON lines."""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from typing import Any

from canon_ls.core.storage import inotify
from canon_ls.lsp.helpers.child import step_back


@functools.cache
def _rust_notify() -> Any:
    """The Rust backend as watchfiles documents it ("Rust backend direct usage")."""
    import glob
    import importlib.util

    package = importlib.util.find_spec("watchfiles")  # finds; runs nothing
    folder = os.path.dirname(package.origin) if package and package.origin else ""
    for path in sorted(glob.glob(os.path.join(glob.escape(folder), "_rust_notify*"))):
        spec = importlib.util.spec_from_file_location("watchfiles._rust_notify", path)
        if spec is None or spec.loader is None:
            continue
        try:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except ImportError:
            continue
        return module.RustNotify
    from watchfiles._rust_notify import RustNotify

    return RustNotify


DEBOUNCE_MS = 200  # a burst (git checkout, a build) is delivered in batches at most this long
STEP_MS = 10  # quiet time that ends a batch: the latency a single write sees (10-20 ms)
TIMEOUT_MS = 5_000  # the watch call returns this often with nothing, to look at the stop flag
CHUNK = 500  # paths per output line (a checkout of 100k files stays a stream of short lines)

_SKIPPED = "directories too deep to name or unreadable are not watched"
_out = threading.Lock()


def emit(message: dict[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode()
    with _out:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


class Side:
    """One watchfiles watcher (recursive or not) run by its own thread."""

    def __init__(self, name: str, recursive: bool) -> None:
        self.name = name
        self.recursive = recursive
        self.paths: list[str] | None = None
        self.poll_ms = 0
        self.stop: threading.Event | None = None

    def want(self, paths: list[str], poll_ms: int) -> None:
        """Watch exactly `paths` from now on."""
        if paths == self.paths and poll_ms == self.poll_ms:
            return
        self.paths, self.poll_ms = paths, poll_ms
        old, self.stop = self.stop, threading.Event()
        started = threading.Event()
        threading.Thread(
            target=self._run, args=(paths, poll_ms, self.stop, started), daemon=True
        ).start()
        started.wait()
        if old is not None:
            old.set()

    def _run(
        self, paths: list[str], poll_ms: int, stop: threading.Event, started: threading.Event
    ) -> None:
        notify = None
        told = False  # the first directory skipped as unwatchable is logged, no more
        try:
            notify, watched, polling = _open(paths, self.recursive, poll_ms)
            backend = "inotify" if isinstance(notify, inotify.Inotify) else "watchfiles"
            emit({"ready": self.name, "count": len(watched), "polling": polling, "by": backend})
        except Exception as exc:
            emit({"warning": f"watching failed: {type(exc).__name__}: {exc}"})
        finally:
            started.set()
        if notify is None:
            return
        try:
            with notify:
                while not stop.is_set():
                    result = notify.watch(DEBOUNCE_MS, STEP_MS, TIMEOUT_MS, stop)
                    if getattr(notify, "skipped", 0) and not told:
                        told = True
                        emit({"warning": _SKIPPED})
                    if isinstance(result, set) and not stop.is_set():
                        changes = sorted(result)
                        for i in range(0, len(changes), CHUNK):
                            emit({"changes": changes[i : i + CHUNK]})
        except Exception as exc:  # a watch that fails midway would leave every change unseen
            emit({"warning": f"watching stopped: {type(exc).__name__}: {exc}; restarting"})
            os._exit(1)  # the server restarts this child and re-reads the stores


def _open(paths: list[str], recursive: bool, poll_ms: int) -> tuple[Any, list[str], bool]:
    """A watcher on the paths that still exist (and those paths): inotify itself on Linux."""
    polling = bool(os.environ.get("WATCHFILES_FORCE_POLLING"))
    for _attempt in range(3):
        existing = [p for p in paths if os.path.isdir(p)]
        if not existing:
            return None, [], polling
        try:
            if not polling and inotify.available():
                return inotify.Inotify(existing, recursive), existing, polling
            notify = _rust_notify()(existing, False, polling, poll_ms, recursive, True)
            return notify, existing, polling
        except FileNotFoundError:
            continue  # one vanished meanwhile: look again
        except OSError as exc:  # the watch limit (inotify's max_user_watches) or alike
            if polling:
                raise
            emit({"warning": f"{exc}; polling every {poll_ms} ms instead"})
            polling = True
    return None, [], polling


def main() -> None:
    step_back(0)  # its start walks every watched tree (1-2 s of CPU at 50k articles)
    sides = {"trees": Side("trees", True), "dirs": Side("dirs", False)}
    for line in sys.stdin:
        try:
            wanted = json.loads(line)
            poll_ms = max(50, int(wanted.get("poll_ms") or 500))
            for name, side in sides.items():
                side.want(sorted({str(p) for p in wanted.get(name) or []}), poll_ms)
        except Exception as exc:  # a bad line or a failing watch: say so, keep serving
            emit({"warning": f"{type(exc).__name__}: {exc}"})
    for side in sides.values():
        if side.stop is not None:
            side.stop.set()


if __name__ == "__main__":
    main()
