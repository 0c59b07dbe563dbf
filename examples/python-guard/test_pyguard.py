"""pyguard's own tests, with the SDK's test harness: no host, no process.
Run: python3 -m unittest test_pyguard (python_test.go does)."""

import importlib.util
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
if importlib.util.find_spec("hookhost_plugin") is None:
    sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "plugins", "python", "src"))

from hookhost_plugin.testing import ConfigureFailed, Harness  # noqa: E402

_spec = importlib.util.spec_from_file_location("pyguard", os.path.join(HERE, "pyguard.py"))
pyguard = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pyguard)


class PolicyTest(unittest.TestCase):
    def setUp(self):
        self.h = Harness(pyguard.PyGuard(), config={"policy": "policy.toml"})
        self.addCleanup(self.h.close)

    def test_decisions(self):
        d = self.h.pre_tool_call("read_file", {"path": "config/.env"})
        self.assertEqual(
            d.block.message,
            "blocked by pyguard: secrets stay out of the conversation"
            " (rule secrets, tool read_file)",
        )
        self.assertIsNotNone(self.h.pre_tool_call("read_file", '{"path":"\\u0073ecret"}'))
        self.assertIsNone(self.h.pre_tool_call("read_file", {"path": "docs/x.md"}))
        self.assertIsNone(self.h.pre_tool_call("calculate", {"expression": "1+1"}))
        self.assertIsNotNone(self.h.pre_tool_call("shell_exec", {}))

    def test_explain(self):
        r = self.h.pre_tool_call_can_provide_result("pyguard__explain", {"tool": "shell", "arguments": "{}"})
        self.assertEqual(json.loads(r.content)["rule"], "no-shell")
        r = self.h.pre_tool_call_can_provide_result("pyguard__explain", {"tool": "calculate"})
        self.assertEqual(json.loads(r.content)["action"], "allow")
        self.assertIsNone(self.h.pre_tool_call_can_provide_result("read_file", {}))  # not its tool: not asked

    def test_default_block(self):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write('default = "block"\n[[rule]]\ntool = "calculate"\naction = "allow"\n')
        self.addCleanup(os.unlink, f.name)
        h = Harness(pyguard.PyGuard(), config={"policy": f.name})
        self.addCleanup(h.close)
        self.assertIsNone(h.pre_tool_call("calculate", {}))
        self.assertIn("default", h.pre_tool_call("read_file", {}).block.message)

    def test_bad_config(self):
        with self.assertRaises(ConfigureFailed) as cm:
            Harness(pyguard.PyGuard(), config={"policy": "policy.toml", "strict": True})
        self.assertIn("unknown key 'strict'", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
