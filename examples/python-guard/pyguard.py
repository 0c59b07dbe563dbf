#!/usr/bin/python3
"""pyguard: a guard that blocks tool calls by a policy file, written with
the Python SDK (hookhost_plugin). See README.md.

The interpreter is absolute because the host starts plugins with no PATH;
point it at a virtual environment's python when the SDK is pip-installed
there.
"""

import fnmatch
import json
import os
import re
import sys
import tomllib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

# Inside the repository the SDK may not be installed: import it from
# plugins/python/src, found from this file, when it is not. A plugin of
# one's own pip-installs hookhost-plugin instead. Writing no bytecode keeps
# __pycache__ out of the source tree.
sys.dont_write_bytecode = True
try:
    import hookhost_plugin as hp
except ImportError:
    sys.path.insert(
        0,
        os.path.join(
            os.path.dirname(os.path.abspath(__file__)),
            os.pardir,
            os.pardir,
            "plugins",
            "python",
            "src",
        ),
    )
    import hookhost_plugin as hp

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MESSAGE = "blocked by pyguard: {reason} (rule {rule}, tool {tool})"
RULE_KEYS = {"name", "tool", "args_match", "action", "reason"}
TOP_KEYS = {"default", "message", "rule"}


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the file and
    the line or key at fault."""


@dataclass(frozen=True)
class Rule:
    """One rule: calls of tools matching ``tool`` (a glob) whose arguments
    match ``args_match`` (when set) get ``action``."""

    index: int
    name: str
    tool: str
    args_match: Optional["re.Pattern[str]"]
    action: str
    reason: str


@dataclass(frozen=True)
class Policy:
    """The rules, in order (the first that matches decides), and what calls
    no rule matches get."""

    rules: List[Rule]
    default: str
    message: str

    def decide(self, tool: str, arguments: str) -> Optional[Rule]:
        """The rule that applies, or None for the default."""
        canonical = canonical_args(arguments)
        for r in self.rules:
            if fnmatch.fnmatchcase(tool, r.tool) and (
                r.args_match is None or r.args_match.search(canonical)
            ):
                return r
        return None

    def block_message(self, tool: str, rule: Optional[Rule]) -> str:
        if rule is None:
            return self.message.format(
                reason='no rule allows it (default = "block")', rule="default", tool=tool
            )
        return self.message.format(reason=rule.reason or rule.name, rule=rule.name, tool=tool)


def canonical_args(arguments: str) -> str:
    """The arguments as compact JSON with sorted keys, re-encoded so that a
    model cannot dodge "secret" by writing "\\u0073ecret"."""
    try:
        return json.dumps(
            json.loads(arguments or "{}"),
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
        )
    except ValueError:
        return arguments


def load_policy(path: str) -> Policy:
    """Read and check a policy file; raises PolicyError naming what is wrong."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise PolicyError("policy %s cannot be read: %s" % (path, exc.strerror or exc)) from None
    except tomllib.TOMLDecodeError as exc:
        # tomllib says where: "... (at line 3, column 7)".
        raise PolicyError("policy %s is not valid TOML: %s" % (path, exc)) from None
    for key in data:
        if key not in TOP_KEYS:
            raise PolicyError(
                "policy %s: unknown key %r (known keys: default, message, rule)" % (path, key)
            )
    default = data.get("default", "allow")
    if default not in ("allow", "block"):
        raise PolicyError('policy %s: default = %r, want "allow" or "block"' % (path, default))
    message = data.get("message", DEFAULT_MESSAGE)
    if not isinstance(message, str):
        raise PolicyError("policy %s: message must be a string" % path)
    try:
        message.format(reason="", rule="", tool="")
    except (KeyError, IndexError, ValueError) as exc:
        raise PolicyError(
            "policy %s: message %r: placeholders are {reason}, {rule} and {tool} (%s)"
            % (path, message, exc)
        ) from None
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list):
        raise PolicyError("policy %s: rule must be an array of tables ([[rule]])" % path)
    rules = []
    for i, r in enumerate(raw_rules):
        where = "policy %s: rule[%d]" % (path, i)
        if not isinstance(r, dict):
            raise PolicyError("%s must be a table" % where)
        for key in r:
            if key not in RULE_KEYS:
                raise PolicyError(
                    "%s: unknown key %r (known keys: %s)"
                    % (where, key, ", ".join(sorted(RULE_KEYS)))
                )
        tool = r.get("tool")
        if not isinstance(tool, str) or not tool:
            raise PolicyError(
                '%s: tool is required: a tool name or a glob such as "read_*"' % where
            )
        pattern = None
        if "args_match" in r:
            if not isinstance(r["args_match"], str):
                raise PolicyError("%s: args_match must be a string" % where)
            try:
                pattern = re.compile(r["args_match"])
            except re.error as exc:
                raise PolicyError(
                    "%s: args_match %r is not a valid regular expression: %s"
                    % (where, r["args_match"], exc)
                ) from None
        action = r.get("action", "block")
        if action not in ("allow", "block"):
            raise PolicyError('%s: action = %r, want "allow" or "block"' % (where, action))
        name = r.get("name", "rule[%d]" % i)
        reason = r.get("reason", "")
        if not isinstance(name, str) or not isinstance(reason, str):
            raise PolicyError("%s: name and reason must be strings" % where)
        rules.append(Rule(i, name, tool, pattern, action, reason))
    return Policy(rules, default, message)


@dataclass
class Config:
    """[plugins.entries.pyguard.config]"""

    policy: str


@dataclass
class ExplainArgs:
    tool: str
    arguments: Any = None


class PyGuard(hp.Plugin):
    """Blocks tool calls by the policy; explains its decisions."""

    name, version = "pyguard", "1.0.0"
    # Declares the config's keys to the host, which refuses any other at
    # start with its line, and decodes the table into Config for configure.
    config_type = Config

    def __init__(self) -> None:
        self.policy = Policy([], "allow", DEFAULT_MESSAGE)

    def configure(self, cfg: Config) -> None:
        path = cfg.policy if os.path.isabs(cfg.policy) else os.path.join(HERE, cfg.policy)
        self.policy = load_policy(path)
        hp.logger().info(
            "policy loaded", path=path, rules=len(self.policy.rules), default=self.policy.default
        )

    def pre_tool_call(self, call: hp.ToolCallRequest) -> Optional[hp.PreToolCallDecision]:
        rule = self.policy.decide(call.name, call.arguments)
        action = rule.action if rule is not None else self.policy.default
        if action == "block":
            return hp.block(self.policy.block_message(call.name, rule))
        return None  # no opinion: the call goes on

    @hp.tool(
        "pyguard__explain",
        "Say which pyguard rule applies to a tool call, and whether it would be blocked.",
    )
    def explain(self, args: ExplainArgs) -> Dict[str, Any]:
        arguments = (
            args.arguments if isinstance(args.arguments, str) else json.dumps(args.arguments or {})
        )
        rule = self.policy.decide(args.tool, arguments)
        action = rule.action if rule is not None else self.policy.default
        out: Dict[str, Any] = {
            "tool": args.tool,
            "action": action,
            "rule": rule.name if rule is not None else None,
            "reason": rule.reason if rule is not None else "default",
        }
        if action == "block":
            out["message"] = self.policy.block_message(args.tool, rule)
        return out


if __name__ == "__main__":
    hp.serve(PyGuard())
