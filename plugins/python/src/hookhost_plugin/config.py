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


def _check(v: Any, hint: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not _NONE_TYPE]
        if v is None:
            return None
        return _check(v, args[0], key) if len(args) == 1 else v
    if hint is Any:
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
    elif dataclasses.is_dataclass(hint):
        if not isinstance(v, dict):
            raise ConfigError("%s: wrong type: got %s, want table" % (key, _json_kind(v)))
        return _decode(v, hint, key + ".")
    else:
        return v
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
