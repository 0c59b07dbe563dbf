"""Hook calls through the harness, over both protocol versions: answers,
no opinion, failures and their kinds, deadlines, cancellation, and
stretches with the host's RunStretch rules."""

import concurrent.futures
import json
import threading
import time
import unittest

import hookhost_plugin as hp
from hookhost_plugin._proto import plugin_pb2 as pb
from hookhost_plugin._proto import pluginv2_pb2 as pb2
from hookhost_plugin.runtime import Adapted, HookStream
from hookhost_plugin.testing import CallFailed, ConfigureFailed, Harness

from dataclasses import dataclass


@dataclass
class EchoArgs:
    text: str


class Sample(hp.Plugin):
    """Answers by the text argument, so that each test picks a behaviour."""

    name, version = "sample", "2.0.0"
    matchers = ["sample__*", "native"]

    def __init__(self):
        self.started = threading.Event()
        self.release = threading.Event()
        self.cancelled_seen = threading.Event()
        self.config = None
        self.seen = []

    def configure(self, config):
        if "bad" in config:
            raise ValueError("key bad: not allowed here")
        self.config = config

    def pre_tool_call(self, call, ctx):
        text = (call.args or {}).get("text", "")
        if text == "block":
            return hp.block("blocked by sample")
        if text == "modify":
            return hp.modify({"text": "MODIFIED"})
        if text == "ask":
            return hp.ask("a person decides")
        if text == "both":
            return hp.PreToolCallDecision(block=hp.Block("x"), modified_args={"text": "y"})
        if text == "not-object":
            return hp.modify([1])
        if text == "raise":
            raise hp.HookError("pre refuses")
        if text == "keyerror":
            return {}["k"]
        if text == "exit":
            raise SystemExit(3)
        if text == "stray-cancelled":
            raise hp.Cancelled("not really")
        if text == "wrong-type":
            return "a string"
        if text == "sleep":
            self.started.set()
            if ctx.wait(10):
                self.cancelled_seen.set()
                ctx.check()
            return None
        if text == "ignore-deadline":
            self.started.set()
            self.release.wait(10)
            return None
        return None

    @hp.tool("sample__echo", "Echo")
    def echo(self, args: EchoArgs):
        if args.text == "nothing":
            return hp.ToolResult("plain text")
        return {"echo": args.text}

    def pre_tool_call_can_provide_result(self, call):
        return None  # only its typed tool

    def transform_tool_result(self, ev):
        self.seen.append(ev)
        return hp.ToolResult(ev.result.content + "!", ev.result.is_error)

    def on_session_start(self, ev):
        self.seen.append(ev)

    def transform_llm_output(self, out):
        return out.text + " ok"


ALL3 = ["pre_tool_call", "pre_tool_call_can_provide_result", "transform_tool_result"]


def call(text, name="sample__echo"):
    return hp.ToolCallRequest("s", "c", name, json.dumps({"text": text}))


