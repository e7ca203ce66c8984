"""Pieces every wire form shares: strict scalars, timestamps, base64, bounded JSON values, errors.

cattrs's defaults are lenient (``str(5)`` becomes ``"5"``); a protocol codec must not be, so the
scalar hooks here accept exactly the JSON types the schema allows and raise ``InvalidParamsError``
with a reason a client can act on.  Paths are added by :func:`structure_or_raise`.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
import typing
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import attrs
import cattrs
import orjson
from cattrs.errors import AttributeValidationNote
from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ..errors import InvalidParamsError, ParseError
from ..model import JsonObject, JsonValue, is_required, json_problem

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MISSING: Final = "required field missing"
"""The reason a REQUIRED field left out is refused with, in every wire form."""


def loads(body: bytes | str) -> Any:
    """Parse a JSON document; a bad document raises ``ParseError`` (-32700).

    A UTF-8 byte-order mark before the document is passed over, as RFC 8259 §8.1 allows:
    some clients write one (Windows PowerShell 5.1's ``Invoke-RestMethod``, files saved as
    "UTF-8 with BOM"), and orjson refuses it.
    """
    document = body
    if isinstance(body, bytes) and body.startswith(codecs.BOM_UTF8):
        document = body[len(codecs.BOM_UTF8) :]
    elif isinstance(body, str) and body.startswith("\ufeff"):
        document = body[1:]
    try:
        return orjson.loads(document)
    except orjson.JSONDecodeError as exc:
        reason = _not_utf8(body) or exc.msg  # (the offset of a bad byte counts the mark)
        refused = ParseError(f"Parse error: the request body is not valid JSON ({reason})")
        refused.reason = reason
        raise refused from None


def _not_utf8(body: bytes | str) -> str | None:
    """Where ``body`` stops being UTF-8, if it does: orjson says only "surrogates not allowed"
    for any bad byte, which sends a client looking for escapes that are not there."""
    if isinstance(body, str):
        return None
    try:
        body.decode()
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text: byte 0x{body[exc.start]:02x} at offset {exc.start}"
    return None


def dumps(value: Any) -> bytes:
    """Serialize plain JSON values (the output of a converter's ``unstructure``)."""
    return orjson.dumps(value)


def expect_str(value: Any, _type: Any = str, *, path: str = "") -> str:
    if not isinstance(value, str):
        raise InvalidParamsError(f"expected a string, got {json_type(value)}", path=path)
    return value


def expect_bool(value: Any, _type: Any = bool) -> bool:
    if not isinstance(value, bool):
        raise InvalidParamsError(f"expected a boolean, got {json_type(value)}")
    return value


JSON_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""A JSON number literal (RFC 8259 §6): the form ProtoJSON reads an integer written as a string
in (``"10"``, ``"1e1"``), unlike Python's ``int`` (``" 1"``, ``"1_0"``, other scripts' digits)."""


def expect_int(value: Any, _type: Any = int) -> int:
    """An int32; ProtoJSON also allows integers written as strings (a JSON number in quotes)."""
    if isinstance(value, str):
        if len(value) > 40 or not JSON_NUMBER.fullmatch(value):  # no int32 needs more
            raise InvalidParamsError(f"expected an integer, got {value[:40]!r}")
        value = json.loads(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParamsError(f"expected an integer, got {json_type(value)}")
    if not INT32_MIN <= value <= INT32_MAX:
        raise InvalidParamsError("integer out of the 32-bit range")
    return value


def expect_object(value: Any, *, path: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParamsError(f"expected an object, got {json_type(value)}", path=path)
    return value


def expect_list(value: Any, *, path: str = "") -> list[Any]:
    if not isinstance(value, list):
        raise InvalidParamsError(f"expected an array, got {json_type(value)}", path=path)
    return value


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
    return type(value).__name__


def check_json_value(value: Any, _type: Any = None, *, path: str = "") -> JsonValue:
    """Accept a plain JSON value (``model.json_problem``: bounded depth, checked without
    recursion)."""
    problem = json_problem(value)
    if problem is not None:
        raise InvalidParamsError(problem, path=path)
    return value  # type: ignore[no-any-return]


def check_json_object(value: Any, _type: Any = None) -> dict[str, JsonValue]:
    """A ``google.protobuf.Struct``: a JSON object of bounded depth."""
    return check_json_value(expect_object(value))  # type: ignore[return-value]


def format_timestamp(value: datetime) -> str:
    """RFC 3339 in UTC with millisecond precision and a ``Z`` suffix."""
    # ``isoformat`` pads years below 1000 to four digits (``strftime("%Y")`` does not).
    if value.tzinfo is not UTC:  # (every time the runtime makes is UTC already)
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


TIMESTAMP: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?"
    r"(?P<offset>Z|[+-][0-9]{2}:[0-9]{2})?"
)
"""ProtoJSON's ``google.protobuf.Timestamp``: RFC 3339 with an uppercase ``T``, 0 to 9 fraction
digits and ``Z`` or an offset (left out only by v0.3 JSON peers); not the other forms
``datetime.fromisoformat`` reads (a space for the ``T``, more fraction digits, no seconds,
``20240101T000000``)."""


def parse_timestamp(value: Any, _type: Any = datetime, *, offset_required: bool = True) -> datetime:
    """A :data:`TIMESTAMP` with its offset (without one, read naive, unless
    ``offset_required``)."""
    text = expect_str(value)
    found = TIMESTAMP.fullmatch(text)
    if found and (found["offset"] or not offset_required):
        try:
            return datetime.fromisoformat(text)
        except ValueError:  # a field out of range: month 13, 24:00, second 60
            pass
    offset = "then Z or +hh:mm" if offset_required else "optionally Z or +hh:mm"
    raise InvalidParamsError(
        f"not an RFC 3339 timestamp (YYYY-MM-DDThh:mm:ss, up to 9 fraction digits, {offset}):"
        f" {text[:40]!r}"
    )


def encode_bytes(value: bytes) -> str:
    """Standard base64 with padding, as ProtoJSON writes ``bytes``."""
    return base64.b64encode(value).decode("ascii")


def decode_bytes(value: Any, _type: Any = bytes) -> bytes:
    """Standard or URL-safe base64, padded or not (ProtoJSON readers accept both)."""
    text = expect_str(value)
    if "-" in text or "_" in text:
        text = text.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except binascii.Error:
        raise InvalidParamsError("not valid base64") from None


def _is_tuple(type_: Any) -> bool:
    return typing.get_origin(type_) is tuple


def _is_dict(type_: Any) -> bool:
    return typing.get_origin(type_) is dict


def install_scalar_hooks(conv: cattrs.Converter) -> None:
    """Strict scalar, timestamp, bytes, array and object hooks shared by every wire form."""
    structure_tuple = conv._structure_tuple  # cattrs' own, with per-index error notes

    def expect_array(value: Any, type_: Any) -> tuple[Any, ...]:
        return structure_tuple(expect_list(value), type_)

    conv.register_structure_hook_func(_is_tuple, expect_array)

    def array_of(type_: Any) -> Callable[[Any], list[Any]]:
        """``tuple[X, ...]`` out as a list, by a comprehension: cattrs' own hook feeds
        ``list()`` a generator, a frame and a resumption per item for every array."""
        item = conv.get_unstructure_hook(typing.get_args(type_)[0])
        if item is identity:  # (strings)
            return list
        return lambda values: [item(value) for value in values]

    conv.register_unstructure_hook_factory(_is_tuple, array_of)
    structure_dict = conv._structure_dict

    def expect_map(value: Any, type_: Any) -> dict[Any, Any]:
        return structure_dict(expect_object(value), type_)

    conv.register_structure_hook_func(_is_dict, expect_map)
    conv.register_structure_hook(str, expect_str)
    conv.register_structure_hook(bool, expect_bool)
    conv.register_structure_hook(int, expect_int)
    conv.register_structure_hook(datetime, parse_timestamp)
    conv.register_unstructure_hook(datetime, format_timestamp)
    conv.register_structure_hook(bytes, decode_bytes)
    conv.register_unstructure_hook(bytes, encode_bytes)


def install_json_value_hooks(conv: cattrs.Converter) -> None:
    """``Struct``/``Value`` content passes through as plain JSON, checked for depth on input."""
    conv.register_structure_hook_func(lambda t: t is JsonValue, check_json_value)
    conv.register_structure_hook_func(lambda t: t is JsonObject, check_json_object)
    conv.register_unstructure_hook_func(lambda t: t in (JsonValue, JsonObject), lambda v: v)


def artifacts_listed(page: dict[str, Any]) -> dict[str, Any]:
    """An encoded ``ListTasksResponse`` with every task's ``artifacts`` key written, an empty
    list for a task without any: what a request with ``includeArtifacts`` gets (A2A v1.0
    §3.1.4, v0.3 §7.4.1), where ProtoJSON's default leaves an empty list out."""
    for task in page["tasks"]:
        task.setdefault("artifacts", [])
    return page


