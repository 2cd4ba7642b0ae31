"""SPEC §12: a request with invalid params is answered with error -32602 and a message.

Every method the server handles is enumerated from its own registration table (plus pygls'
built-in handlers and the pull-diagnostic pair registered at initialize). A generator mutates
one well-formed params object per method (each key deleted, each value replaced by a value of
another JSON type or out of range, the whole params null or of the wrong type); the protocol's
declared types (checked as JSON by `conforms`, written here) say which mutations are invalid.
Invalid ones must get -32602 with a message naming the method, valid ones an answer that is no
internal error; nothing is left unanswered, notifications with bad params are dropped, and
afterwards the server still answers correctly.
"""

from __future__ import annotations

import copy
import enum
import random
from collections import abc
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import attrs
from lsp_harness import build_workspace
from lsprotocol import types
from pygls.protocol.language_server import LanguageServerProtocol
from raw_rpc import RawServer

from canon_ls.lsp.server import create_server
from canon_ls.lsp.startup import meanwhile

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MUTANTS = [None, -1, "x", [], {}, True, 2**40, 1.5]
# canon's own notifications (no protocol type): every mutation is sent, none may harm
CUSTOM_NOTIFICATIONS = {meanwhile.ANSWERED}
CAPABILITIES = {  # enough for the server to register pull diagnostics and code action resolve
    "textDocument": {
        "diagnostic": {"dynamicRegistration": False},
        "codeAction": {"resolveSupport": {"properties": ["edit"]}},
    },
    "workspace": {"diagnostics": {"refreshSupport": True}},
}


def handled_methods() -> set[str]:
    """What the server answers: its feature table, pygls' built-ins, pull diagnostics."""
    ls = create_server()
    methods = set(ls.protocol.fm.features)
    for name in dir(LanguageServerProtocol):
        method = getattr(getattr(LanguageServerProtocol, name), "method_name", None)
        if isinstance(method, str):
            methods.add(method)
    methods |= {types.TEXT_DOCUMENT_DIAGNOSTIC, types.WORKSPACE_DIAGNOSTIC}
    return methods


def is_request(method: str) -> bool:
    if method in CUSTOM_NOTIFICATIONS:
        return False
    return types.METHOD_TO_TYPES[method][1] is not None


def examples(root: Path) -> dict[str, Any]:
    """One well-formed params object per method (`...` for a request without params)."""
    config = (root / "src/core/config.ts").as_uri()
    app = (root / "src/app.ts").as_uri()
    doc = {"uri": config}
    pos = {"line": 0, "character": 2}
    rng = {"start": pos, "end": {"line": 1, "character": 0}}
    return {
        "initialize": {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": CAPABILITIES,
            "workspaceFolders": [{"uri": root.as_uri(), "name": "proj"}],
        },
        "shutdown": ...,
        "textDocument/hover": {"textDocument": doc, "position": pos},
        "textDocument/definition": {"textDocument": doc, "position": pos},
        "textDocument/completion": {"textDocument": doc, "position": pos},
        "textDocument/references": {
            "textDocument": doc,
            "position": pos,
            "context": {"includeDeclaration": True},
        },
        "textDocument/inlayHint": {"textDocument": doc, "range": rng},
        "textDocument/codeLens": {"textDocument": doc},
        "textDocument/documentLink": {"textDocument": doc},
        "textDocument/codeAction": {
            "textDocument": doc,
            "range": rng,
            "context": {"diagnostics": []},
        },
        "codeAction/resolve": {"title": "Mark reviewed", "data": {"op": "none"}},
        "textDocument/diagnostic": {"textDocument": doc},
        "workspace/diagnostic": {"previousResultIds": []},
        "workspace/symbol": {"query": "config"},
        "workspace/willRenameFiles": {
            "files": [{"oldUri": app, "newUri": (root / "src/main.ts").as_uri()}]
        },
        "workspace/executeCommand": {"command": "canon.read", "arguments": [{"path": "src"}]},
        # notifications (on src/app.ts, so the final hover on config.ts is unaffected)
        "textDocument/didOpen": {
            "textDocument": {"uri": app, "languageId": "typescript", "version": 1, "text": "x\n"}
        },
        "textDocument/didChange": {
            "textDocument": {"uri": app, "version": 2},
            "contentChanges": [{"range": rng, "text": "y"}],
        },
        "textDocument/didSave": {"textDocument": {"uri": app}},
        "textDocument/didClose": {"textDocument": {"uri": app}},
        "workspace/didChangeWatchedFiles": {"changes": [{"uri": app, "type": 2}]},
        "$/cancelRequest": {"id": 10**6},
        "$/setTrace": {"value": "off"},
    }


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key or index path inside a JSON value."""
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    else:
        items = enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def mutations(valid: Any) -> Iterator[tuple[str, Any]]:
    """(label, params): the whole params replaced, each path deleted or given another value."""
    for whole in (None, [], 5, "x", True):
        yield f"params={whole!r}", whole
    if valid is ...:
        return
    for path in paths(valid):
        parent_path, key = path[:-1], path[-1]
        if isinstance(key, str):
            params = copy.deepcopy(valid)
            del _at(params, parent_path)[key]
            yield f"delete {_show(path)}", params
        for mutant in MUTANTS:
            params = copy.deepcopy(valid)
            if _at(params, path) == mutant:
                continue
            _at(params, parent_path)[key] = mutant
            yield f"{_show(path)}={mutant!r}", params


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _show(path: tuple[Any, ...]) -> str:
    return ".".join(str(k) for k in path)


def schema_accepts(method: str, params: Any) -> bool:
    """Do these params conform to the method's declared LSP types, as JSON?"""
    kind = types.METHOD_TO_TYPES[method][2]
    if params is ...:
        return kind is None
    if kind is None:
        return params is None
    return conforms(params, kind)