class ManifestTest(unittest.TestCase):
    def test_manifest(self):
        h = Harness(Sample())
        self.assertEqual(
            h.hooks,
            [
                "on_session_start",
                "transform_llm_output",
                "pre_tool_call",
                "pre_tool_call_can_provide_result",
                "transform_tool_result",
            ],
        )
        self.assertEqual(list(h.manifest.matchers), ["sample__*", "native"])
        # The own provider covers the matchers, which already cover the tool.
        self.assertEqual(
            [(m.hook, list(m.matchers)) for m in h.manifest.hook_matchers],
            [("pre_tool_call_can_provide_result", ["sample__*", "native"])],
        )
        self.assertEqual([t.name for t in h.tools], ["sample__echo"])
        self.assertFalse(h.subscribed("pre_tool_call", "other"))
        self.assertFalse(h.subscribed("post_tool_call", "sample__echo"))

    def test_typed_tools_alone_get_exact_matchers(self):
        class T(hp.Plugin):
            name = "t"

            @hp.tool("t__a", "a")
            def a(self, args: EchoArgs):
                return 1

        h = Harness(T())
        self.assertEqual(
            [(m.hook, list(m.matchers)) for m in h.manifest.hook_matchers],
            [("pre_tool_call_can_provide_result", ["t__a"])],
        )

    def test_invalid_plugins(self):
        class NoName(hp.Plugin):
            pass

        class BadTool(hp.Plugin):
            name = "b"
            tools = [hp.ToolSpec("bad name", "x")]

        class BadSchema(hp.Plugin):
            name = "b"
            tools = [hp.ToolSpec("b__x", "x", {"type": {1, 2}})]

        class TextSchema(hp.Plugin):
            name = "b"
            tools = [hp.ToolSpec("b__x", "x", '{"type":"object"}')]

        for p, want in [
            (NoName(), "no name"),
            (BadTool(), "must match"),
            (BadSchema(), "the manifest cannot be encoded"),
            (TextSchema(), "input_schema must be a dict"),
        ]:
            with self.assertRaises(ValueError) as cm:
                Harness(p)
            self.assertIn(want, str(cm.exception))

    def test_handler_signatures_checked_at_start(self):
        class NoArg(hp.Plugin):
            name = "n"

            def pre_tool_call(self):
                return None

        class ThreeArgs(hp.Plugin):
            name = "n"

            def on_session_start(self, ev, ctx, extra):
                return None

        for p in (NoArg(), ThreeArgs()):
            with self.assertRaises(ValueError) as cm:
                Harness(p)
            self.assertIn("must take the payload, and optionally the context", str(cm.exception))

    def test_misspelt_hook_is_warned_of(self):
        class Typo(hp.Plugin):
            name = "t"

            def pre_toolcall(self, call):
                return None

        with self.assertLogs("hookhost_plugin", "WARNING") as cm:
            h = Harness(Typo())
        self.assertIn("pre_toolcall looks like a hook handler", cm.output[0])
        self.assertEqual(h.hooks, [])

    def test_harness_is_a_context_manager(self):
        with Harness(Sample()) as h:
            self.assertEqual(h.transform_llm_output("x"), "x ok")

    def test_configure(self):
        p = Sample()
        Harness(p, config={"a": 1})
        self.assertEqual(p.config, {"a": 1})
        with self.assertRaises(ConfigureFailed) as cm:
            Harness(Sample(), config={"bad": 1})
        self.assertEqual(cm.exception.message, "key bad: not allowed here")


class ConfigTypeTest(unittest.TestCase):
    def test_config_type(self):
        @dataclass
        class Conf:
            policy: str
            strict: bool = False

        class P(hp.Plugin):
            name = "p"
            config_type = Conf

            def configure(self, config):
                self.config = config

        p = P()
        Harness(p, config={"policy": "x"})
        self.assertEqual(p.config, Conf("x", False))
        with self.assertRaises(ConfigureFailed) as cm:
            Harness(P(), config={"policy": "x", "strict": "yes"})
        self.assertEqual(cm.exception.message, "strict: wrong type: got string, want bool")


class ConfigDeclarationTest(unittest.TestCase):
    """The manifest declares config_type's fields as the config keys; none
    for a plugin that leaves configure alone; nothing for one that checks
    its config in its own configure."""

    @staticmethod
    def declared(plugin):
        m = Adapted(plugin).manifest()
        return list(m.config.keys) if m.HasField("config") else None

    def test_declarations(self):
        @dataclass
        class Conf:
            policy: str
            deny: list = None
            strict: bool = False

        class Typed(hp.Plugin):
            name = "typed"
            config_type = Conf

            def configure(self, config):
                pass

        class TypedOnly(hp.Plugin):
            name = "typedonly"
            config_type = Conf

        class Plain(hp.Plugin):
            name = "plain"

        class Own(hp.Plugin):
            name = "own"

            def configure(self, config):
                pass

        self.assertEqual(self.declared(Typed()), ["deny", "policy", "strict"])
        self.assertEqual(self.declared(TypedOnly()), ["deny", "policy", "strict"])
        self.assertEqual(self.declared(Plain()), [])
        self.assertIsNone(self.declared(Own()))
        # Present with no keys survives the wire: declared, takes none.
        wire = pb.Manifest.FromString(Adapted(Plain()).manifest().SerializeToString())
        self.assertTrue(wire.HasField("config"))
        wire = pb.Manifest.FromString(Adapted(Own()).manifest().SerializeToString())
        self.assertFalse(wire.HasField("config"))

    def test_config_type_must_be_a_dataclass(self):
        class Bad(hp.Plugin):
            name = "bad"
            config_type = dict

        with self.assertRaises(ValueError) as cm:
            Adapted(Bad()).validate()
        self.assertIn("config_type must be a dataclass", str(cm.exception))


