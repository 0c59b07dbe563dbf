"""Protocol version 2's model stages and observer batches, message by
message: a HookCall fed to the stream, the PluginMessages it sends back."""

import concurrent.futures
import threading
import time
import unittest

import hookhost_plugin as hp
from hookhost_plugin import convert
from hookhost_plugin._proto import plugin_pb2 as pb
from hookhost_plugin._proto import pluginv2_pb2 as pb2
from hookhost_plugin.runtime import Adapted, HookStream
from hookhost_plugin.testing import Harness

SECOND = 10**9
PRE3 = ["pre_tool_list_finalized", "pre_api_request_mutable", "pre_llm_call_can_provide_response"]
POST2 = ["post_llm_call_can_reissue", "transform_llm_output"]
OBSERVERS4 = ["on_session_start", "post_llm_call", "post_tool_call", "on_session_end"]


def spec(name):
    return hp.ToolSpec(name, "the %s tool" % name, {"type": "object"})


class Model(hp.Plugin):
    """Every model-side hook and every observer; what each answers is set
    per test, and what each was asked is recorded."""

    name, version = "model", "1.0.0"

    def __init__(self):
        self.asked = []  # (hook, payload)
        self.lock = threading.Lock()
        self.override = None
        self.patch = None
        self.provide = None
        self.reissue = None
        self.behave = {}  # hook -> "raise" | "hang" | "wait" | "answer"
        self.started = threading.Event()
        self.cancelled_seen = threading.Event()
        self.release = threading.Event()

    def _note(self, hook, payload, ctx):
        with self.lock:
            self.asked.append((hook, payload))
        b = self.behave.get(hook)
        if b == "raise":
            raise hp.HookError("%s refuses" % hook)
        if b == "hang":  # ignores its deadline
            self.started.set()
            self.release.wait(10)
        if b == "wait":  # until cancelled
            self.started.set()
            if ctx.wait(10):
                self.cancelled_seen.set()
                ctx.check()
        if isinstance(b, float):
            time.sleep(b)
        if b == "answer":
            return "an observer's answer"
        return None

    def hooks_asked(self):
        with self.lock:
            return [h for h, _ in self.asked]

    def payload(self, hook):
        with self.lock:
            return [p for h, p in self.asked if h == hook][-1]

    def pre_tool_list_finalized(self, req, ctx):
        self._note("pre_tool_list_finalized", req, ctx)
        return self.override

    def pre_api_request_mutable(self, req, ctx):
        self._note("pre_api_request_mutable", req, ctx)
        return self.patch

    def pre_llm_call_can_provide_response(self, req, ctx):
        self._note("pre_llm_call_can_provide_response", req, ctx)
        return self.provide

    def post_llm_call_can_reissue(self, call, ctx):
        self._note("post_llm_call_can_reissue", call, ctx)
        return self.reissue

    def transform_llm_output(self, out, ctx):
        self._note("transform_llm_output", out, ctx)
        return out.text + "!"

    def on_session_start(self, ev, ctx):
        return self._note("on_session_start", ev, ctx)

    def post_llm_call(self, ev, ctx):
        return self._note("post_llm_call", ev, ctx)

    def post_tool_call(self, ev, ctx):
        return self._note("post_tool_call", ev, ctx)

    def on_session_end(self, ev, ctx):
        return self._note("on_session_end", ev, ctx)


def request():
    return pb.ModelRequest(
        model="m-1",
        system="be brief",
        messages=[pb.Message(role="user", content="hi")],
        tools=[convert.tool_spec_to(spec("a")), convert.tool_spec_to(spec("b"))],
        max_tokens=100,
        temperature=0.5,
    )


def model_stage(fields_set=(), text="", response=None):
    call = pb.LlmCall(session_id="s1", iteration=2, route="r", request=request())
    if response is not None:
        call.response.CopyFrom(response)
    return pb2.ModelStage(call=call, fields_set=list(fields_set), text=text).SerializeToString()


