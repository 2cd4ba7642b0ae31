"""Where a project's memory lives and which options apply (SPEC §2, §8, §13)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

STORE_DIR = ".canon"  # the default store root, relative to the project (option `root`)
ARTICLES_DIR = "articles"
JOURNAL_DIR = "journal"
SCHEMA_FILE = "schema.json"
PROJECT_FILE = "canon.toml"  # at the project root, committed, shared by the team
SETTINGS_FILE = "settings.json"  # under $XDG_CONFIG_HOME/canon, the user's own
TRUST_FILE = "trusted.json"  # beside it: {project directory: SHA-256 of its trusted canon.toml}
BAD_OPTION, UNTRUSTED_OPTION = "bad-option", "untrusted-option"  # the codes of a Problem

TOPOLOGY_KEYS = ("root", "mounts")
BEHAVIOUR_KEYS = ("surface", "resurface", "retrieval", "standout")
OPTION_KEYS = TOPOLOGY_KEYS + BEHAVIOUR_KEYS
RETRIEVERS = ("none", "lexical")
DEFAULTS: dict[str, Any] = {
    "root": STORE_DIR,
    "mounts": (),
    "surface": True,
    "resurface": True,
    "retrieval": "none",
    "standout": 1.4,
}
DEFAULT_SOURCE = "default"
_INF = float("inf")


class OptionError(ValueError):
    """An option the store does not know or cannot use; the message names it."""


class Problem(NamedTuple):
    """One bad file, key or value: where it is (so `canon check` and the editor can point at
    it) and the sentence naming the file, the key and the fix."""

    file: Path
    key: str | None  # None: the whole file (unreadable, not valid TOML/JSON, not an object)
    sentence: str
    code: str = BAD_OPTION  # UNTRUSTED_OPTION: a key held back until `canon trust`


def find_project(start: Path) -> Path:
    """The project for a command started in `start` (`discover`, without its sentence)."""
    return discover(start)[0]


def discover(start: Path) -> tuple[Path, str]:
    """SPEC §2: the nearest ancestor of `start` holding `.canon/` or a `canon.toml`, else `start`,
    and a sentence when a store was passed over (up to git's top level, skipping foreign dirs)."""
    start = Path(os.path.abspath(start))
    found, top, above = [], None, None
    for directory in (start, *start.parents):
        if os.path.isdir(directory / STORE_DIR) or os.path.isfile(directory / PROJECT_FILE):
            if top is not None:
                above = directory
                break
            found.append(directory)
        if top is None and os.path.exists(directory / ".git"):
            top = directory
    uid = os.geteuid() if hasattr(os, "geteuid") else None  # git's safe.directory rule
    mine = [d for d in found if uid is None or os.stat(d).st_uid == uid]
    skipped = found[: found.index(mine[0]) if mine else None]
    mark = "canon ignored the store in"
    notes = [f"{mark} {d}: another user owns it (--project {d} uses it)." for d in skipped]
    if mine and not _has_articles(mine[0]) and os.path.isdir(mine[0] / STORE_DIR):
        full = next((d for d in mine[1:] if _has_articles(d)), None)
        if full is not None:
            notes.append(f"{mark} {mine[0]}: it holds no article, the store in {full} does.")
            return full, " ".join(notes)
    if not mine and above is not None:
        notes.append(f"{mark} {above}: it lies above the git repository at {top}.")
    return (mine[0] if mine else start), " ".join(notes)


def _has_articles(project: Path) -> bool:
    from canon_ls.core.storage import walk  # iterative: a deep empty store costs no recursion

    stack = [(str(project / STORE_DIR / ARTICLES_DIR), "")]
    for entry, _ in walk.entries(stack):
        if entry.name.endswith(".md"):
            return True
        if entry.is_dir(follow_symlinks=False):
            stack.append((entry.path, ""))
    return False


def store_root(project: Path, root: str | Path | None) -> Path:
    """The store directory: option `root`, absolute or relative to the project (SPEC §2)."""
    if root is None or str(root) == "":
        return Path(os.path.abspath(project)) / STORE_DIR
    r = Path(root).expanduser()
    return Path(os.path.abspath(r if r.is_absolute() else Path(project) / r))


def mount_dirs(project: Path, mounts: Any) -> dict[str, Path]:
    """SPEC §8: each mount by its directory's basename (`/data/lake` -> `lake`)."""
    out: dict[str, Path] = {}
    for m in mounts or ():
        directory = Path(os.path.abspath(Path(project) / Path(m).expanduser()))  # absolute stays
        name = directory.name
        if not name or name in out or ":" in name:
            raise OptionError(f"The mount {m} has no usable name or repeats the name {name!r}.")
        out[name] = directory
    return out


def mount_articles(directory: Path) -> Path:
    """A mount keeps its store next to its assets, always at `.canon/` (SPEC §8)."""
    return Path(directory) / STORE_DIR / ARTICLES_DIR


def settings_file(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/canon/settings.json` (default `~/.config/canon/settings.json`)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):  # the XDG spec ignores relative values
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base, "canon", SETTINGS_FILE)


def cache_dir(store_root: str | Path, project: str | Path) -> str | None:
    """`$XDG_CACHE_HOME/canon-ls`, resolved; None when the user opted out with CANON_NO_CACHE
    (any value but '' and '0') or it would lie inside the project or the store (a cache must
    never end up in a repository)."""
    if os.environ.get("CANON_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec ignores relative values
        base = os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.realpath(os.path.join(base, "canon-ls"))
    for inside in (os.path.realpath(project), os.path.realpath(store_root)):
        if directory == inside or directory.startswith(inside.rstrip(os.sep) + os.sep):
            return None
    return directory


def project_file(project: Path) -> Path:
    return Path(project) / PROJECT_FILE


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    return settings_file(env).with_name(TRUST_FILE)


def leading_out(project: Path, values: Mapping[str, Any]) -> list[str]:
    """The keys of a project file that lead outside the project: a `root` whose directory is
    not inside it (symlinks resolved), and `mounts` whenever there are any."""
    keys = []
    if "root" in values:
        real = os.path.realpath(store_root(project, values["root"]))
        base = os.path.realpath(project)
        if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
            keys.append("root")
    return keys + ["mounts"] * bool(values.get("mounts"))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trust_digest(project: Path, values: Mapping[str, Any], data: bytes) -> str:
    """What `canon trust` covers: the file's bytes and where its root and mounts lead now
    (links resolved), so a directory swapped later for a link elsewhere is trusted no more."""
    places = [store_root(project, values.get("root"))]
    places += [Path(project) / Path(m).expanduser() for m in values.get("mounts") or ()]
    return digest(data + "\0".join(os.path.realpath(p) for p in places).encode())


def trusted(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The trust record: project directory -> SHA-256 of the canon.toml trusted there ({} when
    missing or unreadable: nothing is trusted)."""
    path = trust_file(env)
    try:
        raw = json.loads(read_option_file(path, path.parent))
    except (OSError, ValueError, RecursionError):
        return {}
    strings = raw.items() if isinstance(raw, dict) else ()
    return {k: v for k, v in strings if isinstance(k, str) and isinstance(v, str)}


_RULES = {
    "root": "must be a directory path (a non-empty string)",
    "mounts": "must be a list of directory paths",
    "surface": "must be true or false",
    "resurface": "must be true or false",
    "retrieval": 'must be "none" or "lexical"',
    "standout": "must be a number of at least 1",
}


def check(key: str, value: object, project: Path | None = None) -> Any:
    """One option value, validated and normalised (mounts -> tuple, standout -> float)."""
    if key not in OPTION_KEYS:
        known = ", ".join(OPTION_KEYS)
        raise OptionError(f"Unknown canon option {key!r}; known options are {known}.")
    bad = OptionError(f"Option {key!r} {_RULES[key]}.")
    if key == "root":
        if not isinstance(value, str | Path) or not str(value).strip():
            raise bad
        if _too_long(str(value)):
            raise OptionError("Option 'root' is a path longer than the file system allows.")
        return str(value)
    if key == "mounts":
        if isinstance(value, str | Path) or not isinstance(value, list | tuple):
            raise bad
        if not all(isinstance(m, str | Path) and str(m) for m in value):
            raise OptionError("Option 'mounts' must be a list of non-empty directory paths.")
        mounts = tuple(str(m) for m in value)
        if any(_too_long(m) for m in mounts):
            raise OptionError("Option 'mounts' holds a path longer than the file system allows.")
        if project is not None:
            for mount in mounts:
                path = Path(mount).expanduser()
                if not (path if path.is_absolute() else Path(project) / path).is_dir():
                    raise OptionError(f"Mount {mount} is not a directory (option 'mounts').")
            mount_dirs(project, mounts)
        return mounts
    if key in ("surface", "resurface", "retrieval"):
        if not (value in RETRIEVERS if key == "retrieval" else isinstance(value, bool)):
            raise bad
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value < _INF:
        raise bad  # standout; the comparison also refuses NaN and infinity (TOML's nan, inf)
    return float(value)


def _too_long(path: str) -> bool:
    """Past what any file system takes (255-byte names, 4096-byte paths): every open would
    fail with ENAMETOOLONG, so it is a bad value, not an error at each use."""
    data = os.fsencode(path)
    parts = data.replace(b"\\", b"/").split(b"/")
    return len(data) > 4000 or any(len(part) > 255 for part in parts)


_ON, _OFF = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
_SWITCH = dict.fromkeys(_ON, True) | dict.fromkeys(_OFF, False)  # as a command line types them


def parse_text(key: str, text: str) -> Any:
    """A value typed on a command line (`canon settings set KEY VALUE`, `--standout 1.2`)."""
    if key in ("surface", "resurface"):
        return _SWITCH.get(text.strip().lower(), text)
    if key == "standout":
        try:
            return float(text)
        except ValueError:
            return text
    return text


def show(value: object) -> str:
    """A value as the files write it (TOML/JSON alike): true, 1.4, "lexical", ["a"]."""
    return json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)


class Options:
    """The effective options of one project: values, where each came from, file problems."""

    __slots__ = ("project", "values", "sources", "issues")

    def __init__(self, project: Path) -> None:
        self.project = Path(os.path.abspath(project))
        self.values: dict[str, Any] = dict(DEFAULTS)
        self.sources: dict[str, str] = dict.fromkeys(OPTION_KEYS, DEFAULT_SOURCE)
        self.issues: list[Problem] = []  # one per bad file, key or value

    @property
    def problems(self) -> list[str]:
        """The sentences of `issues`."""
        return [issue.sentence for issue in self.issues]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def root(self) -> Path:
        """The store directory these options place."""
        return store_root(self.project, self.values["root"])

    @property
    def articles_dir(self) -> Path:
        return self.root / ARTICLES_DIR

    @property
    def journal_dir(self) -> Path:
        return self.root / JOURNAL_DIR

    @property
    def mounts(self) -> dict[str, Path]:
        return mount_dirs(self.project, self.values["mounts"])

    @property
    def lane(self) -> bool:
        """The retrieval lane is on (SPEC §11.4)."""
        return self.values["retrieval"] != "none"

    def store_options(self) -> dict[str, Any]:
        """root and mounts, as `Store(...)` takes them."""
        return {"root": self.values["root"], "mounts": self.values["mounts"]}


def resolve(
    project: Path,
    explicit: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    explicit_source: str = "flag",
    trust: bool | None = None,
) -> Options:
    """SPEC §13: explicit > user settings.json > project canon.toml > defaults."""
    options = Options(project)
    if explicit is not None and not isinstance(explicit, Mapping):
        raise OptionError("canon options must be an object of keys and values.")
    given = {k: check(k, v, options.project) for k, v in (explicit or {}).items() if v is not None}
    toml_path = project_file(options.project)
    found, data = _read_file(toml_path, OPTION_KEYS, options)
    held = [key for key in leading_out(options.project, found) if key not in given]
    sha = trust_digest(options.project, found, data) if held and not trust else ""
    if sha and trusted(env).get(os.path.realpath(options.project)) != sha:
        for key in held:
            del found[key]
        sentence = (
            f"{toml_path} sets {' and '.join(held)} leading outside the project; canon ignores "
            f"{'them' if len(held) > 1 else 'it'} until you read the file and run `canon trust` "
            "in the project."
        )
        options.issues.append(Problem(toml_path, held[0], sentence, UNTRUSTED_OPTION))
    for key, value in found.items():
        options.values[key], options.sources[key] = value, str(toml_path)
    user = settings_file(env)
    for key, value in _read_file(user, BEHAVIOUR_KEYS, options)[0].items():
        options.values[key], options.sources[key] = value, str(user)
    for key, value in given.items():
        options.values[key], options.sources[key] = value, explicit_source
    return options


def _read_file(
    path: Path, allowed: tuple[str, ...], options: Options
) -> tuple[dict[str, Any], bytes]:
    """The valid options of one file and its bytes; each problem a sentence in options.problems."""
    try:
        data = read_option_file(path, options.project)
    except FileNotFoundError:
        return {}, b""
    except OSError as exc:
        sentence = f"{path} cannot be read ({exc.strerror or exc}); defaults apply."
        options.issues.append(Problem(path, None, sentence))
        return {}, b""
    except ValueError as exc:
        options.issues.append(Problem(path, None, f"{path} {exc}; defaults apply."))
        return {}, b""
    raw = _decode(path, data, options)
    if raw is None:
        return {}, data
    found: dict[str, Any] = {}
    known = ", ".join(OPTION_KEYS)
    for key, value in raw.items():
        if key not in OPTION_KEYS:
            problem = f"unknown option {key!r}; remove it (the options are {known})"
        elif key not in allowed:
            problem = (
                f"option {key!r} is project topology, not a personal setting; move it to "
                f"{PROJECT_FILE} at the project root (or pass --{key}); ignored here"
            )
        else:
            try:
                found[key] = check(key, value, options.project)
                continue
            except OptionError as exc:
                why = str(exc).rstrip(".")
                problem = (
                    f"{why[0].lower() + why[1:]}; fix the value "
                    f"(default {show(DEFAULTS[key])} applies meanwhile)"
                )
        options.issues.append(Problem(path, key, f"{path}: {problem}."))
    return found, data


MAX_OPTION_FILE = 1 << 20  # an option file is a few lines; anything larger is not one


def read_option_file(path: Path, project: Path) -> bytes:
    """An option file's bytes, only from a regular file of sane size (a FIFO would block, SPEC §12)
    inside the project for canon.toml; ValueError carries the end of the sentence why not."""
    if path.name == PROJECT_FILE and os.path.lexists(path):
        real, base = os.path.realpath(path), os.path.realpath(project)
        if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
            raise ValueError(
                f"is a symbolic link leading outside the project (to {real}): "
                "replace it with a file of its own"
            )
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("is not a regular file: replace it with a plain file")
        data = b""  # (a file growing while it is read is caught too)
        while max(info.st_size, len(data)) <= MAX_OPTION_FILE and (chunk := os.read(fd, 65536)):
            data += chunk
        if max(info.st_size, len(data)) > MAX_OPTION_FILE:
            raise ValueError(f"is larger than {MAX_OPTION_FILE} bytes: it cannot be an option file")
        return data
    finally:
        os.close(fd)


def _decode(path: Path, data: bytes, options: Options) -> dict[str, Any] | None:
    try:
        text = data.decode("utf-8")
        if path.name == PROJECT_FILE:
            import tomllib  # only projects that have a canon.toml pay for the import

            raw: object = tomllib.loads(text)
        else:
            raw = json.loads(text) if text.strip() else {}
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        kind = "TOML" if path.name == PROJECT_FILE else "JSON"
        detail = " ".join(str(exc).split())[:160]
        sentence = (
            f"{path} is not valid {kind} ({detail}); fix its syntax; defaults apply meanwhile."
        )
        options.issues.append(Problem(path, None, sentence))
        return None
    if not isinstance(raw, dict):
        sentence = f"{path} must hold one object of option keys; defaults apply meanwhile."
        options.issues.append(Problem(path, None, sentence))
        return None
    return raw