class CallsTest(unittest.TestCase):
    """The same checks over protocol 2 (the stream) and protocol 1."""

    def each(self):
        for protocol in (2, 1):
            with self.subTest(protocol=protocol):
                h = Harness(Sample(), protocol=protocol, timeout=2.0)
                self.addCleanup(h.close)
                yield h

    def test_answers_and_no_opinion(self):
        for h in self.each():
            self.assertEqual(
                h.pre_tool_call("sample__echo", {"text": "block"}).block.message,
                "blocked by sample",
            )
            self.assertEqual(
                json.loads(h.pre_tool_call("sample__echo", {"text": "modify"}).modified_args),
                {"text": "MODIFIED"},
            )
            self.assertIsNone(h.pre_tool_call("sample__echo", {"text": "fine"}))
            self.assertEqual(
                h.pre_tool_call_can_provide_result("sample__echo", {"text": "hi"}), hp.ToolResult('{"echo":"hi"}')
            )
            self.assertIsNone(h.pre_tool_call_can_provide_result("sample__other", {}))
            self.assertEqual(h.transform_llm_output("done"), "done ok")
            self.assertIsNone(h.pre_tool_list_finalized([]))  # not served: not asked
            h.on_session_start()
            self.assertEqual(
                h.call("pre_api_request_mutable", hp.APIRequest()), None
            )  # not served: no opinion

    def test_invalid_unicode_is_repaired(self):
        class Bad(hp.Plugin):
            name = "bad"

            def transform_llm_output(self, out):
                return "a\ud800b"

            def pre_tool_call(self, call):
                return hp.modify({"k\udc00": "v\ud800"})

        for protocol in (1, 2):
            with Harness(Bad(), protocol=protocol) as h:
                with self.assertLogs("hookhost_plugin", "DEBUG"):
                    self.assertEqual(h.transform_llm_output("x"), "a\ufffdb")
                    d = h.pre_tool_call("t", {})
                self.assertEqual(json.loads(d.modified_args), {"k\ufffd": "v\ufffd"})

    def test_failure_kinds(self):
        for h in self.each():
            for text, kind, msg in [
                ("raise", "ERROR", "pre refuses"),
                ("keyerror", "ERROR", "KeyError: 'k'"),
                ("exit", "PANIC", "panic in pre_tool_call handler: SystemExit: 3"),
                ("wrong-type", "ERROR", "answered with a str, want PreToolCallDecision"),
                # Not CANCELLED: the host would take the process for gone.
                ("stray-cancelled", "ERROR", "Cancelled: not really"),
            ]:
                with self.assertRaises(CallFailed) as cm:
                    h.pre_tool_call("sample__echo", {"text": text})
                self.assertEqual(cm.exception.kind, kind, text)
                self.assertIn(msg, cm.exception.message)

    def test_deadline(self):
        for h in self.each():
            with self.assertRaises(CallFailed) as cm:
                h.call("pre_tool_call", call("sleep"), timeout=0.2)
            self.assertEqual(cm.exception.kind, "DEADLINE_EXCEEDED")

    def test_bad_request(self):
        p = Adapted(Sample())
        from hookhost_plugin import convert

        with self.assertRaises(hp.runtime.Failure) as cm:
            p.call_wire(
                convert.row_of("pre_tool_call"), b"\xff\xff\xff", hp.Context("pre_tool_call")
            )
        self.assertEqual(cm.exception.kind, pb2.Failure.BAD_REQUEST)


