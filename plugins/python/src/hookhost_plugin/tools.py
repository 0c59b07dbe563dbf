"""Typed tools: a Python function whose arguments are a dataclass or a
TypedDict. The SDK derives the tool's JSON schema from the type hints,
decodes the model's arguments strictly into that type, and answers
pre_tool_call_can_provide_result for the tool, as the Go SDK's NewTool does.

Types map onto JSON Schema as in the Go SDK: ``str`` string, ``bool``
boolean, ``int`` integer (64-bit, as Go's int), ``float`` number,
``list[T]`` array, ``dict[str, T]`` object with additionalProperties T, a
nested dataclass or TypedDict object, ``Any`` any value, ``Literal["a",
"b"]`` a string enum. ``Optional[T]`` and fields with a default are not
required; a default is told to the model as "default". A description comes
from ``Annotated[T, "text"]`` or ``field(metadata={"description": "text"})``.
Unknown properties are refused.

Decoding errors, and the error results, are worded as the Go SDK words them
(``{"error": "tool <name>: arguments: args.limit: must be an integer, got
string \\"3\\""}``), so that a model meets the same messages from every
plugin.
"""

from __future__ import annotations

import dataclasses
import decimal
import inspect
import json
import logging
import re
import sys
import traceback
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

from .types import ToolResult, ToolSpec, compact_json

__all__ = ["Tool", "tool", "ToolError", "ArgsError"]

_NONE_TYPE = type(None)

_log = logging.getLogger("hookhost_plugin")

# How many problems one decoding reports at most, as the Go SDK and the
# host's validation.
MAX_ARG_ERRORS = 20

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class ToolError(Exception):
    """Raised by a tool to answer the error result ``{"error": <message>}``:
    a failure the model can read and act on, like a Go tool's error return."""


class ArgsError(TypeError):
    """A tool's argument type has no JSON schema the SDK can derive: a bug in
    the plugin, raised when the tool is declared."""


class _Num(str):
    """A JSON number, kept as its literal text so that 20.0 is an integer
    and nothing is rounded before it is checked."""


def _bad_constant(name: str) -> Any:
    raise ValueError("invalid character %r looking for beginning of value" % name)


class _Schema:
    """One node of a derived argument type: how to describe it, how to
    decode into it."""

    def __init__(self, kind: str, **kw: Any) -> None:
        self.kind = kind  # str bool int float list dict object any enum
        self.elem: Optional[_Schema] = kw.get("elem")
        self.fields: List[_Field] = kw.get("fields", [])
        self.make: Optional[Callable[[Dict[str, Any]], Any]] = kw.get("make")
        self.enum: Optional[List[str]] = kw.get("enum")

    def schema(self, desc: str = "", default: Any = dataclasses.MISSING) -> Dict[str, Any]:
        """The JSON schema of this node, keys in the Go SDK's order."""
        s: Dict[str, Any] = {}
        s.update(
            {
                "str": {"type": "string"},
                "enum": {"type": "string"},
                "bool": {"type": "boolean"},
                "int": {"type": "integer"},
                "float": {"type": "number"},
                "list": {"type": "array"},
                "dict": {"type": "object"},
                "object": {"type": "object"},
                "any": {},
            }[self.kind]
        )
        if desc:
            s["description"] = desc
        if self.enum is not None:
            s["enum"] = list(self.enum)
        if default is not dataclasses.MISSING:
            s["default"] = default
        if self.kind == "list":
            s["items"] = self.elem.schema()
        elif self.kind == "dict":
            s["additionalProperties"] = self.elem.schema()
        elif self.kind == "object":
            s["properties"] = {f.name: f.node.schema(f.desc, f.default) for f in self.fields}
            required = [f.name for f in self.fields if f.required]
            if required:
                s["required"] = required
            s["additionalProperties"] = False
        return s


@dataclasses.dataclass
class _Field:
    name: str
    node: _Schema
    required: bool
    desc: str
    default: Any  # dataclasses.MISSING when none


def _describe_hint(hint: Any) -> str:
    return getattr(hint, "__name__", None) or repr(hint)