def camel_encoder(
    conv: cattrs.Converter,
    cls: type,
    *,
    renames: Mapping[str, str] | None = None,
    always: Collection[str] = (),
    omit: Collection[str] = (),
) -> Callable[[Any], dict[str, Any]]:
    """An attrs class -> a dict with camelCase keys, unset fields left out.

    A field is always written when it is REQUIRED, has no default, or is named in ``always``;
    fields in ``omit`` are never written (the wire form has no place for them).
    """
    renames = renames or {}
    overrides: dict[str, Any] = {}
    for f in attrs.fields(cls):
        if f.name in omit:
            overrides[f.name] = override(omit=True)
            continue
        keep = is_required(f) or f.default is attrs.NOTHING or f.name in always
        overrides[f.name] = override(
            rename=renames.get(f.name, camel(f.name)), omit_if_default=not keep
        )
    return make_dict_unstructure_fn(cls, conv, _cattrs_omit_if_default=True, **overrides)


def camel_decoder(
    conv: cattrs.Converter,
    cls: type,
    *,
    renames: Mapping[str, str] | None = None,
    omit: Collection[str] = (),
) -> Callable[[Any, Any], Any]:
    """A dict with camelCase keys -> an attrs class; ``null`` values count as unset.

    Unknown keys are ignored (forward compatibility); fields in ``omit`` are never read.
    """
    renames = renames or {}
    overrides: dict[str, Any] = {
        f.name: override(omit=True)
        if f.name in omit
        else override(rename=renames.get(f.name, camel(f.name)))
        for f in attrs.fields(cls)
    }
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, conv, **overrides)

    def structure(data: Any, _type: Any) -> Any:
        # ``null`` means "unset", except inside Struct/Value content (handled by their hooks).
        obj = expect_object(data)
        if None in obj.values():
            obj = {k: v for k, v in obj.items() if v is not None}
        return generated(obj, cls)

    return structure


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return MISSING
    if isinstance(exc, TypeError | AttributeError):
        return "wrong type for this field"
    return str(exc) or type(exc).__name__