class StreamTest(unittest.TestCase):
    def setUp(self):
        self.plugin = Sample()
        self.h = Harness(self.plugin, timeout=2.0)
        self.addCleanup(self.h.close)

    def test_cancel_stops_the_handler_and_sends_nothing(self):
        got = self.h.cancel_after(0.2, "pre_tool_call", call("sleep"))
        self.assertIs(got, True)
        self.assertTrue(self.plugin.cancelled_seen.wait(2))

    def test_calls_run_concurrently(self):
        pool = concurrent.futures.ThreadPoolExecutor(1)
        slow = pool.submit(self.h.call, "pre_tool_call", call("ignore-deadline"), 5.0)
        self.assertTrue(self.plugin.started.wait(2))
        t0 = time.monotonic()
        self.assertEqual(
            self.h.pre_tool_call_can_provide_result("sample__echo", {"text": "quick"}), hp.ToolResult('{"echo":"quick"}')
        )
        self.assertLess(time.monotonic() - t0, 1.0)
        self.plugin.release.set()
        self.assertIsNone(slow.result(5))
        pool.shutdown()

    def test_stretch_modify_provide_transform(self):
        out = self.h.stretch(call("modify"), ALL3)
        self.assertEqual(len(out), 3, out)
        self.assertEqual(json.loads(out[0].modified_args), {"text": "MODIFIED"})
        self.assertEqual(out[1], hp.ToolResult('{"echo":"MODIFIED"}'))
        self.assertEqual(out[2], hp.ToolResult('{"echo":"MODIFIED"}!'))
        ev = self.plugin.seen[-1]
        self.assertEqual(
            (ev.arguments, ev.status, ev.name, ev.call_id),
            ('{"text":"MODIFIED"}', "provided_by:sample", "sample__echo", "c"),
        )
        self.assertGreater(ev.duration_ns, 0)

    def test_stretch_transform_sees_text_as_json(self):
        out = self.h.stretch(
            call("nothing"), ["pre_tool_call_can_provide_result", "transform_tool_result"]
        )
        self.assertEqual(out, [hp.ToolResult("plain text"), hp.ToolResult('"plain text"!')])

    def test_as_json_repairs_lone_surrogates_as_the_host_does(self):
        # U+FFFD, as the host repairs the same text, never escape text.
        self.assertEqual(hp.ToolResult("bad \udcff byte").as_json(), hp.ToolResult('"bad \ufffd byte"'))
        self.assertEqual(hp.ToolResult('{"a":"\ud800"}').as_json(), hp.ToolResult('{"a":"\ufffd"}'))

    def test_stretch_stops_after_a_block(self):
        self.assertEqual(self.h.stretch(call("block"), ALL3), [hp.block("blocked by sample")])

    def test_stretch_stops_after_an_ask(self):
        # Nothing is provided before a person approves.
        self.assertEqual(self.h.stretch(call("ask"), ALL3), [hp.ask("a person decides")])

    def test_ask_crosses_the_wire(self):
        d = self.h.pre_tool_call("sample__echo", {"text": "ask"})
        self.assertEqual(d, hp.PreToolCallDecision(ask=hp.Ask("a person decides")))

    def test_stretch_stops_after_no_result(self):
        out = self.h.stretch(call("x", name="native"), ALL3)
        self.assertEqual(out, [None, None])

    def test_stretch_stops_after_a_failure(self):
        out = self.h.stretch(call("raise"), ALL3)
        self.assertEqual(len(out), 1)
        self.assertEqual((out[0].kind, out[0].stage), ("ERROR", 0))

    def test_stretch_stops_after_a_decision_that_breaks_the_rules(self):
        # Arguments that are not an object: the plugin's mistake, a failure
        # of the stage that answered them, and the stretch's end.
        out = self.h.stretch(call("not-object"), ALL3)
        self.assertEqual(len(out), 1, out)
        self.assertIsInstance(out[0], CallFailed)
        self.assertEqual((out[0].kind, out[0].stage), ("ERROR", 0))
        self.assertIn("want an object", out[0].message)
        # A block with modified arguments is a block: the last message.
        out = self.h.stretch(call("both"), ALL3)
        self.assertEqual(
            out, [hp.PreToolCallDecision(block=hp.Block("x"), modified_args='{"text":"y"}')]
        )

    def test_stretch_stage_deadline_leaves_a_handler_running(self):
        t0 = time.monotonic()
        out = self.h.stretch(call("ignore-deadline"), ALL3, timeouts=[0.2, 1, 1])
        self.assertLess(time.monotonic() - t0, 1.5)
        self.assertEqual(len(out), 1)
        self.assertEqual(out[0].kind, "DEADLINE_EXCEEDED")
        self.plugin.release.set()

    def test_illegal_stretch(self):
        out = self.h.stretch(call("x"), ["pre_tool_call", "transform_tool_result"])
        self.assertEqual(out[0].kind, "ERROR")
        self.assertIn(
            "not a legal stretch: stages [pre_tool_call, transform_tool_result]", out[0].message
        )