def conforms(value: Any, kind: Any) -> bool:
    """A JSON value against an lsprotocol type: exact JSON types, required fields present,
    integer ranges and literals respected (written here, independently of the server)."""
    if kind is Any or kind is object:
        return True
    origin, args = get_origin(kind), get_args(kind)
    if origin is Union or origin is UnionType:
        return any(conforms(value, a) for a in args)
    if kind is type(None):
        return value is None
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if kind in (bool, int, str):
        return type(value) is kind
    if kind is float:
        return type(value) in (int, float)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return any(type(value) is type(e.value) and value == e.value for e in kind)
    if origin in (list, tuple, abc.Sequence, abc.MutableSequence):
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        return isinstance(value, dict) and all(conforms(v, args[1]) for v in value.values())
    if attrs.has(kind):
        return isinstance(value, dict) and _fields_conform(value, kind)
    raise AssertionError(f"the oracle does not know {kind!r}")


def _fields_conform(value: dict[str, Any], kind: type) -> bool:
    hints = get_type_hints(kind, vars(types))
    for field in attrs.fields(kind):
        name = _camel(field.name)
        if name not in value:
            if field.default is attrs.NOTHING:
                return False
            continue
        if not conforms(value[name], hints[field.name]):
            return False
        checks = getattr(field.validator, "_validators", [field.validator])
        for check in checks:
            if check is not None and not _passes(check, field, value[name]):
                return False
    return True


def _passes(check: Any, field: Any, value: Any) -> bool:
    try:
        check(None, field, value)
    except (ValueError, TypeError):
        return False
    return True


def _camel(name: str) -> str:
    parts = name.rstrip("_").split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def test_every_handled_request_has_an_example(tmp_path: Path):
    """The generator covers every request the server handles (a new feature needs one)."""
    requests = {m for m in handled_methods() if is_request(m)}
    assert len(requests) >= 11
    valid = examples(tmp_path)
    assert requests - set(valid) == set()
    assert all(schema_accepts(method, params) for method, params in valid.items())


def test_the_reported_cases_are_invalid():
    """The issue's own reproductions are what the schema calls invalid."""
    doc = {"uri": "file:///a.ts"}
    assert not schema_accepts("textDocument/hover", None)
    assert not schema_accepts(
        "textDocument/hover", {"textDocument": doc, "position": {"line": -1, "character": 0}}
    )


async def test_invalid_params_on_every_method_get_32602(tmp_path: Path):
    """SPEC §12: every request method, every generated invalid params -> error -32602 with a
    message; valid mutations -> an answer; bad notifications dropped; the server survives."""
    root = build_workspace(tmp_path / "proj")
    valid = examples(root)
    methods = handled_methods()
    server = await RawServer.start()
    rng = random.Random(20261129)
    answered = 0
    try:
        # initialize first: invalid ones must be refused before the valid one is accepted
        for label, params in mutations(valid["initialize"]):
            if not schema_accepts("initialize", params):
                answer = await server.request("initialize", params, timeout=30)
                _expect_invalid("initialize", label, answer)
                answered += 1
        initialized = await server.request("initialize", valid["initialize"])
        assert "capabilities" in initialized["result"]
        server.notify("initialized", {})
        lifecycle = ("initialize", "shutdown")
        for method in sorted(m for m in methods if is_request(m) and m not in lifecycle):
            for label, params in mutations(valid[method]):
                answer = await server.request(method, params, timeout=30)
                if schema_accepts(method, params):  # answered, and not by a crash
                    assert "result" in answer or answer["error"]["code"] != INTERNAL_ERROR, (
                        method,
                        label,
                        answer,
                    )
                else:
                    _expect_invalid(method, label, answer)
                answered += 1
        for method in sorted(m for m in methods if not is_request(m) and m != "exit"):
            cases = list(mutations(valid.get(method, ...)))
            for _label, params in rng.sample(cases, min(len(cases), 25)):
                if method in CUSTOM_NOTIFICATIONS or not schema_accepts(method, params):
                    server.notify(method, params)
            await server.flush()
        assert answered > 300
        hover = await server.request(
            "textDocument/hover",
            {
                "textDocument": {"uri": (root / "src/core/config.ts").as_uri()},
                "position": {"line": 0, "character": 2},
            },
        )
        assert "Loads layered config; env beats file." in hover["result"]["contents"]["value"]
    finally:
        code = await server.stop()
    assert code == 0


def _expect_invalid(method: str, label: str, answer: dict) -> None:
    error = answer.get("error")
    assert error is not None, f"{method} {label}: answered {answer} instead of -32602"
    assert error["code"] == INVALID_PARAMS, (method, label, error)
    assert method in error["message"] and len(error["message"]) > len(method) + 10, error
