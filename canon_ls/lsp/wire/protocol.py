"""Invalid params are answered, never dropped (SPEC §12)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import attrs
import cattrs
import cattrs.gen
import cattrs.v
from cattrs.cols import homogenous_tuple_structure_factory as tuple_factory
from cattrs.cols import is_mutable_sequence, is_sequence, list_structure_factory
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, default_converter

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
INVALID_REQUEST = -32600


@dataclass
class Invalid:
    """A message whose params (or id) did not fit its method: answered in `handle_message`."""

    msg_id: Any
    method: str
    reason: str
    is_request: bool
    code: int = INVALID_PARAMS


class CanonProtocol(LanguageServerProtocol):
    """pygls' protocol, answering what it cannot deserialise instead of dropping it."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._strict = strict_converter()
        self.sending_answer = False  # read by stdio.LoopStdout: answers go out first

    def _send_data(self, data: Any) -> None:
        self.sending_answer = (
            "method" not in data if isinstance(data, dict) else (not hasattr(data, "method"))
        )
        try:
            super()._send_data(data)
        finally:
            self.sending_answer = False

    def structure_message(self, data: dict[str, Any]) -> Any:
        if not isinstance(data, dict) or "jsonrpc" not in data or "method" not in data:
            return super().structure_message(data)  # responses and nested objects: as pygls
        method = data["method"]
        msg_id = data.get("id", 0)
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            return _invalid(data, None)
        kind = self.get_message_type(method) if isinstance(method, str) else None
        if kind is None:
            return super().structure_message(data)  # unknown method: pygls says so
        try:
            return self._strict.structure(data, kind)
        except Exception as exc:
            return _invalid(data, exc)

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, Invalid):
            super().handle_message(message)
            return
        if not message.is_request:
            log.warning("ignored %s", message.reason)
            return
        log.info("answered with error %d: %s", message.code, message.reason)
        self._send_response(
            message.msg_id, None, types.ResponseError(code=message.code, message=message.reason)
        )


def strict_converter() -> cattrs.Converter:
    """pygls' converter, taking JSON types as they are."""
    converter = default_converter()
    for kind in (str, int, bool):
        converter.register_structure_hook(kind, _exactly(kind))
    converter.register_structure_hook(float, _number)

    def sequence(kind: Any) -> Any:
        factory = list_structure_factory if is_mutable_sequence(kind) else tuple_factory
        return _shaped(list, factory(kind, converter))

    converter.register_structure_hook_factory(
        lambda kind: is_sequence(kind) or is_mutable_sequence(kind), sequence
    )

    def record(kind: Any) -> Any:
        # lsprotocol's own factory (camelCase names), but a string is no empty object
        names = {a.name: cattrs.gen.override(rename=_camel(a.name)) for a in attrs.fields(kind)}
        inner = cattrs.gen.make_dict_structure_fn(kind, converter, **names)  # type: ignore[arg-type]
        return _shaped(dict, inner)

    converter.register_structure_hook_factory(attrs.has, record)
    return converter


def _shaped(shape: type, inner: Any) -> Any:
    """`inner`, run only on a JSON value of this shape (an array, an object)."""

    def structure(value: Any, kind: Any) -> Any:
        if not isinstance(value, shape):
            raise TypeError(f"expected {_JSON_NAMES[shape]}, got {_json_type(value)}")
        return inner(value, kind)

    return structure


def _camel(name: str) -> str:
    parts = name.rstrip("_").split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def _exactly(kind: type) -> Any:
    def structure(value: Any, _: Any) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {_JSON_NAMES[kind]}, got {_json_type(value)}")
        return value

    return structure


def _number(value: Any, _: Any) -> float:
    if type(value) not in (int, float):
        raise TypeError(f"expected a number, got {_json_type(value)}")
    return float(value)


_JSON_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def _json_type(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _invalid(data: dict[str, Any], cause: BaseException | None) -> Invalid:
    method = data.get("method")
    name = method if isinstance(method, str) else repr(method)
    msg_id = data.get("id")
    is_request = "id" in data
    if is_request and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str)):
        reason = f"The request to {name} has an invalid id."
        return Invalid(None, name, reason, True, INVALID_REQUEST)
    return Invalid(msg_id, name, f"Invalid params for {name}: {_why(cause)}.", is_request)


def _why(cause: BaseException | None) -> str:
    """cattrs' account of what did not fit, one clause per field (at most three)."""
    if isinstance(cause, cattrs.ClassValidationError):
        clauses = cattrs.transform_error(cause, path="", format_exception=_describe)
        shown = [_json_names(c) for c in clauses]
        return "; ".join(shown[:3]) + ("; …" if len(shown) > 3 else "")
    return "they do not match the method's parameters"


def _json_names(clause: str) -> str:
    """`… @ .params.text_document` -> `… at params.textDocument` (the names the client sent)."""
    what, _, where = clause.rpartition(" @ ")
    if not what:
        return clause
    where = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), where.lstrip("."))
    return f"{what} at {where}"


def _describe(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, ValueError | TypeError) and str(exc).startswith(("expected", "Position")):
        return str(exc).rstrip(".")
    if isinstance(exc, ValueError) and "should be in range" in str(exc):
        return str(exc).rstrip(".")
    return cattrs.v.format_exception(exc, type_)
