#!/usr/bin/python3
"""conform: the conformance plugin, written with hookhost_plugin.

It behaves exactly as internal/conformance/doc.go specifies, so that the
conformance harness can drive it under the real host over both protocol
versions. The interpreter is absolute because the host passes no PATH.
"""

import os
import sys
import threading
from dataclasses import dataclass

# Inside the repository the SDK may not be installed: import it from
# plugins/python/src, found from this file, when it is not. A plugin of
# one's own pip-installs hookhost-plugin instead. Writing no bytecode keeps
# __pycache__ out of the source tree.
sys.dont_write_bytecode = True
try:
    import hookhost_plugin as hp
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src"))
    import hookhost_plugin as hp
# The catalogue as data (generated from hooks/catalogue.go), for the hooks
# the spec does not name.
from hookhost_plugin import _catalogue  # noqa: E402

@dataclass
class Config:
    """[plugins.entries.conform.config]"""

    tag: str = "conform"


_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def upper(s: str) -> str:
    """Upper case, ASCII letters only, as the spec says."""
    return s.translate(_ASCII_UPPER)


def text_arg(arguments: str):
    """The arguments' "text" string, or None."""
    try:
        args = hp.ToolCallRequest(arguments=arguments).args
    except ValueError:
        return None, None
    if not isinstance(args, dict) or not isinstance(args.get("text"), str):
        return args, None
    return args, args["text"]