def _build(hint: Any, path: str, seen: Tuple[type, ...]) -> Tuple[_Schema, bool, str]:
    """The node of ``hint``, whether it was Optional, and the description an
    Annotated gave it."""
    desc = ""
    optional = False
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        args = typing.get_args(hint)
        hint = args[0]
        desc = " ".join(a for a in args[1:] if isinstance(a, str))
        origin = typing.get_origin(hint)
    if origin is typing.Union or (
        sys.version_info >= (3, 10) and origin is getattr(__import__("types"), "UnionType", None)
    ):
        args = [a for a in typing.get_args(hint) if a is not _NONE_TYPE]
        if len(args) != 1 or len(typing.get_args(hint)) != 2:
            raise ArgsError(
                "%s: a union %s is not supported; use Optional[T]" % (path, _describe_hint(hint))
            )
        node, _, inner = _build(args[0], path, seen)
        return node, True, desc or inner
    if hint is Any:
        return _Schema("any"), optional, desc
    if hint is bool:
        return _Schema("bool"), optional, desc
    if hint is int:
        return _Schema("int"), optional, desc
    if hint is float:
        return _Schema("float"), optional, desc
    if hint is str:
        return _Schema("str"), optional, desc
    if origin is typing.Literal:
        values = list(typing.get_args(hint))
        if not values or not all(isinstance(v, str) for v in values):
            raise ArgsError("%s: Literal values must be strings (an enum of strings)" % path)
        return _Schema("enum", enum=values), optional, desc
    if origin in (list, List):
        (item,) = typing.get_args(hint) or (Any,)
        node, _, _ = _build(item, path + "[]", seen)
        return _Schema("list", elem=node), optional, desc
    if origin in (dict, Dict):
        key, val = typing.get_args(hint) or (str, Any)
        if key is not str:
            raise ArgsError("%s: dict keys must be str (JSON object keys are strings)" % path)
        node, _, _ = _build(val, path + "{}", seen)
        return _Schema("dict", elem=node), optional, desc
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or _is_typeddict(hint)):
        if hint in seen:
            raise ArgsError(
                "%s: %s contains itself, and a recursive schema is not supported"
                % (path, hint.__name__)
            )
        return _object(hint, path, seen + (hint,)), optional, desc
    raise ArgsError(
        "%s: type %s has no JSON form a tool argument can take" % (path, _describe_hint(hint))
    )


def _is_typeddict(tp: type) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _object(tp: type, path: str, seen: Tuple[type, ...]) -> _Schema:
    try:
        hints = typing.get_type_hints(tp, include_extras=True)
    except Exception as exc:  # a forward reference that does not resolve
        raise ArgsError(
            "%s: the type hints of %s cannot be read: %s" % (path, tp.__name__, exc)
        ) from None
    fields: List[_Field] = []
    if dataclasses.is_dataclass(tp):
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            node, optional, desc = _build(hints[f.name], "%s.%s" % (path, f.name), seen)
            default: Any = dataclasses.MISSING
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                default = f.default_factory()  # type: ignore[misc]
            has_default = default is not dataclasses.MISSING
            desc = f.metadata.get("description", desc)
            shown = default if has_default and default is not None else dataclasses.MISSING
            if shown is not dataclasses.MISSING:
                try:
                    compact_json(shown)
                except (TypeError, ValueError):
                    raise ArgsError(
                        "%s.%s: default %r is not JSON" % (path, f.name, shown)
                    ) from None
            fields.append(_Field(f.name, node, not (optional or has_default), desc, shown))

        def make(values: Dict[str, Any]) -> Any:
            return tp(**values)

    else:
        required_keys = getattr(tp, "__required_keys__", frozenset(hints))
        for name, hint in hints.items():
            node, optional, desc = _build(_strip_required(hint), "%s.%s" % (path, name), seen)
            fields.append(
                _Field(
                    name, node, name in required_keys and not optional, desc, dataclasses.MISSING
                )
            )

        def make(values: Dict[str, Any]) -> Any:
            return dict(values)

    return _Schema("object", fields=fields, make=make)


