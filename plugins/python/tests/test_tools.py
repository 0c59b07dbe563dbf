"""Typed tools: schemas derived from type hints, strict decoding worded as
the Go SDK words it, and failures turned into error results."""

import json
import unittest
from dataclasses import dataclass, field
from typing import Annotated, Any, Dict, List, Literal, Optional, TypedDict

import hookhost_plugin as hp
from hookhost_plugin.tools import ArgsError, Tool


@dataclass
class Inner:
    key: str


@dataclass
class Args:
    text: Annotated[str, "what to say"]
    count: int = 1
    ratio: float = 0.5
    loud: bool = False
    mode: Literal["a", "b"] = "a"
    tags: Optional[List[str]] = None
    inner: Optional[Inner] = None
    extra: Dict[str, int] = field(default_factory=dict, metadata={"description": "more"})
    anything: Any = None


class TD(TypedDict, total=False):
    path: str


class Empty(TypedDict):
    pass


@dataclass
class Rec:
    child: Optional["Rec"]


def error_of(result: hp.ToolResult) -> str:
    assert result.is_error, result
    return json.loads(result.content)["error"]


class SchemaTest(unittest.TestCase):
    def test_dataclass_schema(self):
        t = Tool("x__t", "d", lambda a: a, Args)
        self.assertEqual(
            t.spec.input_schema,
            {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "what to say"},
                    "count": {"type": "integer", "default": 1},
                    "ratio": {"type": "number", "default": 0.5},
                    "loud": {"type": "boolean", "default": False},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "inner": {
                        "type": "object",
                        "properties": {"key": {"type": "string"}},
                        "required": ["key"],
                        "additionalProperties": False,
                    },
                    "extra": {
                        "type": "object",
                        "description": "more",
                        "default": {},
                        "additionalProperties": {"type": "integer"},
                    },
                    "anything": {},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
        )

    def test_typeddict_schema(self):
        t = Tool("x__t", "d", lambda a: a, TD)
        self.assertEqual(
            t.spec.input_schema,
            {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "additionalProperties": False,
            },
        )

    def test_args_type_from_annotation(self):
        def run(a: Inner) -> str:
            return a.key

        self.assertEqual(Tool("x__t", "d", run).args_type, Inner)

    def test_unsupported_types_fail_at_declaration(self):
        @dataclass
        class Bad:
            when: complex

        @dataclass
        class Keys:
            m: Dict[int, str]

        for tp, want in [
            (Bad, "no JSON form"),
            (Keys, "dict keys must be str"),
            (Rec, "contains itself"),
            (int, "dataclass or a TypedDict"),
        ]:
            with self.assertRaises(ArgsError) as cm:
                Tool("x__t", "d", lambda a: a, tp)
            self.assertIn(want, str(cm.exception))
        with self.assertRaises(ArgsError):
            Tool("x__t", "d", lambda a: a)  # no annotation


