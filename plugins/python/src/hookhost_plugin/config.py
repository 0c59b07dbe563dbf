"""Reading a plugin's config table strictly into a dataclass."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Dict, Type, TypeVar

__all__ = ["decode_config", "ConfigError"]

_NONE_TYPE = type(None)

T = TypeVar("T")


class ConfigError(ValueError):
    """The config does not fit: the message names the key, for the operator."""


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "table"


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _check(v: Any, hint: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not _NONE_TYPE]
        if v is None:
            return None
        if len(args) == 1:
            return _check(v, args[0], key)
        for a in args:
            try:
                return _check(v, a, key)
            except ConfigError:
                continue
        raise ConfigError(
            "%s: wrong type: got %s, want one of %s"
            % (key, _json_kind(v), ", ".join(_name(a) for a in args))
        )
    if hint is Any:
        return v
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        # bool is an int to Python: True must not pass for 1.
        if not any(type(v) is type(a) and v == a for a in allowed):
            raise ConfigError(
                "%s: %r is not one of %s" % (key, v, ", ".join(repr(a) for a in allowed))
            )
        return v
    want = None
    if hint is bool:
        ok, want = isinstance(v, bool), "bool"
    elif hint is int:
        ok, want = isinstance(v, int) and not isinstance(v, bool), "integer"
    elif hint is float:
        ok, want = isinstance(v, (int, float)) and not isinstance(v, bool), "number"
        v = float(v) if ok else v
    elif hint is str:
        ok, want = isinstance(v, str), "string"
    elif origin is list or hint is list:
        ok, want = isinstance(v, list), "list"
        if ok and typing.get_args(hint):
            (item,) = typing.get_args(hint)
            v = [_check(x, item, "%s[%d]" % (key, i)) for i, x in enumerate(v)]
    elif origin is dict or hint is dict:
        ok, want = isinstance(v, dict), "table"
        if ok and typing.get_args(hint):
            _, value = typing.get_args(hint)
            v = {k: _check(x, value, "%s.%s" % (key, k)) for k, x in v.items()}
    elif dataclasses.is_dataclass(hint):
        if not isinstance(v, dict):
            raise ConfigError("%s: wrong type: got %s, want table" % (key, _json_kind(v)))
        return _decode(v, hint, key + ".")
    else:
        # A value that is not checked is how a guard fails open: refuse the
        # type, for the plugin's author, rather than pass anything.
        raise TypeError(
            "decode_config cannot check %s (field %s): use bool, int, float, str, "
            "Literal, Optional, Union, List, Dict[str, T], Any or a dataclass" % (_name(hint), key)
        )
    if not ok:
        raise ConfigError("%s: wrong type: got %s, want %s" % (key, _json_kind(v), want))
    return v


def _decode(config: Dict[str, Any], cls: Type[T], prefix: str) -> T:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    values: Dict[str, Any] = {}
    for key, v in config.items():
        if key not in fields:
            raise ConfigError(
                "unknown key %r (known keys: %s)"
                % (prefix + key, ", ".join(sorted(fields)) or "none")
            )
        values[key] = _check(v, hints[key], prefix + key)
    for f in fields.values():
        if (
            f.name not in values
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ):
            raise ConfigError("missing key %r" % (prefix + f.name))
    return cls(**values)  # type: ignore[call-arg]


def decode_config(config: Dict[str, Any], cls: Type[T]) -> T:
    """Decode the config table into the dataclass ``cls``, strictly: an
    unknown key is an error (a misspelt key silently ignored is how a guard
    ends up letting through what it was meant to stop), and so is a value
    of the wrong type. Raise the error from ``configure`` as it is: the
    operator sees it through ``hookhost plugins check``."""
    if not isinstance(config, dict):
        raise ConfigError("the config is a %s, want a table" % _json_kind(config))
    return _decode(config, cls, "")