class Wire:
    """One stream, played as the host plays it."""

    def __init__(self, test, plugin):
        self.plugin = plugin
        self.sent = []
        self.cond = threading.Condition()
        pool = concurrent.futures.ThreadPoolExecutor(8)
        stages = concurrent.futures.ThreadPoolExecutor(8)
        test.addCleanup(pool.shutdown, wait=False)
        test.addCleanup(stages.shutdown, wait=False)
        self.stream = HookStream(Adapted(plugin), self._collect, pool, stages)
        test.addCleanup(self.stream.close)
        self.test = test

    def _collect(self, m):
        with self.cond:
            self.sent.append(m)
            self.cond.notify_all()

    def call(self, cid, hooks, payload=b"", payloads=None, timeouts=None):
        timeouts = timeouts or [2.0] * len(hooks)
        c = pb2.HookCall(
            id=cid,
            stages=[
                pb2.Stage(hook=h, timeout_ns=int(t * SECOND)) for h, t in zip(hooks, timeouts)
            ],
            payload=payload,
        )
        if payloads is not None:
            c.payloads.extend(payloads)
        self.stream.receive(pb2.HostMessage(call=c))

    def cancel(self, cid):
        self.stream.receive(pb2.HostMessage(cancel=pb2.Cancel(id=cid)))

    def messages(self, cid):
        """The messages of call cid, once its last one came."""
        with self.cond:
            ok = self.cond.wait_for(lambda: any(m.id == cid and m.last for m in self.sent), 10)
            self.test.assertTrue(ok, "no last message for call %d: %s" % (cid, self.sent))
            return [m for m in self.sent if m.id == cid]

    def settle(self):
        """Wait until no call runs any more (handlers included)."""
        for _ in range(250):
            if self.stream.in_flight() == 0:
                return
            time.sleep(0.02)
        self.test.fail("calls still in flight")

    def shape(self, msgs):
        """Each message as (stage, "answer" or the failure kind, last)."""
        return [
            (
                m.stage,
                pb2.Failure.Kind.Name(m.failure.kind) if m.HasField("failure") else "answer",
                m.last,
            )
            for m in msgs
        ]


def answer(hook, m):
    row = convert.row_of(hook)
    return row.answer_from(row.response.FromString(m.answer))


class ManifestFlagsTest(unittest.TestCase):
    def test_the_sdk_serves_model_stages_and_observer_batches(self):
        m = Adapted(Model()).manifest()
        self.assertTrue(m.model_stages)
        self.assertTrue(m.observer_batches)
        # What the host reads from Describe.
        h = Harness(Model())
        self.addCleanup(h.close)
        self.assertTrue(h.manifest.model_stages and h.manifest.observer_batches)