def _strip_required(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if (
        origin in (getattr(typing, "Required", None), getattr(typing, "NotRequired", None))
        and origin is not None
    ):
        return typing.get_args(hint)[0]
    return hint


# --- decoding ----------------------------------------------------------------

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _child(path: str, key: str) -> str:
    if _PLAIN_KEY.match(key):
        return path + "." + key
    return path + "[" + json.dumps(key, ensure_ascii=False) + "]"


def _clip(s: str) -> str:
    return s[:40] + "..." if len(s) > 40 else s


def _describe(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean " + ("true" if v else "false")
    if isinstance(v, _Num):
        return "number " + _clip(str(v))
    if isinstance(v, str):
        return "string " + json.dumps(v[:40] + "..." if len(v) > 40 else v, ensure_ascii=False)
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _quote_list(names: List[str]) -> str:
    return ", ".join(json.dumps(n, ensure_ascii=False) for n in names)


def _plain(v: Any) -> Any:
    """A decoded value with its numbers as Python numbers."""
    if isinstance(v, _Num):
        d = decimal.Decimal(str(v))
        if d == d.to_integral_value() and "." not in v and "e" not in v.lower():
            return int(v)
        f = float(v)
        if f in (float("inf"), float("-inf")):
            raise ValueError("%s is out of range" % _clip(str(v)))
        return f
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


class _Decoder:
    def __init__(self) -> None:
        self.errs: List[str] = []

    def fail(self, path: str, msg: str) -> None:
        """Record a problem at ``path`` (at most MAX_ARG_ERRORS)."""
        if len(self.errs) < MAX_ARG_ERRORS:
            self.errs.append(path + ": " + msg)

    def decode(self, node: _Schema, val: Any, path: str) -> Any:
        """``val`` decoded as ``node`` says, or None with problems recorded."""
        if len(self.errs) >= MAX_ARG_ERRORS:
            return None
        k = node.kind
        if k == "any":
            try:
                return _plain(val)
            except ValueError as exc:
                self.fail(path, str(exc))
                return None
        if k in ("str", "enum"):
            if not isinstance(val, str) or isinstance(val, _Num):
                self.fail(path, "must be a string, got %s" % _describe(val))
                return None
            if node.enum is not None and val not in node.enum:
                self.fail(
                    path, "must be one of %s, got %s" % (_quote_list(node.enum), _describe(val))
                )
                return None
            return str(val)
        if k == "bool":
            if not isinstance(val, bool):
                self.fail(path, "must be a boolean, got %s" % _describe(val))
                return None
            return val
        if k == "int":
            if not isinstance(val, _Num):
                self.fail(path, "must be an integer, got %s" % _describe(val))
                return None
            try:
                d = decimal.Decimal(str(val))
            except decimal.InvalidOperation:
                self.fail(path, "must be an integer, got number %s" % _clip(str(val)))
                return None
            if d != 0 and d.adjusted() > 20:
                self.fail(path, "%s is out of range for a 64-bit integer" % _clip(str(val)))
                return None
            if d != d.to_integral_value():
                self.fail(path, "must be an integer, got number %s" % _clip(str(val)))
                return None
            n = int(d)
            if not _INT64_MIN <= n <= _INT64_MAX:
                self.fail(path, "%s is out of range for a 64-bit integer" % _clip(str(val)))
                return None
            return n
        if k == "float":
            if not isinstance(val, _Num):
                self.fail(path, "must be a number, got %s" % _describe(val))
                return None
            f = float(val)
            if f in (float("inf"), float("-inf")):
                self.fail(path, "%s is out of range" % _clip(str(val)))
                return None
            return f
        if k == "list":
            if not isinstance(val, list):
                self.fail(path, "must be an array, got %s" % _describe(val))
                return None
            return [self.decode(node.elem, x, "%s[%d]" % (path, i)) for i, x in enumerate(val)]
        if k == "dict":
            if not isinstance(val, dict):
                self.fail(path, "must be an object, got %s" % _describe(val))
                return None
            return {
                key: self.decode(node.elem, val[key], _child(path, key)) for key in sorted(val)
            }
        # object
        if not isinstance(val, dict):
            self.fail(path, "must be an object, got %s" % _describe(val))
            return None
        by_name = {f.name: f for f in node.fields}
        for f in node.fields:
            if f.required and f.name not in val:
                self.fail(
                    path, "missing required property %s" % json.dumps(f.name, ensure_ascii=False)
                )
        out: Dict[str, Any] = {}
        for key in sorted(val):
            f = by_name.get(key)
            if f is None:
                if not node.fields:
                    self.fail(
                        path,
                        "unexpected property %s; this tool takes no arguments, send {}"
                        % json.dumps(key, ensure_ascii=False),
                    )
                else:
                    self.fail(
                        path,
                        "unexpected property %s; allowed properties are %s"
                        % (
                            json.dumps(key, ensure_ascii=False),
                            _quote_list([x.name for x in node.fields]),
                        ),
                    )
                continue
            out[key] = self.decode(f.node, val[key], _child(path, key))
        if self.errs:
            return None
        return node.make(out)


def _loads(raw: str) -> Any:
    return json.loads(raw, parse_int=_Num, parse_float=_Num, parse_constant=_bad_constant)


class Tool:
    """A tool written as a Python function, answered by the SDK.

    ``run(args)`` or ``run(args, ctx)`` gets the decoded arguments (an
    instance of ``args_type``: a dataclass or a TypedDict) and returns any
    JSON-encodable value (a dataclass is encoded as its fields), or a
    :class:`ToolResult` to answer exactly that. Raising :class:`ToolError`
    answers ``{"error": <its message>}``; any other exception answers an
    error result too, and is logged with its traceback.
    """

    def __init__(
        self,
        name: str,
        description: str,
        run: Callable[..., Any],
        args_type: Optional[type] = None,
    ) -> None:
        if args_type is None:
            args_type = _args_type_of(run, name)
        try:
            node, _, _ = _build(args_type, "args", ())
        except ArgsError as exc:
            raise ArgsError(
                "tool %s: argument type %s: %s" % (name, _describe_hint(args_type), exc)
            ) from None
        if node.kind != "object":
            raise ArgsError(
                "tool %s: the argument type must be a dataclass or a TypedDict "
                "(tool arguments are a JSON object)" % name
            )
        self.name = name
        self.description = description
        self.args_type = args_type
        self._node = node
        self._run = run
        self._wants_ctx = _wants_ctx(run)
        self.spec = ToolSpec(name=name, description=description, input_schema=node.schema())

    def decode(self, arguments: str) -> Tuple[Any, List[str]]:
        """The arguments decoded, or the problems found (Go's wording)."""
        raw = (arguments or "").strip()
        if raw in ("", "null"):
            raw = "{}"
        try:
            val = _loads(raw)
            d = _Decoder()
            out = d.decode(self._node, val, "args")
        except ValueError as exc:
            return None, ["args: not valid JSON: %s" % exc]
        except RecursionError:
            # Hostile input: answered, not a crash of the handler.
            return None, ["args: nested too deeply"]
        return out, d.errs

    def call(self, arguments: str, ctx: Any = None) -> ToolResult:
        """Run the tool on raw JSON arguments exactly as the SDK does when
        the host asks for its result, so that a tool can be tested alone."""
        args, errs = self.decode(arguments)
        if errs:
            return ToolResult.error("tool %s: arguments: %s" % (self.name, "; ".join(errs)))
        try:
            v = self._run(args, ctx) if self._wants_ctx else self._run(args)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:  # one bug costs one tool call, not the plugin
            _log.error(
                "tool raised %s: %s",
                type(exc).__name__,
                exc,
                extra={"hookhost": {"tool": self.name, "traceback": traceback.format_exc()}},
            )
            return ToolResult.error(
                "tool %s failed: it raised %s: %s" % (self.name, type(exc).__name__, exc)
            )
        if isinstance(v, ToolResult):
            return v
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            v = dataclasses.asdict(v)
        try:
            return ToolResult(content=compact_json(v))
        except (TypeError, ValueError) as exc:
            _log.error(
                "tool result cannot be encoded as JSON",
                extra={"hookhost": {"tool": self.name, "error": str(exc)}},
            )
            return ToolResult.error(
                "tool %s: its result cannot be encoded as JSON: %s" % (self.name, exc)
            )


def _params(fn: Callable[..., Any]) -> List[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def _wants_ctx(fn: Callable[..., Any]) -> bool:
    return len(_params(fn)) >= 2


def _args_type_of(fn: Callable[..., Any], name: str) -> type:
    params = _params(fn)
    if not params:
        raise ArgsError("tool %s: its function takes no arguments parameter" % name)
    hints = typing.get_type_hints(fn, include_extras=True)
    hint = hints.get(params[0].name)
    if hint is None:
        raise ArgsError(
            "tool %s: annotate the arguments parameter %r with a dataclass or TypedDict"
            % (name, params[0].name)
        )
    return hint


def tool(name: str, description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a plugin method as a typed tool::

        @tool("weather__forecast", "The forecast for a city")
        def forecast(self, args: ForecastArgs) -> dict: ...

    The method's first parameter after self is annotated with the argument
    type; a second one, if any, receives the call's :class:`Context`.
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__hookhost_tool__ = (name, description)  # type: ignore[attr-defined]
        return fn

    return mark