class HostileTest(unittest.TestCase):
    """What a misbehaving host sends gets a failure, never a hang."""

    def setUp(self):
        self.sent = []
        self.done = threading.Condition()
        pool = concurrent.futures.ThreadPoolExecutor(4)
        self.addCleanup(pool.shutdown)
        self.stream = HookStream(Adapted(Sample()), self.collect, pool, pool, max_in_flight=2)

    def collect(self, m):
        with self.done:
            self.sent.append(m)
            self.done.notify_all()

    def wait_for(self, n):
        with self.done:
            self.assertTrue(self.done.wait_for(lambda: len(self.sent) >= n, 5), self.sent)

    def send(self, **call):
        self.stream.receive(pb2.HostMessage(call=pb2.HookCall(**call)))

    def test_failures(self):
        self.send(id=1)
        self.send(id=2, stages=[pb2.Stage(hook="no_such_hook", timeout_ns=10**9)])
        self.send(
            id=3, stages=[pb2.Stage(hook="pre_tool_call", timeout_ns=10**9)], payload=b"\xff\xff"
        )
        self.send(id=4, stages=[pb2.Stage(hook="pre_tool_call"), pb2.Stage(hook="nope")])
        self.send(
            id=5,
            stages=[
                pb2.Stage(hook="pre_tool_call", timeout_ns=10**9),
                pb2.Stage(hook="pre_tool_call_can_provide_result", timeout_ns=10**9),
            ],
            payload=b"\xff",
        )
        self.wait_for(5)
        kinds = {m.id: (pb2.Failure.Kind.Name(m.failure.kind), m.last) for m in self.sent}
        self.assertEqual(
            kinds,
            {
                1: ("BAD_REQUEST", True),
                2: ("UNKNOWN_HOOK", True),
                3: ("BAD_REQUEST", True),
                4: ("UNKNOWN_HOOK", True),
                5: ("BAD_REQUEST", True),
            },
        )

    def test_duplicate_ids_and_too_many_calls(self):
        sleep = pb.ToolCallRequest(
            name="sample__echo", arguments=b'{"text":"sleep"}'
        ).SerializeToString()
        stage = [pb2.Stage(hook="pre_tool_call", timeout_ns=3 * 10**9)]
        self.send(id=1, stages=stage, payload=sleep)
        self.send(id=1, stages=stage, payload=sleep)
        self.send(id=2, stages=stage, payload=sleep)
        self.send(id=3, stages=stage, payload=sleep)
        self.wait_for(2)
        msgs = {(m.id, m.failure.message.split(" ")[0]) for m in self.sent}
        self.assertIn((1, "call"), msgs)  # "call id 1 is already in flight"
        self.assertIn((3, "the"), msgs)  # "the plugin is already running 2 hook calls..."
        self.stream.close()


