"""Test a plugin in-process, with no host: :class:`Harness` calls its hooks
through the same code and the same encoding as under the host (payloads
are serialized to the wire's messages and back, answers too), over
protocol version 2's stream logic by default (stretches, model stages and
observer batches included), or version 1's.

Usable from unittest or pytest::

    from hookhost_plugin.testing import Harness

    class GuardTest(unittest.TestCase):
        def test_blocks_deletes(self):
            h = Harness(Guard(), config={"strict": True})
            d = h.pre_tool_call("delete_everything", {})
            self.assertIsNotNone(d.block)

A handler's failure raises :class:`CallFailed` (``kind`` is the failure
kind's name: "ERROR", "PANIC", "DEADLINE_EXCEEDED", ...). The typed
helpers apply the plugin's matchers as the host does: a hook the plugin
does not serve (or, per its ``unserved()``, does not serve as configured),
or a tool its matchers do not cover, answers None without calling it.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _catalogue, convert
from . import types as t
from ._testing_catalogue import SESSION_ID, HarnessHooks
from ._proto import plugin_pb2 as pb
from ._proto import pluginv2_pb2 as pb2
from .runtime import Adapted, Context, Failure, HookStream, path_match

__all__ = ["Harness", "CallFailed", "ConfigureFailed", "SESSION_ID"]

_TOOL_HOOKS = _catalogue.TOOL_HOOKS


class CallFailed(Exception):
    """A hook call failed: ``kind`` ("ERROR", "PANIC", "DEADLINE_EXCEEDED",
    "CANCELLED", "UNKNOWN_HOOK", "BAD_REQUEST") and ``message``, as the
    host would receive them; ``stage`` for a stretch."""

    def __init__(self, kind: str, message: str, stage: int = 0) -> None:
        super().__init__("%s: %s" % (kind, message))
        self.kind = kind
        self.message = message
        self.stage = stage


class ConfigureFailed(Exception):
    """The plugin refused its config; ``message`` is what the operator sees."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Harness(HarnessHooks):
    """One plugin, configured, ready to be called. ``protocol`` is 2 (the
    stream, with stretches) or 1 (one call per hook). The typed helpers,
    one per hook (``pre_tool_call``, ...), are HarnessHooks's, written from
    the hook catalogue."""

    def __init__(
        self,
        plugin: Any,
        config: Optional[Dict[str, Any]] = None,
        protocol: int = 2,
        timeout: float = 5.0,
    ) -> None:
        if protocol not in (1, 2):
            raise ValueError("protocol must be 1 or 2")
        self.plugin = plugin
        self.protocol = protocol
        self.timeout = timeout
        self._p = Adapted(plugin)
        self._p.validate()
        #: The manifest as the host reads it from Describe.
        self.manifest: pb.Manifest = pb.Manifest.FromString(self._p.manifest().SerializeToString())
        try:
            #: The hooks the plugin does not serve as configured (its
            #: unserved()), as the host reads them from Configure's answer:
            #: the typed helpers do not ask them.
            self.unserved: List[str] = self._p.configure_json(json.dumps(config or {}).encode())
        except Failure as f:
            raise ConfigureFailed(f.message) from None
        self._ids = itertools.count(1)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=16, thread_name_prefix="test-hook"
        )
        self._stages = concurrent.futures.ThreadPoolExecutor(
            max_workers=16, thread_name_prefix="test-stage"
        )
        self._lock = threading.Lock()
        self._waiting: Dict[int, "_Waiter"] = {}
        self._stream = HookStream(self._p, self._deliver, self._pool, self._stages)

    # --- what the host would see -----------------------------------------

    @property
    def hooks(self) -> List[str]:
        """The hooks in the manifest."""
        return list(self.manifest.hooks)

    @property
    def tools(self) -> List[t.ToolSpec]:
        """The tools in the manifest, with their schemas."""
        return [convert.tool_spec_from(s) for s in self.manifest.tools]

    def subscribed(self, hook: str, tool: str = "") -> bool:
        """Whether the host would ask the plugin ``hook`` (for ``tool``, for
        a tool hook), per-hook matchers applied: not for a hook it does not
        serve as configured."""
        if hook not in self.manifest.hooks or hook in self.unserved:
            return False
        if hook not in _TOOL_HOOKS:
            return True
        globs = list(self.manifest.matchers)
        for hm in self.manifest.hook_matchers:
            if hm.hook == hook:
                globs = list(hm.matchers)
        return not globs or any(path_match(g, tool) for g in globs)

    # --- raw calls -------------------------------------------------------

    def call(self, hook: str, payload: Any, timeout: Optional[float] = None) -> Any:
        """Call ``hook`` with a payload dataclass and return its answer
        (None for no opinion); raises CallFailed."""
        row = convert.row_of(hook)
        if row is None:
            raise ValueError("no hook is named %r" % hook)
        request = row.payload_to(payload).SerializeToString()
        timeout = self.timeout if timeout is None else timeout
        if self.protocol == 1:
            # As the host's gRPC deadline: a handler past it is a failure
            # however it ends, and the test does not wait for it.
            ctx = Context(hook, timeout)
            fut = self._pool.submit(self._p.call_wire, row, request, ctx)
            try:
                data = fut.result(timeout)
            except concurrent.futures.TimeoutError:
                ctx.cancel("deadline exceeded")
                late = "%s: context deadline exceeded" % hook
                raise CallFailed("DEADLINE_EXCEEDED", late) from None
            except Failure as f:
                raise CallFailed(pb2.Failure.Kind.Name(f.kind), f.message) from None
            if ctx.reason == "deadline exceeded":
                raise CallFailed("DEADLINE_EXCEEDED", "%s: context deadline exceeded" % hook)
            return row.answer_from(row.response.FromString(data))
        msgs = self._exchange(
            pb2.HookCall(
                stages=[pb2.Stage(hook=hook, timeout_ns=int(timeout * 1e9))], payload=request
            ),
            timeout,
        )
        m = msgs[-1]
        if m.HasField("failure"):
            raise CallFailed(pb2.Failure.Kind.Name(m.failure.kind), m.failure.message)
        return row.answer_from(row.response.FromString(m.answer))

    def stretch(
        self,
        call: t.ToolCallRequest,
        hooks: Sequence[str],
        timeouts: Optional[Sequence[float]] = None,
    ) -> List[Union[Any, CallFailed]]:
        """Ask a stretch (protocol 2 only), as the host does when one plugin
        guards, provides and transforms a tool: one answer per stage the
        plugin answered, each the stage's answer (None for no opinion) or a
        CallFailed."""
        if self.protocol != 2:
            raise ValueError("stretches are protocol version 2's")
        return self._staged_call(
            hooks, timeouts, payload=convert.tool_call_request_to(call).SerializeToString()
        )

    def model_stage(
        self,
        call: t.LLMCall,
        hooks: Sequence[str],
        fields_set: Sequence[str] = (),
        text: str = "",
        timeouts: Optional[Sequence[float]] = None,
    ) -> List[Union[Any, CallFailed]]:
        """Ask a model stage (protocol 2 only), as the host does when one
        plugin answers several model-side hooks of one model call: the
        pre-call hooks (pre_tool_list_finalized, pre_api_request_mutable,
        pre_llm_call_can_provide_response) with ``call.request`` as the
        plugins above left it and ``fields_set`` the patch fields they set,
        or post_llm_call_can_reissue and transform_llm_output with
        ``call.response`` and ``text``, the answer's text as left above.
        Returns one answer per stage the plugin answered, each the stage's
        answer (None for no opinion) or a CallFailed."""
        if self.protocol != 2:
            raise ValueError("model stages are protocol version 2's")
        row = convert.row_of("post_llm_call_can_reissue")
        assert row is not None
        payload = pb2.ModelStage(
            call=row.payload_to(call), fields_set=list(fields_set), text=text
        ).SerializeToString()
        return self._staged_call(hooks, timeouts, payload=payload)

    def observer_batch(
        self, events: Sequence[Tuple[str, Any]], timeouts: Optional[Sequence[float]] = None
    ) -> List[Optional[CallFailed]]:
        """Send observer events in one call (protocol 2 only), as the host
        does when several are queued for the plugin: ``events`` are (hook,
        payload) pairs, in order. Returns one entry per event the plugin
        answered: None when handled, else a CallFailed."""
        if self.protocol != 2:
            raise ValueError("observer batches are protocol version 2's")
        payloads = []
        for hook, ev in events:
            row = convert.row_of(hook)
            if row is None:
                raise ValueError("no hook is named %r" % hook)
            payloads.append(row.payload_to(ev).SerializeToString())
        return self._staged_call([h for h, _ in events], timeouts, payloads=payloads)

    def _staged_call(
        self,
        hooks: Sequence[str],
        timeouts: Optional[Sequence[float]],
        payload: bytes = b"",
        payloads: Sequence[bytes] = (),
    ) -> List[Union[Any, CallFailed]]:
        timeouts = list(timeouts) if timeouts is not None else [self.timeout] * len(hooks)
        msgs = self._exchange(
            pb2.HookCall(
                stages=[
                    pb2.Stage(hook=h, timeout_ns=int(to * 1e9)) for h, to in zip(hooks, timeouts)
                ],
                payload=payload,
                payloads=list(payloads),
            ),
            sum(timeouts),
        )
        out: List[Union[Any, CallFailed]] = []
        for m in msgs:
            if m.HasField("failure"):
                out.append(
                    CallFailed(pb2.Failure.Kind.Name(m.failure.kind), m.failure.message, m.stage)
                )
                continue
            row = convert.row_of(hooks[m.stage])
            assert row is not None
            out.append(row.answer_from(row.response.FromString(m.answer)))
        return out

    def cancel_after(self, seconds: float, hook: str, payload: Any) -> Any:
        """Call ``hook`` and cancel the call after ``seconds``, as the host
        does when it stops waiting. Returns True when the plugin sent
        nothing for the cancelled call (what the protocol asks), else the
        message it sent."""
        row = convert.row_of(hook)
        assert row is not None
        cid = next(self._ids)
        w = _Waiter()
        with self._lock:
            self._waiting[cid] = w
        self._stream.receive(
            pb2.HostMessage(
                call=pb2.HookCall(
                    id=cid,
                    stages=[pb2.Stage(hook=hook, timeout_ns=int(self.timeout * 1e9))],
                    payload=row.payload_to(payload).SerializeToString(),
                )
            )
        )
        if w.done.wait(seconds):
            return w.msgs[-1]
        self._stream.receive(pb2.HostMessage(cancel=pb2.Cancel(id=cid)))
        # Give the handler time to notice and return.
        for _ in range(100):
            if self._stream.in_flight() == 0:
                break
            threading.Event().wait(0.02)
        with self._lock:
            self._waiting.pop(cid, None)
        return True if not w.msgs else w.msgs[-1]

    def _exchange(self, call: pb2.HookCall, timeout: float) -> List[pb2.PluginMessage]:
        cid = next(self._ids)
        call.id = cid
        w = _Waiter()
        with self._lock:
            self._waiting[cid] = w
        self._stream.receive(pb2.HostMessage(call=call))
        # A handler that ignores its deadline still gets an answer out in
        # the end; the host would have given up: so does the harness.
        if not w.done.wait(timeout + 5.0):
            self._stream.receive(pb2.HostMessage(cancel=pb2.Cancel(id=cid)))
            raise CallFailed(
                "DEADLINE_EXCEEDED",
                "the plugin did not answer within its deadline (the host "
                "would have given up and cancelled the call)",
            )
        with self._lock:
            self._waiting.pop(cid, None)
        return w.msgs

    def _deliver(self, m: pb2.PluginMessage) -> None:
        with self._lock:
            w = self._waiting.get(m.id)
        if w is None:
            return  # the call was given up: the host drops it too
        w.msgs.append(m)
        if m.last:
            w.done.set()

    def __enter__(self) -> "Harness":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop the harness's threads (handlers still running finish)."""
        self._stream.close()
        self._pool.shutdown(wait=False)
        self._stages.shutdown(wait=False)

    # --- the typed helpers' call (matchers applied) ---------------------

    def _ask(self, hook: str, payload: Any, tool: str = "") -> Any:
        if not self.subscribed(hook, tool):
            return None
        return self.call(hook, payload)


class _Waiter:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.msgs: List[pb2.PluginMessage] = []