class ModelStageTest(unittest.TestCase):
    def setUp(self):
        self.p = Model()
        self.w = Wire(self, self.p)

    def test_pre_call_stages_in_order_with_own_answers_applied(self):
        self.p.override = hp.ToolListOverride([spec("only")])
        self.p.patch = hp.RequestPatch(model="m-2", system="be long", max_tokens=7)
        self.w.call(1, PRE3, model_stage())
        msgs = self.w.messages(1)
        self.assertEqual(
            self.w.shape(msgs), [(0, "answer", False), (1, "answer", False), (2, "answer", True)]
        )
        self.assertEqual(self.p.hooks_asked(), PRE3)
        self.assertEqual(answer(PRE3[0], msgs[0]), hp.ToolListOverride([spec("only")]))
        self.assertEqual(answer(PRE3[1], msgs[1]).model, "m-2")
        self.assertIsNone(answer(PRE3[2], msgs[2]))
        tl = self.p.payload("pre_tool_list_finalized")
        self.assertEqual(
            (tl.session_id, tl.iteration, [t.name for t in tl.tools]), ("s1", 2, ["a", "b"])
        )
        api = self.p.payload("pre_api_request_mutable").request
        # The override already applies to the next stage's request.
        self.assertEqual([t.name for t in api.tools], ["only"])
        self.assertEqual((api.model, api.system), ("m-1", "be brief"))
        llm = self.p.payload("pre_llm_call_can_provide_response")
        self.assertEqual((llm.session_id, llm.iteration, llm.route), ("s1", 2, "r"))
        self.assertEqual(
            (
                llm.request.model,
                llm.request.system,
                llm.request.max_tokens,
                llm.request.temperature,
            ),
            ("m-2", "be long", 7, 0.5),
        )
        self.assertEqual([t.name for t in llm.request.tools], ["only"])
        self.assertEqual([m.content for m in llm.request.messages], ["hi"])

    def test_patch_fields_set_above_are_not_applied(self):
        self.p.patch = hp.RequestPatch(
            model="m-2",
            system="be long",
            messages=[hp.Message("user", "replaced")],
            tools=[spec("patched")],
            temperature=0.9,
        )
        self.w.call(1, PRE3[1:], model_stage(fields_set=["model", "messages", "temperature"]))
        self.assertEqual(
            self.w.shape(self.w.messages(1)), [(0, "answer", False), (1, "answer", True)]
        )
        req = self.p.payload("pre_llm_call_can_provide_response").request
        self.assertEqual((req.model, req.system, req.temperature), ("m-1", "be long", 0.5))
        self.assertEqual([m.content for m in req.messages], ["hi"])
        self.assertEqual([t.name for t in req.tools], ["patched"])

    def test_patched_tools_after_an_override(self):
        self.p.override = hp.ToolListOverride([spec("over")])
        self.p.patch = hp.RequestPatch(tools=[spec("patched")])
        self.w.call(1, PRE3, model_stage(fields_set=["tools"]))
        self.w.messages(1)
        # A plugin above patched the tools: this one's patch is ignored, its
        # override (not a patch) is not.
        self.assertEqual(
            [t.name for t in self.p.payload("pre_llm_call_can_provide_response").request.tools],
            ["over"],
        )

    def test_no_opinion_changes_nothing(self):
        self.w.call(
            1, ["pre_tool_list_finalized", "pre_llm_call_can_provide_response"], model_stage()
        )
        self.assertEqual(
            self.w.shape(self.w.messages(1)), [(0, "answer", False), (1, "answer", True)]
        )
        self.assertEqual(
            self.p.payload("pre_llm_call_can_provide_response").request,
            convert.model_request_from(request()),
        )

    def test_a_provided_response_is_the_last_answer(self):
        self.p.provide = hp.ModelResponse(
            model="m-1", message=hp.Message("assistant", "from the plugin"), stop_reason="end_turn"
        )
        self.w.call(1, PRE3[1:], model_stage())
        msgs = self.w.messages(1)
        self.assertEqual(self.w.shape(msgs), [(0, "answer", False), (1, "answer", True)])
        self.assertEqual(answer(PRE3[2], msgs[1]).message.content, "from the plugin")

    def test_post_call_reissue_stops_before_the_transform(self):
        self.p.reissue = hp.Reissue(hp.RequestPatch(model="bigger"), "too short")
        resp = pb.ModelResponse(
            model="m-1", message=pb.Message(role="assistant", content="the model's")
        )
        self.w.call(1, POST2, model_stage(text="as left above", response=resp))
        msgs = self.w.messages(1)
        self.assertEqual(self.w.shape(msgs), [(0, "answer", True)])
        self.assertEqual(answer(POST2[0], msgs[0]).reason, "too short")
        self.w.settle()
        self.assertEqual(self.p.hooks_asked(), ["post_llm_call_can_reissue"])
        call = self.p.payload("post_llm_call_can_reissue")
        self.assertEqual(
            (
                call.session_id,
                call.iteration,
                call.route,
                call.response.message.content,
                call.request.model,
            ),
            ("s1", 2, "r", "the model's", "m-1"),
        )

    def test_post_call_transforms_the_text_left_above(self):
        resp = pb.ModelResponse(message=pb.Message(role="assistant", content="the model's"))
        self.w.call(1, POST2, model_stage(text="as left above", response=resp))
        msgs = self.w.messages(1)
        self.assertEqual(self.w.shape(msgs), [(0, "answer", False), (1, "answer", True)])
        self.assertIsNone(answer(POST2[0], msgs[0]))
        self.assertEqual(answer(POST2[1], msgs[1]), hp.TextReplacement("as left above!"))
        out = self.p.payload("transform_llm_output")
        self.assertEqual((out.session_id, out.windowed), ("s1", False))

    def test_a_failed_stage_is_the_last(self):
        self.p.behave["pre_api_request_mutable"] = "raise"
        self.w.call(1, PRE3, model_stage())
        msgs = self.w.messages(1)
        self.assertEqual(self.w.shape(msgs), [(0, "answer", False), (1, "ERROR", True)])
        self.assertIn("pre_api_request_mutable refuses", msgs[1].failure.message)
        self.w.settle()
        self.assertEqual(self.p.hooks_asked(), PRE3[:2])

    def test_an_answer_that_cannot_be_sent_is_a_failed_stage(self):
        self.p.override = "not a tool list"
        self.w.call(1, PRE3, model_stage())
        self.assertEqual(self.w.shape(self.w.messages(1)), [(0, "ERROR", True)])

    def test_each_stage_has_its_own_deadline(self):
        # Together longer than one stage's deadline, each well within its own.
        self.p.behave["pre_api_request_mutable"] = 0.6
        self.p.behave["pre_llm_call_can_provide_response"] = 0.6
        self.w.call(1, PRE3[1:], model_stage(), timeouts=[1.0, 1.0])
        self.assertEqual(
            self.w.shape(self.w.messages(1)), [(0, "answer", False), (1, "answer", True)]
        )

    def test_a_stage_past_its_deadline_is_the_last(self):
        self.p.behave["pre_api_request_mutable"] = "hang"
        self.addCleanup(self.p.release.set)
        self.w.call(1, PRE3, model_stage(), timeouts=[2.0, 0.2, 2.0])
        msgs = self.w.messages(1)
        self.assertEqual(
            self.w.shape(msgs), [(0, "answer", False), (1, "DEADLINE_EXCEEDED", True)]
        )
        self.p.release.set()
        self.w.settle()
        self.assertEqual(self.p.hooks_asked(), PRE3[:2])

    def test_after_a_cancel_nothing_is_sent_and_nothing_started(self):
        self.p.behave["pre_api_request_mutable"] = "wait"
        self.w.call(1, PRE3, model_stage())
        self.assertTrue(self.p.started.wait(5))
        self.w.cancel(1)
        self.assertTrue(self.p.cancelled_seen.wait(5))
        self.w.settle()
        self.assertEqual(
            self.w.shape([m for m in self.w.sent if m.id == 1]), [(0, "answer", False)]
        )
        self.assertEqual(self.p.hooks_asked(), PRE3[:2])

    def test_stage_lists_that_are_not_model_stages(self):
        bad = [
            ["pre_api_request_mutable", "pre_tool_list_finalized"],
            ["pre_tool_list_finalized", "pre_tool_list_finalized"],
            ["pre_llm_call_can_provide_response", "post_llm_call_can_reissue"],
            ["transform_llm_output", "post_llm_call_can_reissue"],
            ["pre_tool_call", "pre_api_request_mutable"],
            PRE3 + ["post_llm_call_can_reissue"],
        ]
        for i, hooks in enumerate(bad, start=1):
            self.w.call(i, hooks, model_stage())
            msgs = self.w.messages(i)
            self.assertEqual(self.w.shape(msgs), [(0, "BAD_REQUEST", True)], hooks)
            self.assertIn("not a legal model stage", msgs[0].failure.message)
        self.w.call(50, ["pre_tool_list_finalized", "no_such_hook"], model_stage())
        self.assertEqual(self.w.shape(self.w.messages(50)), [(0, "UNKNOWN_HOOK", True)])
        self.w.call(51, PRE3, b"\xff\xff")
        self.assertEqual(self.w.shape(self.w.messages(51)), [(0, "BAD_REQUEST", True)])
        self.w.settle()
        self.assertEqual(self.p.hooks_asked(), [])


