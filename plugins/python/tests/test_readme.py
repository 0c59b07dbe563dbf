"""README.md's examples work: the plugin in 20 lines, its unit tests, the
ledger's typed tool, the config example and the hooks only some configs
need."""

import os
import re
import unittest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "README.md")


def blocks():
    with open(README, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def block_with(text):
    found = [b for b in blocks() if text in b]
    assert found, "README.md has no python block with %r" % text
    return found[0]


class ReadmeTest(unittest.TestCase):
    def test_plugin_and_its_tests(self):
        plugin = block_with("hp.serve(Shout())").replace(
            'if __name__ == "__main__":\n    hp.serve(Shout())\n', ""
        )
        ns = {"__name__": "readme_plugin"}
        exec(compile(plugin, "README.md (plugin)", "exec"), ns)
        exec(compile(block_with("class ShoutTest"), "README.md (tests)", "exec"), ns)
        with open(os.devnull, "w") as devnull:
            result = unittest.TextTestRunner(stream=devnull).run(
                unittest.defaultTestLoader.loadTestsFromTestCase(ns["ShoutTest"])
            )
        self.assertTrue(
            result.wasSuccessful() and result.testsRun == 2, result.failures + result.errors
        )

    def test_typed_tool_and_config_examples(self):
        ns = {}
        exec(
            "import hookhost_plugin as hp\nfrom dataclasses import dataclass\n"
            + block_with("class Ledger")
            + block_with("hp.decode_config"),
            ns,
        )
        from hookhost_plugin.testing import ConfigureFailed, Harness

        h = Harness(ns["Ledger"]())
        self.assertEqual(
            h.pre_tool_call_can_provide_result("ledger__get_burn", {}).content, '{"usd":1.25,"window":"today"}'
        )
        self.assertIn(
            'args.limit: must be an integer, got string \\"3\\"',
            h.pre_tool_call_can_provide_result("ledger__get_burn", {"limit": "3"}).content,
        )
        with self.assertRaises(ConfigureFailed) as cm:
            Harness(ns["Guard"](), config={"polcy": "x"})
        self.assertEqual(cm.exception.message, "unknown key 'polcy' (known keys: policy, strict)")

    def test_unserved_example(self):
        ns = {}
        exec("import hookhost_plugin as hp\n" + block_with("def unserved(self)"), ns)
        from hookhost_plugin.testing import Harness

        hook = "pre_llm_call_can_provide_response"
        off = Harness(ns["Canned"]())
        self.assertIn(hook, off.hooks)
        self.assertEqual(off.unserved, [hook])
        self.assertFalse(off.subscribed(hook))
        ask = ns["hp"].LLMRequest(
            request=ns["hp"].ModelRequest(messages=[ns["hp"].Message(role="user", content="hours?")])
        )
        self.assertIsNone(off.pre_llm_call_can_provide_response(ask))
        on = Harness(ns["Canned"](), config={"answers": {"hours?": "9 to 5"}})
        self.assertEqual(on.unserved, [])
        self.assertEqual(on.pre_llm_call_can_provide_response(ask).message.content, "9 to 5")


if __name__ == "__main__":
    unittest.main()
