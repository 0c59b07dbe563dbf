"""The plugin's side of the protocol, without gRPC: the plugin class, the
context a handler gets, how a handler's outcome becomes an answer or a
failure, and protocol version 2's stream of multiplexed calls, stretches,
model stages and observer batches. The server (server.py) and the test harness (testing.py) both
drive this module, so a plugin behaves the same in a test as under the host.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import inspect
import json
import logging
import re
import threading
import time
import traceback
from collections import abc
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from . import _catalogue, convert
from . import types as t
from ._proto import plugin_pb2 as pb
from ._proto import pluginv2_pb2 as pb2
from .tools import Tool

__all__ = [
    "Plugin",
    "Context",
    "HookError",
    "Cancelled",
    "Adapted",
    "HookStream",
    "HOOK_NAMES",
    "Failure",
]

_log = logging.getLogger("hookhost_plugin")

# The catalogue, in its order: the manifest lists hooks in it.
HOOK_NAMES: Tuple[str, ...] = tuple(r.name for r in convert.HOOKS)

Kind = pb2.Failure.Kind
ERROR, PANIC = pb2.Failure.ERROR, pb2.Failure.PANIC
DEADLINE_EXCEEDED, CANCELLED = pb2.Failure.DEADLINE_EXCEEDED, pb2.Failure.CANCELLED
UNKNOWN_HOOK, BAD_REQUEST = pb2.Failure.UNKNOWN_HOOK, pb2.Failure.BAD_REQUEST

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class HookError(Exception):
    """A handler's failure, reported to the host with this message (the
    ERROR kind). Any exception a handler raises is one; this class only
    names the intent."""


def path_match(pattern: str, name: str) -> bool:
    """Go's path.Match, as the host applies matchers: ``*`` is any run of
    characters but ``/``, ``?`` one such character, ``[...]`` a class
    (``[^...]`` negated, ``a-z`` ranges, ``\\`` escapes) and a malformed
    pattern matches nothing."""
    rx = _path_patterns.get(pattern)
    if rx is None:
        rx = _path_patterns[pattern] = _path_regex(pattern)
    return rx is not False and rx.fullmatch(name) is not None


_path_patterns: Dict[str, Any] = {}


def _path_regex(pattern: str) -> Any:
    """The regular expression for a path.Match pattern; False when Go
    calls it malformed (ErrBadPattern)."""
    out = []
    i, n = 0, len(pattern)

    def esc(j: int) -> Tuple[str, int]:
        # One class character, as Go's getEsc reads it.
        if j >= n or pattern[j] in "-]":
            raise ValueError
        if pattern[j] == "\\":
            j += 1
            if j >= n:
                raise ValueError
        return pattern[j], j + 1

    try:
        while i < n:
            c = pattern[i]
            if c == "*":
                out.append("[^/]*")
                i += 1
            elif c == "?":
                out.append("[^/]")
                i += 1
            elif c == "\\":
                if i + 1 >= n:
                    raise ValueError
                out.append(re.escape(pattern[i + 1]))
                i += 2
            elif c == "[":
                i += 1
                negated = i < n and pattern[i] == "^"
                if negated:
                    i += 1
                ranges = []
                while True:
                    if i < n and pattern[i] == "]" and ranges:
                        i += 1
                        break
                    lo, i = esc(i)
                    hi = lo
                    if i < n and pattern[i] == "-":
                        hi, i = esc(i + 1)
                    if i >= n:
                        raise ValueError
                    ranges.append(
                        re.escape(lo) if lo == hi else "%s-%s" % (re.escape(lo), re.escape(hi))
                    )
                out.append("[%s%s]" % ("^" if negated else "", "".join(ranges)))
            else:
                out.append(re.escape(c))
                i += 1
        return re.compile("".join(out), re.DOTALL)
    except (ValueError, re.error):
        return False


class Cancelled(Exception):
    """Raised by :meth:`Context.check` once the call is over for the host:
    cancelled, or past its deadline. Reported with the matching kind."""


class Failure(Exception):
    """Why a call got no answer, in protocol version 2's terms."""

    def __init__(self, kind: int, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def pb(self) -> pb2.Failure:
        """The failure as version 2 sends it."""
        return pb2.Failure(kind=self.kind, message=self.message)

    def __repr__(self) -> str:
        return "Failure(%s, %r)" % (pb2.Failure.Kind.Name(self.kind), self.message)


class Context:
    """What a handler knows about its call: the hook, the deadline, and
    whether the host still waits for the answer.

    A handler that may take long checks ``ctx.cancelled`` (or calls
    ``ctx.check()``, which raises :class:`Cancelled`), or sleeps with
    ``ctx.wait(seconds)``, which returns early, True, when the call is over.

    ``ctx.carrier`` says how the call came from the host: ``"lane"`` (the
    socket the host hands the plugin, protocol version 2), ``"grpc"`` (a
    version 1 call, or version 2's Hooks stream), or ``""`` when no host
    sent it (the test harness).
    """

    def __init__(
        self, hook: str, timeout: Optional[float] = None, parent: Optional["Context"] = None
    ) -> None:
        self.hook = hook
        #: time.monotonic() at which the call's deadline passes, or None.
        self.deadline: Optional[float] = None if timeout is None else time.monotonic() + timeout
        self._event = threading.Event()
        self._reason: Optional[str] = None
        self._lock = threading.Lock()
        self._callbacks: List[Callable[[], None]] = []
        # Set by a stream when the host sent Cancel: no answer is wanted.
        self._host_cancelled = False
        #: "lane", "grpc", or "" (see the class's doc).
        self.carrier = ""
        if parent is not None:
            self.carrier = parent.carrier
            if parent.deadline is not None and (
                self.deadline is None or parent.deadline < self.deadline
            ):
                self.deadline = parent.deadline
            parent.on_cancel(lambda: self.cancel(parent._reason or "cancelled"))

    def remaining(self) -> Optional[float]:
        """Seconds left before the deadline (0 once past), None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    @property
    def cancelled(self) -> bool:
        """True once the host cancelled the call or its deadline passed."""
        return self._event.is_set() or (
            self.deadline is not None and time.monotonic() >= self.deadline
        )

    @property
    def reason(self) -> Optional[str]:
        """ "cancelled" or "deadline exceeded" once the call is over, else None."""
        if self._event.is_set():
            return self._reason
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "deadline exceeded"
        return None

    def check(self) -> None:
        """Raise :class:`Cancelled` if the call is over."""
        r = self.reason
        if r is not None:
            raise Cancelled("%s: %s" % (self.hook, r))

    def wait(self, seconds: Optional[float] = None) -> bool:
        """Sleep up to ``seconds`` (None: until the call is over); True when
        the call is over (then early), False when the time ran out first."""
        limit = self.remaining()
        if seconds is not None:
            limit = seconds if limit is None else min(limit, seconds)
        self._event.wait(limit)
        return self.cancelled

    def cancel(self, reason: str = "cancelled") -> None:
        """End the call: the host stopped waiting for it."""
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()

    def on_cancel(self, cb: Callable[[], None]) -> None:
        """Call ``cb`` when the call is cancelled (at once if it is)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(cb)
                return
        cb()


_HOOK_OPTION_KEYS = ("window_bytes", "overlap_bytes", "decide_after_bytes")


class Plugin:
    """Base class of a plugin. Set ``name`` and ``version``, and define a
    method for each hook the plugin serves, named after the hook; the
    manifest's hook list is derived from the methods defined. Every handler
    takes the payload, and optionally the :class:`Context` second, and
    returns its answer or None for no opinion::

        class Guard(hookhost_plugin.Plugin):
            name, version = "guard", "1.0.0"

            def pre_tool_call(self, call):
                if call.name == "delete_everything":
                    return hookhost_plugin.block("not here")
                return None  # no opinion

    Class attributes: ``matchers`` (globs of the tool names the tool hooks
    apply to; empty: every tool), ``hook_matchers`` (hook name -> globs,
    overriding ``matchers`` for that hook), ``hook_options`` (hook name ->
    options: ``{"transform_llm_output": {"window_bytes": 4096,
    "overlap_bytes": 256}}`` has a streamed answer reach the client window
    by window, ``{"post_llm_call_can_reissue": {"decide_after_bytes": 512}}``
    decides a reissue on the answer's opening), ``tools`` (ToolSpecs the plugin
    answers in its own pre_tool_call_can_provide_result), ``config_type``
    (a dataclass: ``configure`` then receives the config decoded into it by
    :func:`decode_config`, strictly). Methods decorated with :func:`tool`,
    and :class:`Tool` objects in ``typed_tools``, are typed tools the SDK
    answers. A plugin whose hooks depend on its config names those it does
    not serve as configured in :meth:`unserved`.
    """

    name: str = ""
    version: str = "0.0.0"
    matchers: Sequence[str] = ()
    hook_matchers: Mapping[str, Sequence[str]] = {}
    hook_options: Mapping[str, Mapping[str, int]] = {}
    tools: Sequence[t.ToolSpec] = ()
    typed_tools: Sequence[Tool] = ()
    config_type: Optional[type] = None

    def configure(self, config: Any) -> None:
        """Receive the plugin's config table (a dict, or a ``config_type``
        instance), once, before any hook. Raise (any exception) to refuse
        it: its message is the operator's reason."""

    def unserved(self) -> Optional[Iterable[str]]:
        """The hooks, of those the plugin's methods serve, that it does not
        serve as configured (a hook only some configs need): asked once,
        right after ``configure`` accepts the config, and the host never
        asks them of this process. None (the default) or an empty list:
        every hook is served. A name that is not a hook, or an answer that
        is not a list of names, stops the plugin starting, saying so, as a
        fault in the plugin; a hook the plugin has no method for is left
        out."""
        return None

    @property
    def log(self) -> Any:
        """The plugin's logger (see :func:`hookhost_plugin.logger`)."""
        from .log import logger

        return logger()


def _config_keys(plugin: Any, configure: Optional[Callable[..., Any]]) -> Optional[List[str]]:
    """The config keys the manifest declares: the fields of config_type;
    none for a plugin whose configure is Plugin's own (or missing), which
    takes no config; None (undeclared) for a configure of its own that
    checks the config itself."""
    config_type = getattr(plugin, "config_type", None)
    if config_type is not None:
        if isinstance(config_type, type) and dataclasses.is_dataclass(config_type):
            return sorted(f.name for f in dataclasses.fields(config_type) if f.init)
        return None  # validate() refuses it
    if configure is None or getattr(type(plugin), "configure", None) is Plugin.configure:
        return []
    return None


def _wants_ctx(fn: Callable[..., Any], hook: str = "") -> bool:
    """Whether a handler takes the Context as its second argument. A
    handler that can take neither (payload) nor (payload, ctx) is a bug,
    reported when the plugin starts rather than on every call."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    params = [
        p
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
    required = [p for p in params if p.default is p.empty]
    if hook and ((not params and not varargs) or len(required) > 2):
        raise ValueError(
            "%s must take the payload, and optionally the context: def %s(self, payload[, ctx])"
            % (hook, hook)
        )
    return len(params) >= 2 or varargs


# Method name beginnings of the catalogue's hooks: a method that starts so
# but names no hook is likely a misspelt one, which the host would never call.
_HOOK_PREFIXES = ("on_session", "pre_tool", "pre_api", "post_llm", "post_tool", "transform_")


def _call_handler(fn: Callable[..., Any], wants_ctx: bool) -> Callable[[Any, Context], Any]:
    if wants_ctx:
        return lambda payload, ctx: fn(payload, ctx)
    return lambda payload, ctx: fn(payload)


class Adapted:
    """A plugin object as the protocol sees it: its manifest and one
    handler per hook it serves, typed tools included (answered before the
    plugin's own pre_tool_call_can_provide_result, which is asked only for
    other tools)."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.name: str = getattr(plugin, "name", "") or ""
        self.version: str = getattr(plugin, "version", "") or ""
        self.handlers: Dict[str, Callable[[Any, Context], Any]] = {}
        for hook in HOOK_NAMES:
            fn = getattr(plugin, hook, None)
            if callable(fn):
                self.handlers[hook] = _call_handler(fn, _wants_ctx(fn, hook))
        for attr in dir(type(plugin)):
            if attr.startswith(_HOOK_PREFIXES) and attr not in HOOK_NAMES:
                _log.warning(
                    "method %s looks like a hook handler, but no hook has that name; "
                    "the host will not call it",
                    attr,
                    extra={"hookhost": {"hooks": ", ".join(HOOK_NAMES)}},
                )
        self.tools: Dict[str, Tool] = {}
        typed: List[Tool] = list(getattr(plugin, "typed_tools", ()) or ())
        for attr in dir(type(plugin)):
            fn = getattr(type(plugin), attr, None)
            mark = getattr(fn, "__hookhost_tool__", None)
            if mark is not None:
                typed.append(Tool(mark[0], mark[1], getattr(plugin, attr)))
        for tl in typed:
            self.tools.setdefault(tl.name, tl)
        self.specs: List[t.ToolSpec] = list(getattr(plugin, "tools", ()) or ()) + [
            tl.spec for tl in typed
        ]
        self.matchers: List[str] = list(getattr(plugin, "matchers", ()) or ())
        self.hook_matchers: Dict[str, List[str]] = {
            k: list(v) for k, v in dict(getattr(plugin, "hook_matchers", {}) or {}).items()
        }
        self.hook_options: Dict[str, Dict[str, int]] = {
            k: dict(v) for k, v in dict(getattr(plugin, "hook_options", {}) or {}).items()
        }
        if self.tools:
            self._add_tools()
        conf = getattr(plugin, "configure", None)
        self.configure: Optional[Callable[[Dict[str, Any]], Any]] = (
            conf if callable(conf) else None
        )
        self.config_keys = _config_keys(plugin, self.configure)
        #: The hooks of the manifest the plugin does not serve as
        #: configured, in catalogue order: unserved()'s answer, once
        #: configure_json has succeeded.
        self.unserved: List[str] = []

    def _add_tools(self) -> None:
        own = self.handlers.get("pre_tool_call_can_provide_result")
        tools = self.tools

        def provide(call: t.ToolCallRequest, ctx: Context) -> Optional[t.ToolResult]:
            tl = tools.get(call.name)
            if tl is not None:
                return tl.call(call.arguments, ctx)
            return own(call, ctx) if own is not None else None

        self.handlers["pre_tool_call_can_provide_result"] = provide

        # The host asks only for what the matchers cover: exactly the typed
        # tools, plus what the plugin's own provider covers (see the Go
        # SDK's addToolFuncs).
        hook = "pre_tool_call_can_provide_result"
        if hook in self.hook_matchers:
            globs = list(self.hook_matchers[hook])
            if not globs:
                return
        elif own is not None and not self.matchers:
            return
        elif own is not None:
            globs = list(self.matchers)
        else:
            globs = []
        for name in tools:
            if not any(path_match(g, name) for g in globs):
                globs.append(name)
        self.hook_matchers[hook] = globs

    def hooks(self) -> List[str]:
        """The hooks served, in catalogue order."""
        return [h for h in HOOK_NAMES if h in self.handlers]

    def validate(self) -> None:
        """Raise ValueError for a manifest the host would refuse."""
        if not self.name:
            raise ValueError("the plugin has no name (set the class attribute name)")
        seen = set()
        for s in self.specs:
            if not isinstance(s, t.ToolSpec):
                raise ValueError("tools holds a %s, want ToolSpec" % type(s).__name__)
            if not _TOOL_NAME.match(s.name):
                raise ValueError("tool name %r must match ^[a-zA-Z0-9_-]{1,64}$" % s.name)
            if s.name in seen:
                raise ValueError("tool %r listed twice" % s.name)
            seen.add(s.name)
        for h in self.hook_matchers:
            if h not in HOOK_NAMES:
                raise ValueError("hook_matchers names %r, which is not a hook" % h)
        for h, opts in self.hook_options.items():
            if h not in HOOK_NAMES:
                raise ValueError("hook_options names %r, which is not a hook" % h)
            for k, v in opts.items():
                if k not in _HOOK_OPTION_KEYS:
                    raise ValueError(
                        "hook_options[%r] has key %r (use window_bytes, overlap_bytes, decide_after_bytes)"
                        % (h, k)
                    )
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    raise ValueError("hook_options[%r][%r] must be a non-negative int" % (h, k))
        for s in self.specs:
            if s.input_schema is not None and not isinstance(s.input_schema, dict):
                raise ValueError(
                    "tool %r: input_schema must be a dict (a JSON Schema object)" % s.name
                )
        config_type = getattr(self.plugin, "config_type", None)
        if config_type is not None and not (
            isinstance(config_type, type) and dataclasses.is_dataclass(config_type)
        ):
            raise ValueError(
                "config_type must be a dataclass, got %r (leave it None to check "
                "the config in configure)" % (config_type,)
            )
        try:
            self.manifest().SerializeToString()
        except (convert.AnswerError, ValueError, TypeError) as exc:
            raise ValueError("the manifest cannot be encoded: %s" % exc) from None

    def manifest(self) -> pb.Manifest:
        """The manifest, as Describe answers it."""
        m = pb.Manifest(
            name=self.name,
            version=self.version,
            hooks=self.hooks(),
            matchers=self.matchers,
            tools=[convert.tool_spec_to(s) for s in self.specs],
            # The v2 stream of this SDK answers both (HookStream): the host
            # may then ask consecutive model-side hooks, and several
            # observer events, in one exchange each.
            model_stages=True,
            observer_batches=True,
        )
        for h in HOOK_NAMES:
            if h in self.hook_matchers:
                m.hook_matchers.append(pb.HookMatchers(hook=h, matchers=self.hook_matchers[h]))
        for h in HOOK_NAMES:
            if h in self.hook_options:
                m.hook_options.append(pb.HookOptions(hook=h, **self.hook_options[h]))
        if self.config_keys is not None:
            m.config.SetInParent()  # present, even with no keys: declared
            m.config.keys.extend(self.config_keys)
        return m

    def configure_json(self, config_json: bytes) -> List[str]:
        """Configure from the JSON the host sends, and return the hooks
        the plugin does not serve as configured (see Plugin.unserved), as
        ConfigureResponse.unserved_hooks carries them; raises Failure."""
        try:
            config = json.loads(config_json or b"{}")
        except ValueError as exc:
            raise Failure(
                BAD_REQUEST, "the host sent a config that is not JSON: %s" % exc
            ) from None
        if not isinstance(config, dict):
            raise Failure(BAD_REQUEST, "the host sent a config that is not a JSON object")
        if self.configure is not None:
            self._configure(config)
        self.unserved = self._ask_unserved()
        return list(self.unserved)

    def _configure(self, config: Dict[str, Any]) -> None:
        assert self.configure is not None
        config_type = getattr(self.plugin, "config_type", None)

        def configure() -> Any:
            if config_type is not None:
                from .config import decode_config

                return self.configure(decode_config(config, config_type))
            return self.configure(config)

        try:
            outcome(configure, None, "configure")
        except Failure as f:
            # The operator reads this: the plugin's own words, not a type name.
            exc = f.__context__
            if f.kind == ERROR and isinstance(exc, Exception) and str(exc):
                raise Failure(ERROR, str(exc)) from None
            raise

    def _ask_unserved(self) -> List[str]:
        """unserved()'s answer, checked: a plugin's mistake in it stops the
        plugin starting with the mistake named, as a fault in the plugin
        (PANIC, not the config's refusal: no change to the config cures
        it), rather than leaving the host to ask hooks the plugin meant to
        give up, or to skip hooks it meant to serve."""
        fn = getattr(self.plugin, "unserved", None)
        if fn is None:
            return []
        if not callable(fn):
            raise Failure(
                PANIC,
                "unserved must be a method returning hook names, got %s" % type(fn).__name__,
            )
        try:
            names = outcome(fn, None, "unserved")
        except Failure as f:
            raise Failure(PANIC, "unserved() failed: %s" % f.message) from None
        if names is None:
            return []
        if isinstance(names, (str, bytes)) or not isinstance(names, abc.Iterable):
            raise Failure(
                PANIC,
                "unserved() must return a list of hook names, got %s" % type(names).__name__,
            )
        try:
            names = list(names)
        except Exception as exc:
            raise Failure(
                PANIC, "unserved() failed: %s: %s" % (type(exc).__name__, exc)
            ) from None
        for n in names:
            if not isinstance(n, str):
                raise Failure(
                    PANIC,
                    "unserved() must return hook names (strings), got %s %r"
                    % (type(n).__name__, n),
                )
            if n not in HOOK_NAMES:
                raise Failure(
                    PANIC,
                    "unserved() names %r, which is not a hook (the hooks are %s)"
                    % (n, ", ".join(HOOK_NAMES)),
                )
        # A hook the plugin has no method for is not in its manifest: the
        # host would ignore the name, so it is not sent.
        return [h for h in self.hooks() if h in names]

    # --- one call -------------------------------------------------------

    def call(self, row: convert.HookRow, payload: Any, ctx: Context) -> Any:
        """The handler's answer (a dataclass or None); raises Failure."""
        fn = self.handlers.get(row.name)
        if fn is None:
            return None  # not served: no opinion, as the Go SDK answers
        return outcome(lambda: fn(payload, ctx), ctx, row.name)

    def call_wire(self, row: convert.HookRow, request: bytes, ctx: Context) -> bytes:
        """One plain call, from the serialized request message to the
        serialized response message; raises Failure."""
        try:
            msg = row.request.FromString(request)
            payload = row.payload_from(msg)
        except Exception as exc:
            raise Failure(BAD_REQUEST, "undecodable %s request: %s" % (row.name, exc)) from None
        return encode_answer(row, self.call(row, payload, ctx))


def _repair_text(v: Any) -> Any:
    """``v`` with every lone surrogate in its strings replaced by U+FFFD:
    text a Python string can hold but UTF-8, and so the host, cannot."""
    if isinstance(v, str):
        return v.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(v, list):
        return [_repair_text(x) for x in v]
    if isinstance(v, dict):
        return {_repair_text(k): _repair_text(x) for k, x in v.items()}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.replace(
            v, **{f.name: _repair_text(getattr(v, f.name)) for f in dataclasses.fields(v)}
        )
    return v


# Hooks already warned about for invalid text; later ones log at DEBUG.
_warned_utf8: Set[str] = set()


def encode_answer(row: convert.HookRow, answer: Any) -> bytes:
    """A handler's answer as the hook's serialized response; raises Failure
    (ERROR) for an answer that cannot be sent. Text that is not valid
    Unicode (lone surrogates) is repaired with U+FFFD, as the Go SDK repairs
    invalid UTF-8, and said so: WARN the first time per hook, DEBUG after."""
    try:
        try:
            return row.answer_to(answer).SerializeToString()
        except UnicodeEncodeError:
            data = row.answer_to(_repair_text(answer)).SerializeToString()
            _log.log(
                logging.DEBUG if row.name in _warned_utf8 else logging.WARNING,
                "a hook handler answered with text that is not valid Unicode; "
                "replaced it with U+FFFD",
                extra={"hookhost": {"hook": row.name}},
            )
            _warned_utf8.add(row.name)
            return data
    except convert.AnswerError as exc:
        raise Failure(ERROR, str(exc)) from None
    except Exception as exc:
        raise Failure(
            ERROR, "the plugin could not encode its %s answer: %s" % (row.name, exc)
        ) from None


def outcome(fn: Callable[[], Any], ctx: Optional[Context], hook: str) -> Any:
    """Run a handler, turning what it raises into a Failure: anything
    raised once the call is over (Cancelled from ctx.check()) the call's
    end, any other exception the handler's error (ERROR) with its
    traceback at DEBUG, and what is not an Exception (SystemExit,
    KeyboardInterrupt: what would end the process, as a Go panic would)
    PANIC."""
    try:
        return fn()
    except Failure:
        raise
    except Exception as exc:
        # Only a call that is really over says so: a CANCELLED the host did
        # not ask for makes it take the process for gone and restart it.
        r = ctx.reason if ctx is not None else None
        if r is not None:
            raise Failure(
                DEADLINE_EXCEEDED if r == "deadline exceeded" else CANCELLED, str(exc) or r
            ) from None
        if not isinstance(exc, HookError):
            # DEBUG, as the Go SDK logs a panic: the host already warns once
            # per plugin, hook and kind, and a handler failing on every call
            # must not flood its log with tracebacks.
            _log.debug(
                "a %s handler raised %s",
                hook,
                type(exc).__name__,
                extra={
                    "hookhost": {
                        "hook": hook,
                        "error": str(exc),
                        "traceback": traceback.format_exc(),
                    }
                },
            )
        msg = str(exc) if isinstance(exc, HookError) else "%s: %s" % (type(exc).__name__, exc)
        raise Failure(ERROR, msg) from None
    except BaseException as exc:  # noqa: B036 - recovered like a Go panic
        _log.debug(
            "a %s handler raised %s",
            hook,
            type(exc).__name__,
            extra={"hookhost": {"hook": hook, "traceback": traceback.format_exc()}},
        )
        raise Failure(
            PANIC, "panic in %s handler: %s: %s" % (hook, type(exc).__name__, exc)
        ) from None


# --- protocol version 2 ----------------------------------------------------

# The legal stretches (hooks.LegalStretches).
_LEGAL = _catalogue.LEGAL_STRETCHES

# How many calls one stream runs at once (wire.maxInFlight, scaled to
# threads): past it, a new call is answered with a failure at once rather
# than queued behind handlers that may never return.
MAX_IN_FLIGHT = 64


def _decision_breaks_rules(d: t.PreToolCallDecision) -> bool:
    if sum(x is not None for x in (d.block, d.ask, d.modified_args)) > 1:
        return True
    if d.modified_args is not None:
        try:
            v = d.modified_args
            if isinstance(v, (str, bytes)):
                v = json.loads(v)
            return not isinstance(v, dict)
        except ValueError:
            return True
    return False


def _args_text(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, str):
        return v
    return t.compact_json(v)


class HookStream:
    """The plugin's side of one Hooks stream: ``receive`` takes each
    HostMessage, ``send`` is called with each PluginMessage (from any
    thread; it must serialize), ``close`` ends the stream and cancels what
    runs. Every call runs on ``calls``; the stages of a stretch, of a model
    stage and of an observer batch run on ``stages``, so that a stage whose
    handler ignores its deadline does not hold the call past it.
    ``carrier`` is what its calls' contexts say they came by."""

    def __init__(
        self,
        plugin: Adapted,
        send: Callable[[pb2.PluginMessage], None],
        calls: concurrent.futures.Executor,
        stages: concurrent.futures.Executor,
        max_in_flight: int = MAX_IN_FLIGHT,
        carrier: str = "",
    ) -> None:
        self.p = plugin
        self.carrier = carrier
        self._send = send
        self._calls_pool = calls
        self._stages_pool = stages
        self._max = max_in_flight
        self._lock = threading.Lock()
        self._calls: Dict[int, Context] = {}
        self._ended = False

    def send(self, m: pb2.PluginMessage) -> None:
        """Send one message, unless the stream has ended."""
        with self._lock:
            if self._ended:
                return
        self._send(m)

    def fail(self, cid: int, stage: int, f: Failure) -> None:
        """Answer stage ``stage`` of call ``cid`` with a failure, the last message."""
        self.send(pb2.PluginMessage(id=cid, stage=stage, failure=f.pb(), last=True))

    def close(self) -> None:
        """The stream ended: stop sending, cancel every call."""
        with self._lock:
            self._ended = True
            calls = list(self._calls.values())
        for c in calls:
            c.cancel("cancelled")

    def receive(self, m: pb2.HostMessage) -> None:
        """Take one message from the host: start a call, or cancel one."""
        kind = m.WhichOneof("kind")
        if kind == "call":
            self._start(m.call)
        elif kind == "cancel":
            with self._lock:
                ctx = self._calls.get(m.cancel.id)
            if ctx is not None:
                ctx._host_cancelled = True
                ctx.cancel("cancelled")

    def in_flight(self) -> int:
        """How many calls are running."""
        with self._lock:
            return len(self._calls)

    def _start(self, call: pb2.HookCall) -> None:
        cid = call.id
        if not call.stages:
            self.fail(cid, 0, Failure(BAD_REQUEST, "a hook call with no stages"))
            return
        with self._lock:
            if cid in self._calls:
                dup = True
            else:
                dup = False
                full = len(self._calls) >= self._max
                if not full:
                    ctx = Context("call")
                    ctx.carrier = self.carrier
                    self._calls[cid] = ctx
                    # The call counts in flight until run() and every stage
                    # handler it started have returned, as the Go server's
                    # stageHandlers wait: a handler outliving its stage still
                    # holds a thread.
                    holds = [1]
        if dup:
            self.fail(cid, 0, Failure(BAD_REQUEST, "call id %d is already in flight" % cid))
            return
        if full:
            self.fail(
                cid,
                0,
                Failure(
                    ERROR,
                    "the plugin is already running %d hook calls; it answers no more "
                    "until some finish" % self._max,
                ),
            )
            return

        def hold() -> None:
            with self._lock:
                holds[0] += 1

        def release() -> None:
            with self._lock:
                holds[0] -= 1
                if holds[0] == 0:
                    self._calls.pop(cid, None)

        def run() -> None:
            try:
                stages = list(call.stages)
                if call.payloads or (
                    len(stages) > 1 and all(st.hook in _OBSERVERS for st in stages)
                ):
                    held = _Held(self._stages_pool, hold, release)
                    self._observer_batch(cid, ctx, stages, list(call.payloads), call.payload, held)
                elif len(stages) == 1:
                    self._one(cid, ctx, stages[0], call.payload)
                elif any(st.hook in MODEL_HOOKS for st in stages):
                    held = _Held(self._stages_pool, hold, release)
                    self._model_stage(cid, ctx, stages, call.payload, held)
                else:
                    held = _Held(self._stages_pool, hold, release)
                    self._stretch(cid, ctx, stages, call.payload, held)
            except BaseException as exc:  # noqa: B036 - one bad call never takes the plugin down
                _log.debug(
                    "recovered a failure answering a call",
                    extra={"hookhost": {"error": repr(exc), "traceback": traceback.format_exc()}},
                )
                if not ctx._host_cancelled:
                    self.fail(cid, 0, Failure(PANIC, "panic answering a call: %r" % exc))
            finally:
                release()

        try:
            self._calls_pool.submit(run)
        except RuntimeError:  # the pool is shut down: the plugin is stopping
            with self._lock:
                self._calls.pop(cid, None)

    def _one(self, cid: int, call_ctx: Context, stage: pb2.Stage, payload: bytes) -> None:
        row = convert.row_of(stage.hook)
        if row is None:
            self.fail(
                cid, 0, Failure(UNKNOWN_HOOK, "the plugin does not know hook %r" % stage.hook)
            )
            return
        timeout = stage.timeout_ns / 1e9 if stage.timeout_ns > 0 else None
        ctx = Context(row.name, timeout, parent=call_ctx)
        try:
            answer: Optional[bytes] = self.p.call_wire(row, payload, ctx)
            failure = None
        except Failure as f:
            answer, failure = None, f
        if call_ctx._host_cancelled:
            return  # no one waits for it
        if failure is not None:
            self.fail(cid, 0, failure)
        else:
            self.send(pb2.PluginMessage(id=cid, stage=0, answer=answer, last=True))

    def _stretch(
        self,
        cid: int,
        call_ctx: Context,
        stages: List[pb2.Stage],
        payload: bytes,
        pool: Optional[concurrent.futures.Executor] = None,
    ) -> None:
        rows = []
        for i, st in enumerate(stages):
            row = convert.row_of(st.hook)
            if row is None:
                self.fail(
                    cid,
                    0,
                    Failure(
                        UNKNOWN_HOOK,
                        "the plugin does not know hook %r (stage %d of the call)" % (st.hook, i),
                    ),
                )
                return
            rows.append(row)
        try:
            call = convert.tool_call_request_from(pb.ToolCallRequest.FromString(payload))
        except Exception as exc:
            self.fail(cid, 0, Failure(BAD_REQUEST, "undecodable stretch request: %s" % exc))
            return

        state = {"next": 0, "over": False}

        def emit(answer: Any, failure: Optional[Failure]) -> None:
            if state["over"] or state["next"] >= len(rows):
                return
            i = state["next"]
            row = rows[i]
            state["next"] = i + 1
            data = b""
            if failure is None:
                try:
                    data = encode_answer(row, answer)
                except Failure as f:
                    failure = f
            stops = (
                row.name == "pre_tool_call"
                and answer is not None
                and (
                    getattr(answer, "block", None) is not None
                    or getattr(answer, "ask", None) is not None
                )
            ) or (row.name == "pre_tool_call_can_provide_result" and answer is None)
            state["over"] = failure is not None or i == len(rows) - 1 or stops
            if call_ctx._host_cancelled:
                return
            if failure is not None:
                self.send(pb2.PluginMessage(id=cid, stage=i, failure=failure.pb(), last=True))
            else:
                self.send(pb2.PluginMessage(id=cid, stage=i, answer=data, last=state["over"]))

        timeouts = [st.timeout_ns / 1e9 for st in stages]
        self._run_guarded(
            cid,
            call_ctx,
            state,
            "stretch",
            lambda: run_stretch(
                self.p,
                call_ctx,
                call,
                [r.name for r in rows],
                timeouts,
                emit,
                pool or self._stages_pool,
            ),
        )

    def _run_guarded(
        self,
        cid: int,
        call_ctx: Context,
        state: Dict[str, Any],
        what: str,
        run: Callable[[], None],
    ) -> None:
        """Runs a multi-stage call's runner so that one bad call never takes
        the plugin down, as the Go server does: a runner that raises fails
        the stage it was at as a panic, and one that returns before its last
        stage fails the next one."""
        try:
            run()
        except BaseException as exc:  # noqa: B036 - one bad call never takes the plugin down
            _log.debug(
                "recovered a failure answering a %s" % what,
                extra={"hookhost": {"error": repr(exc), "traceback": traceback.format_exc()}},
            )
            if not state["over"] and not call_ctx._host_cancelled:
                state["over"] = True
                self.fail(
                    cid, state["next"], Failure(PANIC, "panic answering a %s: %r" % (what, exc))
                )
            return
        if not state["over"] and not call_ctx._host_cancelled:
            state["over"] = True
            self.fail(
                cid,
                state["next"],
                Failure(ERROR, "the plugin ended the %s before stage %d" % (what, state["next"])),
            )

    def _model_stage(
        self,
        cid: int,
        call_ctx: Context,
        stages: List[pb2.Stage],
        payload: bytes,
        pool: concurrent.futures.Executor,
    ) -> None:
        """A model stage: consecutive model-side hooks of one model call,
        answered stage by stage (see run_model_stage)."""
        hooks = [st.hook for st in stages]
        for i, h in enumerate(hooks):
            if convert.row_of(h) is None:
                self.fail(
                    cid,
                    0,
                    Failure(
                        UNKNOWN_HOOK,
                        "the plugin does not know hook %r (stage %d of the call)" % (h, i),
                    ),
                )
                return
        if not legal_model_stage(hooks):
            self.fail(
                cid,
                0,
                Failure(
                    BAD_REQUEST,
                    "not a legal model stage: stages [%s] (want two or more of %s in this "
                    "order, or %s)"
                    % (", ".join(hooks), ", ".join(_PRE_CALL), ", ".join(_POST_CALL)),
                ),
            )
            return
        try:
            ms = pb2.ModelStage.FromString(payload)
        except Exception as exc:
            self.fail(cid, 0, Failure(BAD_REQUEST, "undecodable model stage: %s" % exc))
            return
        state = {"next": 0, "over": False}

        def emit(answer: Optional[bytes], failure: Optional[Failure], stop: bool) -> None:
            if state["over"] or state["next"] >= len(hooks):
                return
            i = state["next"]
            state["next"] = i + 1
            state["over"] = failure is not None or stop or i == len(hooks) - 1
            if call_ctx._host_cancelled:
                return
            if failure is not None:
                self.send(pb2.PluginMessage(id=cid, stage=i, failure=failure.pb(), last=True))
            else:
                self.send(pb2.PluginMessage(id=cid, stage=i, answer=answer, last=state["over"]))

        self._run_guarded(
            cid,
            call_ctx,
            state,
            "model stage",
            lambda: run_model_stage(
                self.p, call_ctx, ms, hooks, [_seconds(st) for st in stages], emit, pool
            ),
        )

    def _observer_batch(
        self,
        cid: int,
        call_ctx: Context,
        stages: List[pb2.Stage],
        payloads: List[bytes],
        payload: bytes,
        pool: concurrent.futures.Executor,
    ) -> None:
        """An observer batch: stage i's event is payloads[i]. Every stage is
        answered, in order, a failed one too (an event of a hook that is no
        observer this SDK knows: UNKNOWN_HOOK); the final answer is last. A
        Cancel ends it with nothing more sent."""
        hooks = [st.hook for st in stages]
        if not hooks or len(payloads) != len(hooks) or payload:
            self.fail(
                cid,
                0,
                Failure(
                    BAD_REQUEST,
                    "a malformed observer batch: %d stages, %d payloads, payload set: %s"
                    % (len(hooks), len(payloads), "true" if payload else "false"),
                ),
            )
            return
        answered = 0
        try:
            for i, (st, data) in enumerate(zip(stages, payloads)):
                if call_ctx.cancelled:
                    return  # the host cancelled it, or the stream ended: no one reads more
                failure = self._batch_event(call_ctx, st, data, pool)
                if call_ctx._host_cancelled:
                    return
                last = i == len(hooks) - 1
                if failure is not None:
                    m = pb2.PluginMessage(id=cid, stage=i, failure=failure.pb(), last=last)
                else:
                    m = pb2.PluginMessage(id=cid, stage=i, answer=b"", last=last)
                answered = i + 1
                self.send(m)
        except BaseException as exc:  # noqa: B036 - one bad call never takes the plugin down
            _log.debug(
                "recovered a failure answering an observer batch",
                extra={"hookhost": {"error": repr(exc), "traceback": traceback.format_exc()}},
            )
            if answered < len(hooks) and not call_ctx._host_cancelled:
                self.fail(
                    cid, answered, Failure(PANIC, "panic answering an observer batch: %r" % exc)
                )

    def _batch_event(
        self,
        call_ctx: Context,
        st: pb2.Stage,
        data: bytes,
        pool: concurrent.futures.Executor,
    ) -> Optional[Failure]:
        """One event of an observer batch, under its own deadline: None
        when its handler returned in time."""
        row = convert.row_of(st.hook)
        if row is None or row.name not in _OBSERVERS:
            return Failure(UNKNOWN_HOOK, "the plugin does not know observer hook %r" % st.hook)
        try:
            event = row.payload_from(row.request.FromString(data))
        except Exception as exc:
            return Failure(BAD_REQUEST, "undecodable %s request: %s" % (row.name, exc))
        answer, failure = _stage(self.p, call_ctx, row.name, _seconds(st), event, pool)
        if failure is None:
            try:
                encode_answer(row, answer)
            except Failure as f:
                return f
        return failure


def _seconds(st: pb2.Stage) -> Optional[float]:
    """A stage's deadline in seconds; None for none (the host sent 0)."""
    return st.timeout_ns / 1e9 if st.timeout_ns > 0 else None


# Model stages: the hooks of each side of a model call, in firing order.
# A model stage is two or more hooks of one side, in this order.
_PRE_CALL = (
    "pre_tool_list_finalized",
    "pre_api_request_mutable",
    "pre_llm_call_can_provide_response",
)
_POST_CALL = ("post_llm_call_can_reissue", "transform_llm_output")
MODEL_HOOKS = frozenset(_PRE_CALL + _POST_CALL)
_OBSERVERS = _catalogue.OBSERVERS
# RequestPatch's fields that are plain values (messages and tools are lists).
_PATCH_SCALARS = ("model", "system", "max_tokens", "temperature")


def legal_model_stage(hooks: Sequence[str]) -> bool:
    """Whether ``hooks`` is a model stage the host may send."""
    if len(hooks) < 2:
        return False
    for side in (_PRE_CALL, _POST_CALL):
        if all(h in side for h in hooks):
            at = [side.index(h) for h in hooks]
            return all(a < b for a, b in zip(at, at[1:]))
    return False


def run_model_stage(
    p: Adapted,
    call_ctx: Context,
    ms: pb2.ModelStage,
    hooks: List[str],
    timeouts: List[Optional[float]],
    emit: Callable[[Optional[bytes], Optional[Failure], bool], None],
    pool: concurrent.futures.Executor,
) -> None:
    """Answer a model stage: each hook in order under its own deadline
    counted from its start, each answer emitted (with whether it ends the
    stage) as soon as known. Each stage's request is built from the
    ModelStage with the plugin's own earlier answers applied, read back
    from the bytes the host gets: a tool list it replaced becomes the
    request's tools, and its patch's fields replace the request's, but for
    those in fields_set (a plugin above set them; the host ignores this
    one's writes). It stops after a failure, a response provided, a
    reissue, the last stage, or the call's end (a stage not started then
    is emitted as a failure)."""
    call = ms.call
    req = pb.ModelRequest()
    req.CopyFrom(call.request)
    fields_set = set(ms.fields_set)
    for hook, timeout in zip(hooks, timeouts):
        r = call_ctx.reason
        if r is not None:
            kind = DEADLINE_EXCEEDED if r == "deadline exceeded" else CANCELLED
            emit(None, Failure(kind, "%s not started: context canceled" % hook), True)
            return
        row = convert.row_of(hook)
        assert row is not None
        if hook == "pre_tool_list_finalized":
            msg: Any = pb.ToolListRequest(
                session_id=call.session_id, iteration=call.iteration, tools=req.tools
            )
        elif hook == "pre_api_request_mutable":
            msg = pb.ApiRequest(session_id=call.session_id, iteration=call.iteration, request=req)
        elif hook == "pre_llm_call_can_provide_response":
            msg = pb.LlmRequest(
                session_id=call.session_id,
                iteration=call.iteration,
                route=call.route,
                request=req,
            )
        elif hook == "post_llm_call_can_reissue":
            msg = call
        else:  # transform_llm_output: the whole answer, never a window
            msg = pb.LlmOutput(session_id=call.session_id, text=ms.text)
        answer, f = _stage(p, call_ctx, hook, timeout, row.payload_from(msg), pool)
        if f is None:
            try:
                data = encode_answer(row, answer)
            except Failure as e:
                f = e
        if f is not None:
            emit(None, f, True)
            return
        resp = row.response.FromString(data)
        stop = (hook == "pre_llm_call_can_provide_response" and resp.HasField("response")) or (
            hook == "post_llm_call_can_reissue" and resp.HasField("reissue")
        )
        emit(data, None, stop)
        if stop:
            return
        if hook == "pre_tool_list_finalized" and resp.HasField("override"):
            del req.tools[:]
            req.tools.extend(resp.override.tools)
        elif hook == "pre_api_request_mutable" and resp.HasField("patch"):
            patch = resp.patch
            for name in _PATCH_SCALARS:
                if patch.HasField(name) and name not in fields_set:
                    setattr(req, name, getattr(patch, name))
            if patch.HasField("messages") and "messages" not in fields_set:
                del req.messages[:]
                req.messages.extend(patch.messages.messages)
            if patch.HasField("tools") and "tools" not in fields_set:
                del req.tools[:]
                req.tools.extend(patch.tools.tools)


class _Held(concurrent.futures.Executor):
    """A stage pool that tells its call when a handler is queued and when
    it has returned, so that the call counts in flight until then."""

    def __init__(
        self,
        pool: concurrent.futures.Executor,
        hold: Callable[[], None],
        release: Callable[[], None],
    ) -> None:
        self._pool = pool
        self._hold = hold
        self._release = release

    def submit(  # type: ignore[override]
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        self._hold()

        def held() -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                self._release()

        try:
            return self._pool.submit(held)
        except BaseException:
            self._release()
            raise


def run_stretch(
    p: Adapted,
    call_ctx: Context,
    call: t.ToolCallRequest,
    hooks: List[str],
    timeouts: List[float],
    emit: Callable[[Any, Optional[Failure]], None],
    pool: concurrent.futures.Executor,
) -> None:
    """Answer a stretch with exactly the rules of the host's RunStretch:
    stages in order, each under its own deadline counted from its start,
    each answer emitted as soon as known; stop after a failure, a block, an
    ask, a decision that breaks the rules, a provide that gave nothing, or the
    call's end (a stage not started then is emitted as a failure). The
    transform stage sees the arguments after the modify, the provided result
    as JSON, status provided_by:<name>, and the time taken so far."""
    start = time.monotonic()
    if tuple(hooks) not in _LEGAL:
        emit(None, Failure(ERROR, "not a legal stretch: stages [%s]" % ", ".join(hooks)))
        return
    for h, to in zip(hooks, timeouts):
        if to <= 0:
            emit(
                None,
                Failure(
                    ERROR,
                    "not a legal stretch: stage %s has timeout %gs, want a positive one" % (h, to),
                ),
            )
            return
    provided: Optional[t.ToolResult] = None
    for hook, timeout in zip(hooks, timeouts):
        if call_ctx.cancelled:
            emit(None, Failure(CANCELLED, "%s not started: context canceled" % hook))
            return
        if hook == "pre_tool_call":
            d, f = _stage(p, call_ctx, hook, timeout, call, pool)
            if f is not None:
                emit(None, f)
                return
            emit(d, None)
            if d is None:
                continue
            if (
                not isinstance(d, t.PreToolCallDecision)
                or d.block is not None
                or d.ask is not None
                or _decision_breaks_rules(d)
            ):
                return
            if d.modified_args is not None:
                call = t.ToolCallRequest(
                    call.session_id, call.call_id, call.name, _args_text(d.modified_args)
                )
        elif hook == "pre_tool_call_can_provide_result":
            r, f = _stage(p, call_ctx, hook, timeout, call, pool)
            if f is not None:
                emit(None, f)
                return
            emit(r, None)
            if r is None or not isinstance(r, t.ToolResult):
                return
            provided = r
        else:
            assert provided is not None
            ev = t.ToolCallOutcome(
                session_id=call.session_id,
                call_id=call.call_id,
                name=call.name,
                arguments=call.arguments,
                result=provided.as_json(),
                status="provided_by:" + p.name,
                duration_ns=int((time.monotonic() - start) * 1e9),
                origin=call.origin,
            )
            r, f = _stage(p, call_ctx, hook, timeout, ev, pool)
            emit(r, f)


def _stage(
    p: Adapted,
    call_ctx: Context,
    hook: str,
    timeout: Optional[float],
    payload: Any,
    pool: concurrent.futures.Executor,
) -> Tuple[Any, Optional[Failure]]:
    """One stage on the pool, waited for no longer than its deadline: a
    handler still running then is left to finish on its own."""
    row = convert.row_of(hook)
    assert row is not None
    ctx = Context(hook, timeout, parent=call_ctx)
    done = threading.Event()
    call_ctx.on_cancel(done.set)

    def start() -> Any:
        # Queued behind other stages, it may get a thread only after the
        # host gave up on it (and ran the tool natively): never start then.
        r = ctx.reason
        if r is not None:
            raise Failure(
                DEADLINE_EXCEEDED if r == "deadline exceeded" else CANCELLED,
                "not started: %s" % r,
            )
        return p.call(row, payload, ctx)

    try:
        fut = pool.submit(start)
    except RuntimeError:
        return None, Failure(CANCELLED, "%s: the plugin is stopping" % hook)
    fut.add_done_callback(lambda _: done.set())
    done.wait(ctx.remaining())
    late = ctx.reason
    if fut.done() and late is None:
        try:
            return fut.result(), None
        except Failure as f:
            return None, Failure(f.kind, "%s: %s" % (hook, f.message))
    # Late, even if it raced the deadline and won: the host has been told,
    # or will be, that the stage timed out.
    if late == "deadline exceeded" or late is None:
        return None, Failure(DEADLINE_EXCEEDED, "%s: context deadline exceeded" % hook)
    return None, Failure(CANCELLED, "%s: context canceled" % hook)