class DecodeTest(unittest.TestCase):
    def setUp(self):
        self.tool = Tool("x__t", "d", lambda a: a, Args)

    def test_decodes(self):
        r = self.tool.call(
            '{"text":"hi","count":20.0,"ratio":1e-1,"loud":true,"mode":"b","tags":["x"],'
            '"inner":{"key":"k"},"extra":{"a":1},"anything":[1,2.5,{"z":null}]}'
        )
        self.assertFalse(r.is_error, r)
        self.assertEqual(
            json.loads(r.content),
            {
                "text": "hi",
                "count": 20,
                "ratio": 0.1,
                "loud": True,
                "mode": "b",
                "tags": ["x"],
                "inner": {"key": "k"},
                "extra": {"a": 1},
                "anything": [1, 2.5, {"z": None}],
            },
        )

    def test_errors_worded_as_go(self):
        cases = [
            ("{}", 'args: missing required property "text"'),
            ('{"text":1}', "args.text: must be a string, got number 1"),
            ('{"text":"a","count":"3"}', 'args.count: must be an integer, got string "3"'),
            ('{"text":"a","count":2.5}', "args.count: must be an integer, got number 2.5"),
            ('{"text":"a","count":true}', "args.count: must be an integer, got boolean true"),
            (
                '{"text":"a","count":1e400}',
                "args.count: 1e400 is out of range for a 64-bit integer",
            ),
            (
                '{"text":"a","count":9223372036854775808}',
                "args.count: 9223372036854775808 is out of range for a 64-bit integer",
            ),
            ('{"text":"a","ratio":1e999}', "args.ratio: 1e999 is out of range"),
            ('{"text":"a","loud":1}', "args.loud: must be a boolean, got number 1"),
            ('{"text":"a","mode":"c"}', 'args.mode: must be one of "a", "b", got string "c"'),
            ('{"text":"a","tags":"x"}', 'args.tags: must be an array, got string "x"'),
            ('{"text":"a","tags":[1]}', "args.tags[0]: must be a string, got number 1"),
            ('{"text":"a","inner":{}}', 'args.inner: missing required property "key"'),
            (
                '{"text":"a","extra":{"b-c":"x"}}',
                'args.extra["b-c"]: must be an integer, got string "x"',
            ),
            (
                '{"text":"a","nope":1}',
                'args: unexpected property "nope"; allowed properties are "text", "count", '
                '"ratio", "loud", "mode", "tags", "inner", "extra", "anything"',
            ),
            ("[1]", "args: must be an object, got array"),
            ('{"text":"a"', "args: not valid JSON"),
            ('{"text":"a"} {}', "args: not valid JSON"),
            ('{"text":NaN}', "args: not valid JSON"),
        ]
        for raw, want in cases:
            with self.subTest(raw=raw):
                self.assertIn("tool x__t: arguments: " + want, error_of(self.tool.call(raw)))

    def test_hostile_arguments(self):
        deep = '{"text":"a","anything":' + "[" * 100000 + "]" * 100000 + "}"
        self.assertIn("args: nested too deeply", error_of(self.tool.call(deep)))
        huge = '{"text":"a","count":' + "9" * 10000 + "}"
        self.assertIn("is out of range for a 64-bit integer", error_of(self.tool.call(huge)))
        self.assertIn(
            "args.anything",
            error_of(self.tool.call('{"text":"a","anything":' + "9" * 10000 + "}")),
        )

    def test_at_most_twenty_problems(self):
        t = Tool("x__t", "d", lambda a: a, Args)
        raw = json.dumps({"text": "a", "tags": list(range(50))})
        self.assertEqual(error_of(t.call(raw)).count("must be a string"), 20)

    def test_empty_and_null_are_no_arguments(self):
        t = Tool("x__t", "d", lambda a: "ok", TD)
        for raw in ("", "null", "  "):
            self.assertEqual(t.call(raw), hp.ToolResult('"ok"'))
        self.assertIn(
            "this tool takes no arguments, send {}",
            error_of(Tool("x__t", "d", lambda a: a, Empty).call('{"a":1}')),
        )


class RunTest(unittest.TestCase):
    def test_tool_error_is_its_message(self):
        def run(a: TD):
            raise hp.ToolError("no such file")

        self.assertEqual(error_of(Tool("x__t", "d", run).call("{}")), "no such file")

    def test_exception_is_an_error_result(self):
        def run(a: TD):
            return {}["missing"]

        with self.assertLogs("hookhost_plugin", "ERROR"):
            self.assertEqual(
                error_of(Tool("x__t", "d", run).call("{}")),
                "tool x__t failed: it raised KeyError: 'missing'",
            )

    def test_unencodable_result(self):
        def run(a: TD):
            return {1, 2}

        with self.assertLogs("hookhost_plugin", "ERROR"):
            self.assertIn(
                "tool x__t: its result cannot be encoded as JSON",
                error_of(Tool("x__t", "d", run).call("{}")),
            )

    def test_results(self):
        @dataclass
        class Out:
            n: int

        self.assertEqual(
            Tool("x__t", "d", lambda a: Out(3), TD).call("{}"), hp.ToolResult('{"n":3}')
        )
        self.assertEqual(
            Tool("x__t", "d", lambda a: hp.ToolResult("raw", True), TD).call("{}"),
            hp.ToolResult("raw", True),
        )
        self.assertEqual(Tool("x__t", "d", lambda a: "<é>", TD).call("{}"), hp.ToolResult('"<é>"'))

    def test_context_is_passed_when_asked(self):
        seen = []

        def run(a: TD, ctx):
            seen.append(ctx)
            return None

        Tool("x__t", "d", run).call("{}", "the-ctx")
        self.assertEqual(seen, ["the-ctx"])


class ConfigTest(unittest.TestCase):
    def test_decode_config(self):
        @dataclass
        class Conf:
            policy: str
            strict: bool = False
            limit: int = 3
            names: List[str] = field(default_factory=list)

        c = hp.decode_config({"policy": "p.toml", "names": ["a"]}, Conf)
        self.assertEqual(c, Conf("p.toml", False, 3, ["a"]))
        for cfg, want in [
            ({"policy": "p", "strikt": True}, "unknown key 'strikt'"),
            ({"policy": "p", "strict": "yes"}, "strict: wrong type: got string, want bool"),
            ({"policy": 1}, "policy: wrong type: got number, want string"),
            ({"policy": "p", "limit": True}, "limit: wrong type: got bool, want integer"),
            ({"policy": "p", "names": [1]}, "names[0]: wrong type: got number, want string"),
            ({}, "missing key 'policy'"),
        ]:
            with self.subTest(cfg=cfg):
                with self.assertRaises(hp.ConfigError) as cm:
                    hp.decode_config(cfg, Conf)
                self.assertIn(want, str(cm.exception))


if __name__ == "__main__":
    unittest.main()