def events():
    return [
        pb.SessionStart(session_id="s1", model="m", route="r").SerializeToString(),
        pb.Inference(
            session_id="s1", iteration=1, model="m", stop_reason="end_turn"
        ).SerializeToString(),
        pb.ToolCallOutcome(
            session_id="s1", call_id="c1", name="read", status="ok"
        ).SerializeToString(),
        pb.SessionEnd(session_id="s1", reason="done", iterations=1).SerializeToString(),
    ]


class ObserverBatchTest(unittest.TestCase):
    def setUp(self):
        self.p = Model()
        self.w = Wire(self, self.p)

    def test_every_event_in_order(self):
        self.w.call(1, OBSERVERS4, payloads=events())
        msgs = self.w.messages(1)
        self.assertEqual(
            self.w.shape(msgs),
            [
                (0, "answer", False),
                (1, "answer", False),
                (2, "answer", False),
                (3, "answer", True),
            ],
        )
        self.assertTrue(all(m.answer == b"" for m in msgs))
        self.assertEqual(self.p.hooks_asked(), OBSERVERS4)
        self.assertEqual(self.p.payload("on_session_start"), hp.SessionStart("s1", "m", "r"))
        self.assertEqual(self.p.payload("post_llm_call").stop_reason, "end_turn")
        self.assertEqual(self.p.payload("post_tool_call").call_id, "c1")
        self.assertEqual(self.p.payload("on_session_end").reason, "done")

    def test_one_event(self):
        self.w.call(1, ["post_llm_call"], payloads=events()[1:2])
        self.assertEqual(self.w.shape(self.w.messages(1)), [(0, "answer", True)])
        self.assertEqual(self.p.hooks_asked(), ["post_llm_call"])

    def test_a_failed_event_does_not_stop_the_batch(self):
        self.p.behave["post_llm_call"] = "raise"
        self.p.behave["post_tool_call"] = "answer"  # an observer answers nothing
        pl = events()
        pl[3] = b"\xff\xff"
        self.w.call(1, OBSERVERS4, payloads=pl)
        msgs = self.w.messages(1)
        self.assertEqual(
            self.w.shape(msgs),
            [
                (0, "answer", False),
                (1, "ERROR", False),
                (2, "ERROR", False),
                (3, "BAD_REQUEST", True),
            ],
        )
        self.assertIn("post_llm_call refuses", msgs[1].failure.message)
        self.assertIn("observer", msgs[2].failure.message)
        self.assertEqual(self.p.hooks_asked(), OBSERVERS4[:3])

    def test_each_event_has_its_own_deadline(self):
        self.p.behave["on_session_start"] = "hang"
        self.addCleanup(self.p.release.set)
        self.w.call(1, OBSERVERS4[:2], payloads=events()[:2], timeouts=[0.2, 2.0])
        msgs = self.w.messages(1)
        self.assertEqual(
            self.w.shape(msgs), [(0, "DEADLINE_EXCEEDED", False), (1, "answer", True)]
        )
        self.p.release.set()

    def test_after_a_cancel_nothing_more(self):
        self.p.behave["post_llm_call"] = "wait"
        self.w.call(1, OBSERVERS4, payloads=events())
        self.assertTrue(self.p.started.wait(5))
        self.w.cancel(1)
        self.assertTrue(self.p.cancelled_seen.wait(5))
        self.w.settle()
        self.assertEqual(
            self.w.shape([m for m in self.w.sent if m.id == 1]), [(0, "answer", False)]
        )
        self.assertEqual(self.p.hooks_asked(), OBSERVERS4[:2])

    def test_an_event_of_no_observer_hook_fails_alone(self):
        self.w.call(1, ["pre_tool_call", "post_llm_call", "no_such_hook"], payloads=events()[:3])
        msgs = self.w.messages(1)
        self.assertEqual(
            self.w.shape(msgs),
            [(0, "UNKNOWN_HOOK", False), (1, "answer", False), (2, "UNKNOWN_HOOK", True)],
        )
        self.assertIn("'no_such_hook'", msgs[2].failure.message)
        self.assertEqual(self.p.hooks_asked(), ["post_llm_call"])

    def test_malformed_batches(self):
        self.w.call(1, OBSERVERS4, payloads=events()[:3])
        self.w.call(2, OBSERVERS4[:2], payload=events()[0], payloads=events()[:2])
        # Observers only, but no payloads: not a plain call either.
        self.w.call(3, OBSERVERS4[:2], payload=events()[0])
        for cid in (1, 2, 3):
            msgs = self.w.messages(cid)
            self.assertEqual(self.w.shape(msgs), [(0, "BAD_REQUEST", True)], cid)
            self.assertIn("a malformed observer batch", msgs[0].failure.message)
        self.w.settle()
        self.assertEqual(self.p.hooks_asked(), [])