class Conform(hp.Plugin):
    """Every hook of the catalogue, answering as the spec says."""

    name, version = "conform", "1.0.0"
    hook_matchers = {"pre_tool_call_can_provide_result": ["conform__*"]}
    tools = [
        hp.ToolSpec(
            "conform__echo",
            "Echo a text back with the plugin's tag.",
            {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        ),
        hp.ToolSpec(
            "conform__sleep",
            "Sleep some milliseconds, or until cancelled.",
            {"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]},
        ),
        hp.ToolSpec("conform__seen", "The observer lines recorded so far.", {"type": "object"}),
        hp.ToolSpec("conform__raise", "Fail the call.", {"type": "object"}),
    ]

    def __init__(self) -> None:
        self.tag = "conform"
        self.lines = []
        self.lock = threading.Lock()
        # The carriers hook calls came by so far: "lane" or "grpc".
        self.carriers = set()

    config_type = Config

    def configure(self, config: Config):
        tag = config.tag
        self.tag = tag
        hp.logger().warn("conform configured", tag=tag)

    def arrived(self, ctx) -> None:
        """Log, the first time a hook call comes by each carrier, which one
        it came by (ctx.carrier: the lane, or gRPC); the conformance check
        asserts that over protocol 2 the calls came on the lane."""
        with self.lock:
            if ctx.carrier in self.carriers:
                return
            self.carriers.add(ctx.carrier)
        hp.logger().info("conform hook calls arrive", carrier=ctx.carrier)

    def record(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)

    def on_session_start(self, ev):
        self.record("on_session_start %s" % ev.session_id)

    def on_session_end(self, ev):
        self.record("on_session_end %s %s" % (ev.session_id, ev.reason))

    def post_llm_call(self, ev):
        self.record("post_llm_call %s %s" % (ev.session_id, ev.model))

    def post_tool_call(self, ev):
        line = "post_tool_call %s %s" % (ev.name, ev.status)
        self.record(line + " " + ev.origin if ev.origin else line)

    def pre_tool_list_finalized(self, req):
        if any(t.name.startswith("hidden_") for t in req.tools):
            return hp.ToolListOverride([t for t in req.tools if not t.name.startswith("hidden_")])
        return None

    def pre_api_request_mutable(self, req):
        if req.request.model == "patch-me":
            return hp.RequestPatch(system="patched by %s" % self.tag, temperature=0.5)
        return None

    def pre_llm_call_can_provide_response(self, req):
        if req.request.model != "provide-me":
            return None
        return hp.ModelResponse(
            message=hp.Message(
                role="assistant",
                content="provided by %s" % self.tag,
                tool_calls=[hp.ToolCall(id="conform_call", name="conform__echo", arguments='{"text":"hi"}')],
            ),
            usage=hp.Usage(input_tokens=3, output_tokens=5),
        )

    def post_llm_call_can_reissue(self, call):
        if "REISSUE" in call.response.message.content:
            msgs = list(call.request.messages) + [hp.Message(role="user", content="again")]
            return hp.Reissue(patch=hp.RequestPatch(messages=msgs), reason="conform asked again")
        return None

    def transform_llm_output(self, out):
        return out.text + " -- " + self.tag if out.text else None

    def pre_tool_call(self, call):
        args, text = text_arg(call.arguments)
        if text is None:
            return None
        if text == "forbidden":
            return hp.block("conform blocks forbidden text")
        if text.startswith("ask:"):
            return hp.ask(text[len("ask:"):])
        if text.startswith("shout:"):
            rest = text[len("shout:"):]
            return hp.modify(dict(args, text=upper(rest)))
        return None

    def pre_tool_call_can_provide_result(self, call, ctx):
        if call.name == "conform__echo":
            _, text = text_arg(call.arguments)
            if text == "fail":
                return hp.ToolResult("conform refuses to echo fail", is_error=True)
            echo = {"echo": text, "tag": self.tag}
            if call.origin:
                echo["origin"] = call.origin
            return hp.ToolResult.json(echo)
        if call.name == "conform__seen":
            with self.lock:
                return hp.ToolResult.json(list(self.lines))
        if call.name == "conform__sleep":
            ms = call.args.get("ms", 0) if isinstance(call.args, dict) else 0
            ctx.wait(max(0, ms) / 1000.0)
            return hp.ToolResult("slept")
        if call.name == "conform__raise":
            raise hp.HookError("conform__raise fails, as asked")
        return None

    def transform_tool_result(self, ev):
        if ev.name == "conform__echo" and ev.status.startswith("provided_by:"):
            return hp.ToolResult(ev.result.content + " (transformed)", ev.result.is_error)
        if ev.name == "native_upper":
            return hp.ToolResult(upper(ev.result.content), ev.result.is_error)
        return None

    def on_user_message(self, m):
        if m.text == "forbidden":
            return hp.UserMessageDecision(block=hp.Block("conform blocks forbidden text"))
        if m.text.startswith("context:"):
            return hp.UserMessageDecision(
                additional_context=m.text[len("context:"):] + " -- " + self.tag
            )
        return None

    def post_tool_call_can_add_context(self, ev):
        if ev.name == "conform__echo" and ev.status.startswith("provided_by:"):
            return hp.AddedContext("echo checked by " + self.tag)
        return None


def _default(hook: str):
    """The spec's handler of a hook it does not name: an observer records
    "<hook> <session_id>", an answering hook gives no opinion."""
    if hook in _catalogue.OBSERVERS:

        def observe(self, ev):
            self.record("%s %s" % (hook, getattr(ev, "session_id", "")))

        return observe
    return lambda self, payload: None


# Every hook of the catalogue is served: those the class does not handle
# itself get the spec's default.
for _hook in _catalogue.HOOK_NAMES:
    if not hasattr(Conform, _hook):
        setattr(Conform, _hook, _default(_hook))


def _arriving(handler):
    """handler, noting first the carrier its call came by (Conform.arrived)."""
    takes_ctx = handler.__code__.co_argcount >= 3

    def handle(self, payload, ctx):
        self.arrived(ctx)
        return handler(self, payload, ctx) if takes_ctx else handler(self, payload)

    return handle


for _hook in _catalogue.HOOK_NAMES:
    setattr(Conform, _hook, _arriving(getattr(Conform, _hook)))


if __name__ == "__main__":
    hp.serve(Conform())
