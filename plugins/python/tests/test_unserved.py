"""Plugin.unserved: the hooks a plugin does not serve as configured, asked
once after a successful configure and answered in ConfigureResponse; a
plugin's mistake in it stops the plugin starting, as its own fault, with
the mistake named."""

import unittest

import hookhost_plugin as hp
from hookhost_plugin.runtime import PANIC, Adapted, Failure
from hookhost_plugin.testing import ConfigureFailed, Harness

PROVIDE = "pre_llm_call_can_provide_response"


class Optional_(hp.Plugin):
    """Provides a model answer only when its config turns it on; its
    handler answers whenever it is asked, so a call that reaches it shows."""

    name, version = "optional", "1.0.0"

    def __init__(self):
        self.events = []
        self.on = False

    def configure(self, config):
        self.events.append("configure")
        if "bad" in config:
            raise ValueError("bad: not a key")
        self.on = bool(config.get("on"))

    def unserved(self):
        self.events.append("unserved")
        return [] if self.on else [PROVIDE]

    def pre_tool_call(self, call):
        return hp.block("optional blocks " + call.name)

    def pre_llm_call_can_provide_response(self, req):
        self.events.append("asked")
        return hp.ModelResponse(message=hp.Message(role="assistant", content="here"))


def answering(value):
    """A plugin serving pre_tool_call and PROVIDE whose unserved() is value()."""

    class P(hp.Plugin):
        name = "p"

        def unserved(self):
            return value()

        def pre_tool_call(self, call):
            return None

        def pre_llm_call_can_provide_response(self, req):
            return None

    return P()


class UnservedTest(unittest.TestCase):
    def test_an_unserved_hook_is_not_asked(self):
        for protocol in (1, 2):
            for on in (False, True):
                with self.subTest(protocol=protocol, on=on):
                    p = Optional_()
                    with Harness(p, config={"on": on}, protocol=protocol) as h:
                        # The manifest, read before the config, lists it.
                        self.assertIn(PROVIDE, h.hooks)
                        self.assertEqual(h.unserved, [] if on else [PROVIDE])
                        self.assertEqual(h.subscribed(PROVIDE), on)
                        self.assertTrue(h.subscribed("pre_tool_call", "x"))
                        got = h.pre_llm_call_can_provide_response(hp.LLMRequest())
                        self.assertEqual(got is not None and got.message.content == "here", on)
                        d = h.pre_tool_call("x")
                        self.assertEqual(d.block.message, "optional blocks x")
                    self.assertEqual(p.events, ["configure", "unserved"] + (["asked"] if on else []))

    def test_asked_once_after_configure_and_not_after_a_refusal(self):
        p = Optional_()
        with self.assertRaises(ConfigureFailed) as cm:
            Harness(p, config={"bad": 1})
        self.assertEqual(cm.exception.message, "bad: not a key")
        self.assertEqual(p.events, ["configure"])

    def test_the_configure_answer_carries_them(self):
        a = Adapted(Optional_())
        self.assertEqual(a.configure_json(b"{}"), [PROVIDE])
        self.assertEqual(a.unserved, [PROVIDE])
        b = Adapted(Optional_())
        self.assertEqual(b.configure_json(b'{"on": true}'), [])

    def test_default_serves_every_hook(self):
        class Plain(hp.Plugin):
            name = "plain"

            def pre_tool_call(self, call):
                return None

        self.assertEqual(Adapted(Plain()).configure_json(b"{}"), [])
        self.assertEqual(Harness(Plain()).unserved, [])

    def test_a_plugin_not_derived_from_plugin(self):
        class Duck:
            name = "duck"

            def unserved(self):
                return ("pre_tool_call",)

            def pre_tool_call(self, call):
                return hp.block("no")

        h = Harness(Duck())
        self.assertEqual(h.unserved, ["pre_tool_call"])
        self.assertIsNone(h.pre_tool_call("x"))

    def test_names_are_kept_in_catalogue_order_once_and_only_if_served(self):
        # post_llm_call is a hook, but P has no method for it: not in its
        # manifest, so the host would ignore it; it is not sent.
        p = answering(lambda: iter([PROVIDE, "post_llm_call", "pre_tool_call", PROVIDE]))
        self.assertEqual(Adapted(p).configure_json(b"{}"), [PROVIDE, "pre_tool_call"])
        p = answering(lambda: {PROVIDE})
        self.assertEqual(Adapted(p).configure_json(b"{}"), [PROVIDE])
        p = answering(lambda: None)
        self.assertEqual(Adapted(p).configure_json(b"{}"), [])

    def test_mistakes_stop_the_plugin_as_its_own_fault_saying_so(self):
        def boom():
            return 1 // 0

        def broken_generator():
            yield PROVIDE
            raise RuntimeError("lost the list")

        cases = [
            (boom, "unserved() failed: ZeroDivisionError: integer division or modulo by zero"),
            (lambda: PROVIDE, "unserved() must return a list of hook names, got str"),
            (lambda: 3, "unserved() must return a list of hook names, got int"),
            (lambda: [PROVIDE, 3], "unserved() must return hook names (strings), got int 3"),
            (lambda: [b"pre_tool_call"], "unserved() must return hook names (strings), got bytes b'pre_tool_call'"),
            (lambda: ["pre_tool_cal"], "unserved() names 'pre_tool_cal', which is not a hook (the hooks are on_session_start, "),
            (broken_generator, "unserved() failed: RuntimeError: lost the list"),
        ]
        for fn, want in cases:
            with self.subTest(want=want):
                with self.assertRaises(Failure) as cm:
                    Adapted(answering(fn)).configure_json(b"{}")
                self.assertTrue(cm.exception.message.startswith(want), cm.exception.message)
                self.assertEqual(cm.exception.kind, PANIC)
                with self.assertRaises(ConfigureFailed) as hc:
                    Harness(answering(fn))
                self.assertTrue(hc.exception.message.startswith(want), hc.exception.message)

    def test_an_exit_in_unserved_is_a_panic_not_the_end_of_the_process(self):
        def leave():
            raise SystemExit(3)

        with self.assertRaises(Failure) as cm:
            Adapted(answering(leave)).configure_json(b"{}")
        self.assertEqual(cm.exception.kind, PANIC)
        self.assertIn("unserved() failed", cm.exception.message)
        self.assertIn("SystemExit: 3", cm.exception.message)

    def test_unserved_must_be_a_method(self):
        class Listed(hp.Plugin):
            name = "listed"
            unserved = ["pre_tool_call"]

            def pre_tool_call(self, call):
                return None

        with self.assertRaises(ConfigureFailed) as cm:
            Harness(Listed())
        self.assertEqual(cm.exception.message, "unserved must be a method returning hook names, got list")


if __name__ == "__main__":
    unittest.main()