class HarnessTest(unittest.TestCase):
    """The harness asks model stages and observer batches as the host does."""

    def setUp(self):
        self.p = Model()
        self.h = Harness(self.p)
        self.addCleanup(self.h.close)

    def test_model_stage(self):
        self.p.patch = hp.RequestPatch(system="be long", model="m-2")
        req = convert.model_request_from(request())
        out = self.h.model_stage(hp.LLMCall("s1", 2, "r", req), PRE3[1:], fields_set=["model"])
        self.assertEqual(out, [hp.RequestPatch(system="be long", model="m-2"), None])
        seen = self.p.payload("pre_llm_call_can_provide_response").request
        self.assertEqual((seen.model, seen.system), ("m-1", "be long"))
        self.p.reissue = hp.Reissue(hp.RequestPatch(max_tokens=9), "again")
        self.assertEqual(
            self.h.model_stage(hp.LLMCall("s1", 2, "r", req), POST2, text="t"),
            [hp.Reissue(hp.RequestPatch(max_tokens=9), "again")],
        )
        self.p.behave["pre_tool_list_finalized"] = "raise"
        out = self.h.model_stage(hp.LLMCall("s1", 2, "r", req), PRE3)
        self.assertEqual((len(out), out[0].kind, out[0].stage), (1, "ERROR", 0))

    def test_observer_batch(self):
        self.p.behave["post_llm_call"] = "raise"
        out = self.h.observer_batch(
            [
                ("on_session_start", hp.SessionStart("s1", "m", "r")),
                ("post_llm_call", hp.Inference(session_id="s1")),
                ("on_session_end", hp.SessionEnd(session_id="s1", reason="done")),
            ]
        )
        self.assertEqual(len(out), 3)
        self.assertIsNone(out[0])
        self.assertEqual((out[1].kind, out[1].stage), ("ERROR", 1))
        self.assertIsNone(out[2])
        self.assertEqual(
            self.p.hooks_asked(), ["on_session_start", "post_llm_call", "on_session_end"]
        )
        self.assertEqual(self.p.payload("on_session_end").reason, "done")
        with self.assertRaises(ValueError):
            Harness(Model(), protocol=1).observer_batch([])


if __name__ == "__main__":
    unittest.main()