class LogTest(unittest.TestCase):
    def test_hclog_line(self):
        import io
        import logging
        from hookhost_plugin.log import HclogFormatter, Logger

        buf = io.StringIO()
        base = logging.getLogger("hookhost_plugin.test_log")
        base.propagate = False
        handler = logging.StreamHandler(buf)
        handler.setFormatter(HclogFormatter("myplug"))
        base.addHandler(handler)
        base.setLevel(1)
        log = Logger(base)
        log.warn("cache full", entries=3)
        log.debug("d")
        log.error("e")
        log.info("i")
        base.log(5, "t")
        lines = [json.loads(x) for x in buf.getvalue().splitlines()]
        self.assertEqual([x["@level"] for x in lines], ["warn", "debug", "error", "info", "trace"])
        self.assertEqual((lines[0]["@message"], lines[0]["entries"]), ("cache full", 3))
        self.assertEqual(lines[0]["@module"], "myplug.hookhost_plugin.test_log")
        # go-plugin parses exactly this layout: 2006-01-02T15:04:05.000000Z07:00
        self.assertRegex(lines[0]["@timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


class WindowedOutputTest(unittest.TestCase):
    class Guard(hp.Plugin):
        name = "wguard"
        hook_options = {
            "transform_llm_output": {"window_bytes": 4096, "overlap_bytes": 256},
            "post_llm_call_can_reissue": {"decide_after_bytes": 512},
        }

        def transform_llm_output(self, out):
            if "FORBIDDEN" in out.text:
                return hp.TextReplacement(stop=hp.OutputStop("withheld"))
            if out.windowed and out.overlap == 3 and out.offset == 10 and out.last:
                return out.text.upper()
            return None

        def post_llm_call_can_reissue(self, call):
            if call.partial:
                return hp.Reissue(reason="opening of %d bytes" % len(call.response.message.content))
            return None

    def test_manifest_declares_hook_options(self):
        h = Harness(self.Guard())
        got = [
            (o.hook, o.window_bytes, o.overlap_bytes, o.decide_after_bytes)
            for o in h.manifest.hook_options
        ]
        self.assertEqual(
            got,
            [("post_llm_call_can_reissue", 0, 0, 512), ("transform_llm_output", 4096, 256, 0)],
        )

    def test_window_stop_and_opening(self):
        h = Harness(self.Guard())
        win = hp.LLMOutput(session_id="s", text="abcdef", windowed=True, offset=10, overlap=3, last=True)
        self.assertEqual(h.call("transform_llm_output", win), hp.TextReplacement("ABCDEF"))
        stop = h.call("transform_llm_output", hp.LLMOutput(text="a FORBIDDEN word", windowed=True))
        self.assertEqual(stop, hp.TextReplacement("", hp.OutputStop("withheld")))
        self.assertIsNone(h.call("transform_llm_output", hp.LLMOutput(text="abcdef")))
        call = hp.LLMCall(
            session_id="s",
            response=hp.ModelResponse(message=hp.Message(role="assistant", content="x" * 512)),
            partial=True,
        )
        self.assertEqual(h.call("post_llm_call_can_reissue", call).reason, "opening of 512 bytes")

    def test_bad_hook_options(self):
        class Bad(hp.Plugin):
            name = "bad"
            hook_options = {"transform_llm_output": {"window": 10}}

            def transform_llm_output(self, out):
                return None

        with self.assertRaises(ValueError):
            Harness(Bad())


class OriginTest(unittest.TestCase):
    def test_origin_travels_both_ways(self):
        from hookhost_plugin import convert

        req = convert.tool_call_request_from(
            pb.ToolCallRequest(name="fs__read", arguments=b"{}", origin="mcp:fs")
        )
        self.assertEqual(req.origin, "mcp:fs")
        self.assertEqual(hp.Origin.mcp_server(req.origin), "fs")
        self.assertEqual(convert.tool_call_request_to(req).origin, "mcp:fs")
        out = convert.outcome_from(pb.ToolCallOutcome(name="read_file", arguments=b"{}", origin="client"))
        self.assertEqual(out.origin, hp.Origin.CLIENT)
        self.assertEqual(convert.outcome_to(out).origin, "client")

    def test_origin_helpers(self):
        self.assertEqual(hp.Origin.mcp("github"), "mcp:github")
        for other in (hp.Origin.NATIVE, hp.Origin.PLUGIN, hp.Origin.CLIENT, "", "mcp:"):
            self.assertIsNone(hp.Origin.mcp_server(other))


class ContextHooksTest(unittest.TestCase):
    """on_user_message and post_tool_call_can_add_context, over both
    protocols, with the str shorthand and the one-of rule."""

    class Ctx(hp.Plugin):
        name = "ctx"

        def on_user_message(self, m):
            if m.text == "forbidden":
                return hp.UserMessageDecision(block=hp.Block("not here"))
            if m.text == "both":
                return hp.UserMessageDecision(block=hp.Block("x"), additional_context="y")
            return "context for " + m.text

        def post_tool_call_can_add_context(self, ev):
            return hp.AddedContext("seen " + ev.name)

    def test_answers(self):
        for protocol in (2, 1):
            with self.subTest(protocol=protocol):
                h = Harness(self.Ctx(), protocol=protocol, timeout=2.0)
                self.addCleanup(h.close)
                d = h.on_user_message(hp.UserMessage(session_id="s", route="gateway", index=3, text="forbidden"))
                self.assertEqual(d.block.message, "not here")
                d = h.on_user_message(hp.UserMessage(text="hello"))
                self.assertEqual(d, hp.UserMessageDecision(additional_context="context for hello"))
                with self.assertRaises(CallFailed):
                    h.on_user_message(hp.UserMessage(text="both"))
                a = h.post_tool_call_can_add_context(hp.ToolCallOutcome(name="now"))
                self.assertEqual(a, hp.AddedContext("seen now"))


if __name__ == "__main__":
    unittest.main()