def structure_or_raise[T](conv: cattrs.Converter, data: Any, cls: type[T], *, path: str = "$") -> T:
    """Structure ``data`` as ``cls``; any failure becomes one ``InvalidParamsError`` with a path.

    The path names the first problem found, e.g. ``$.message.parts[0]``; a hook's
    ``InvalidParamsError`` with a path of its own (``$.data``) is about that field below it.
    """
    try:
        return conv.structure(data, cls)
    except InvalidParamsError as exc:
        raise exc.at(path + exc.path.removeprefix("$")) from None
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        failure, where = _first_failure(exc, path)
        where = _camel_path(where)
        if isinstance(failure, InvalidParamsError):
            raise failure.at(where + failure.path.removeprefix("$")) from None
        raise InvalidParamsError(_reason(failure), path=where) from None


def _first_failure(exc: BaseException, path: str) -> tuple[BaseException, str]:
    """The first failure inside cattrs' detailed validation errors and where it is (the first
    message ``cattrs.v.transform_error`` would give), fields as ``.name``, items as ``[0]``."""
    while isinstance(exc, cattrs.ClassValidationError | cattrs.IterableValidationError):
        noted, without = exc.group_exceptions()
        if not noted:
            exc = without[0]
            continue
        exc, note = noted[0]
        path += (
            f".{note.name}" if isinstance(note, AttributeValidationNote) else f"[{note.index!r}]"
        )
    return exc, path


def _camel_path(path: str) -> str:
    """cattrs names attributes in paths; clients know the camelCase keys they sent."""
    return re.sub(r"\.([a-z0-9]+(?:_[a-z0-9]+)+)", lambda m: "." + camel(m[1]), path)


def camel(name: str) -> str:
    """snake_case -> lowerCamelCase, as protoc derives ``json_name``."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)
