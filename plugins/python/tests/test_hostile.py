"""The SDK against hostile or unlucky conditions: hung handlers, a host
that stops reading, bad configuration and arguments, missing modules.
In-process tests drive HookStream with the server's own pool
sizes; process tests start a plugin in debug mode (no TLS) and speak to it
with a raw gRPC client, as a host would."""

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import hookhost_plugin as hp
from hookhost_plugin import server
from hookhost_plugin._proto import health_pb2 as healthpb
from hookhost_plugin._proto import plugin_pb2 as pb
from hookhost_plugin._proto import pluginv2_pb2 as pb2
from hookhost_plugin.runtime import Adapted, HookStream

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


class Hanging(hp.Plugin):
    """A provider whose handler ignores its deadline for calls named hang-*."""

    name, version = "hanging", "1.0.0"

    def __init__(self):
        self.entered = []
        self.release = threading.Event()

    def pre_tool_call_can_provide_result(self, call):
        self.entered.append(call.call_id)
        if call.call_id.startswith("hang"):
            self.release.wait(10)  # a handler that hangs
        return hp.ToolResult.json({"ran": call.call_id})

    def transform_tool_result(self, ev):
        return None


class StretchAfterHungStagesTest(unittest.TestCase):
    """A stretch's provide stage must not run once its call is over for the
    host (hookstretch.Run: "A provide stage is never started once ctx has
    ended: a cancelled turn must not run a tool"; the Go server refuses a
    stage started after its stretch returned). 64 stage handlers that
    ignore their deadline fill the stage pool and still count in flight;
    a stream allowing one call more queues the next stretch's provide
    stage, which times out for the host (which then runs the tool
    natively) and must never run in the plugin."""

    def test_provide_stage_never_runs_after_its_call_is_over(self):
        plugin = Hanging()
        sent = []
        lock = threading.Lock()
        done = {}

        def send(m):
            with lock:
                sent.append(m)
                if m.last:
                    done.setdefault(m.id, threading.Event()).set()

        calls = concurrent.futures.ThreadPoolExecutor(server.CALL_WORKERS)
        stages = concurrent.futures.ThreadPoolExecutor(server.STAGE_WORKERS)
        stream = HookStream(
            Adapted(plugin), send, calls, stages, max_in_flight=server.STAGE_WORKERS + 1
        )
        self.addCleanup(stages.shutdown, wait=False)
        self.addCleanup(calls.shutdown, wait=False)
        self.addCleanup(plugin.release.set)

        def stretch(cid, call_id, timeout):
            with lock:
                done[cid] = threading.Event()
            req = pb.ToolCallRequest(name="t", call_id=call_id, arguments=b"{}")
            stream.receive(
                pb2.HostMessage(
                    call=pb2.HookCall(
                        id=cid,
                        stages=[
                            pb2.Stage(
                                hook="pre_tool_call_can_provide_result",
                                timeout_ns=int(timeout * 1e9),
                            ),
                            pb2.Stage(hook="transform_tool_result", timeout_ns=10**9),
                        ],
                        payload=req.SerializeToString(),
                    )
                )
            )

        for i in range(server.STAGE_WORKERS):
            stretch(i + 1, "hang-%d" % i, 1.0)
        for i in range(server.STAGE_WORKERS):
            self.assertTrue(done[i + 1].wait(5), "stretch %d got no last message" % (i + 1))
        # Every hung stretch is over for the host, but its handler still
        # holds a thread: each counts in flight until it returns (a stage
        # that got no thread before its deadline was never started).
        self.assertEqual(len(plugin.entered), server.STAGE_WORKERS, "the stage pool is not full")
        self.assertEqual(stream.in_flight(), len(plugin.entered))

        late = server.STAGE_WORKERS + 1
        stretch(late, "late", 0.2)
        self.assertTrue(done[late].wait(5))
        last = [m for m in sent if m.id == late][-1]
        self.assertEqual(
            pb2.Failure.Kind.Name(last.failure.kind),
            "DEADLINE_EXCEEDED",
            "the late stretch's provide stage was answered, not timed out",
        )
        # The host has given up on the provide stage: it dispatches natively.
        plugin.release.set()
        time.sleep(1.0)
        self.assertNotIn(
            "late",
            plugin.entered,
            "the plugin ran the tool of a call whose provide stage had already "
            "failed with DEADLINE_EXCEEDED (the tool ran twice: here and natively)",
        )
        self.assertEqual(stream.in_flight(), 0, "calls whose handlers returned still count")

    def test_a_full_stream_refuses_calls_while_stage_handlers_hang(self):
        plugin = Hanging()
        sent = []
        got = threading.Event()

        def send(m):
            sent.append(m)
            if m.id == server.STAGE_WORKERS + 1:
                got.set()

        calls = concurrent.futures.ThreadPoolExecutor(server.CALL_WORKERS)
        stages = concurrent.futures.ThreadPoolExecutor(server.STAGE_WORKERS)
        stream = HookStream(Adapted(plugin), send, calls, stages)
        self.addCleanup(stages.shutdown, wait=False)
        self.addCleanup(calls.shutdown, wait=False)
        self.addCleanup(plugin.release.set)
        for i in range(server.STAGE_WORKERS + 1):
            if i == server.STAGE_WORKERS:
                # Every handler has started (and hangs) before the last call.
                deadline = time.monotonic() + 5
                while len(plugin.entered) < i and time.monotonic() < deadline:
                    time.sleep(0.01)
            req = pb.ToolCallRequest(name="t", call_id="hang-%d" % i, arguments=b"{}")
            stage = pb2.Stage(hook="pre_tool_call_can_provide_result", timeout_ns=10**9)
            stream.receive(
                pb2.HostMessage(
                    call=pb2.HookCall(
                        id=i + 1,
                        stages=[stage, pb2.Stage(hook="transform_tool_result", timeout_ns=10**9)],
                        payload=req.SerializeToString(),
                    )
                )
            )
        self.assertTrue(got.wait(5))
        last = [m for m in sent if m.id == server.STAGE_WORKERS + 1][-1]
        self.assertEqual(pb2.Failure.Kind.Name(last.failure.kind), "ERROR")
        self.assertIn("already running %d" % server.STAGE_WORKERS, last.failure.message)


def _start_debug(test: unittest.TestCase, script_body: str, protocols: str):
    """Start a plugin script in debug mode; return (process, socket path).
    The process is killed and its directory removed when the test ends."""
    import shutil

    d = tempfile.mkdtemp(prefix="hostile-")
    test.addCleanup(shutil.rmtree, d, True)
    path = os.path.join(d, "p.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(script_body))
    env = {
        "PYTHONPATH": SRC,
        "HOOKHOST_PLUGIN_DEBUG": "1",
        "PLUGIN_PROTOCOL_VERSIONS": protocols,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PLUGIN_UNIX_SOCKET_DIR": d,
    }
    p = subprocess.Popen(
        [sys.executable, path],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    test.addCleanup(p.wait)
    test.addCleanup(p.kill)
    line = p.stdout.readline().decode()
    if not line.startswith("HOOKHOST_REATTACH_PLUGINS="):
        p.kill()
        raise AssertionError("no reattach line: %r" % line)
    cfg = json.loads(line.split("=", 1)[1].strip().strip("'"))
    (entry,) = cfg.values()
    return p, entry["Addr"]["String"]


def _rss_kib(pid: int) -> int:
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


class V1HungHandlersTest(unittest.TestCase):
    """On protocol version 1, 64 handlers that ignore their deadline (each
    call long given up by the host) fill the hook pool but no gRPC thread:
    the next call is refused at once, and health checks and the
    controller's Shutdown are still answered."""

    def test_health_and_shutdown_survive_hung_v1_handlers(self):
        import grpc

        proc, sock = _start_debug(
            self,
            """
            import os, threading
            import hookhost_plugin as hp

            ENTERED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "entered")

            class P(hp.Plugin):
                name = "hungv1"
                def pre_tool_call(self, call):
                    with open(ENTERED, "a") as f:
                        f.write("x\\n")
                    threading.Event().wait()  # a handler that hangs

            hp.serve(P())
            """,
            "1",
        )
        ch = grpc.insecure_channel("unix:" + sock)
        self.addCleanup(ch.close)
        pre = ch.unary_unary("/hookhost.plugin.v1.Plugin/PreToolCall")
        req = pb.ToolCallRequest(name="t", arguments=b"{}").SerializeToString()
        futs = [pre.future(req, timeout=2) for _ in range(server.MAX_IN_FLIGHT)]
        for f in futs:
            try:
                f.result()
            except grpc.RpcError as exc:
                self.assertEqual(exc.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        with open(os.path.join(os.path.dirname(os.path.dirname(sock)), "entered")) as f:
            self.assertEqual(len(f.readlines()), server.MAX_IN_FLIGHT, "handlers started")
        with self.assertRaises(grpc.RpcError) as full:
            pre(req, timeout=3)
        self.assertEqual(full.exception.code(), grpc.StatusCode.UNKNOWN)
        self.assertIn("already running %d" % server.MAX_IN_FLIGHT, full.exception.details())
        check = ch.unary_unary("/grpc.health.v1.Health/Check")
        try:
            check(healthpb.HealthCheckRequest(service="plugin").SerializeToString(), timeout=3)
        except grpc.RpcError as exc:
            self.fail("health check after hung handlers: %s" % exc.code())
        shutdown = ch.unary_unary("/plugin.GRPCController/Shutdown")
        try:
            shutdown(b"", timeout=3)
        except grpc.RpcError as exc:
            self.fail("Shutdown after hung handlers: %s" % exc.code())


class StalledHostTest(unittest.TestCase):
    """A host that keeps sending calls but stops reading answers: the Go
    server's Send blocks (gRPC flow control), which stops it reading more
    calls, so its memory stays bounded. The Python stream holds at most a
    few answers queued; past them each call's send waits, and once every
    call slot is taken so does the stream's reader: what the plugin holds
    is bounded by its 64 call slots, not by the number of calls sent."""

    def test_memory_stays_bounded_when_the_host_stops_reading(self):
        import grpc

        proc, sock = _start_debug(
            self,
            """
            import hookhost_plugin as hp

            class P(hp.Plugin):
                name = "bigout"
                def transform_llm_output(self, out):
                    return "x" * (1 << 18)

            hp.serve(P())
            """,
            "2",
        )
        time.sleep(0.3)
        before = _rss_kib(proc.pid)
        ch = grpc.insecure_channel("unix:" + sock)
        self.addCleanup(ch.close)
        hooks = ch.stream_stream("/hookhost.plugin.v2.Plugin/Hooks")
        # 1000 answers of 256 KiB: 250 MiB were they all held.
        n = 1000
        sent = threading.Event()
        payload = pb.LlmOutput(text="hi").SerializeToString()

        def requests():
            for i in range(n):
                yield pb2.HostMessage(
                    call=pb2.HookCall(
                        id=i + 1,
                        stages=[pb2.Stage(hook="transform_llm_output", timeout_ns=10**9)],
                        payload=payload,
                    )
                ).SerializeToString()
            sent.set()
            threading.Event().wait(30)  # keep the stream open, never read it

        call = hooks(requests())  # the responses are never read
        self.addCleanup(call.cancel)
        self.assertTrue(sent.wait(20), "the plugin stopped taking calls (flow control)")
        time.sleep(2)
        grown = (_rss_kib(proc.pid) - before) // 1024
        self.assertLess(
            grown,
            100,
            "the plugin's RSS grew by %d MiB holding answers the host does not read" % grown,
        )


class DeepArgumentsTest(unittest.TestCase):
    """Arguments the model nests deeply: the Go SDK decodes them up to
    encoding/json's depth limit, 10000, and answers an error result past
    it; Tool.call, documented to return a ToolResult for any arguments,
    must do the same, on a hook thread too, and never raise
    RecursionError."""

    def test_deep_arguments_decode_as_go_does(self):
        from dataclasses import dataclass
        from typing import Any, Optional

        @dataclass
        class A:
            text: str
            extra: Optional[Any] = None

        t = hp.Tool("t", "d", lambda a: {"ok": True}, A)
        got = {}

        def run():
            # The outer object is one level: n brackets inside it nest n + 1.
            for n in (900, 9999, 10000, 200000):
                raw = '{"text":"a","extra":' + "[" * n + "]" * n + "}"
                try:
                    got[n] = t.call(raw)
                except RecursionError as exc:
                    got[n] = exc

        th = threading.Thread(target=run)
        th.start()
        th.join(60)
        for n in (900, 9999):
            self.assertIsInstance(got[n], hp.ToolResult, "nesting %d" % n)
            self.assertFalse(got[n].is_error, "nesting %d: %s" % (n, got[n].content))
        for n in (10000, 200000):
            self.assertIsInstance(got[n], hp.ToolResult, "nesting %d" % n)
            self.assertTrue(got[n].is_error, "nesting %d" % n)
            self.assertIn(
                "args: not valid JSON: invalid character '[' exceeded max depth", got[n].content
            )


class DecodeConfigStrictTest(unittest.TestCase):
    """decode_config promises to refuse unknown keys and wrong types, naming
    the key ("a misspelt key silently ignored is how a guard lets through
    what it should stop"): Literal values, dict values and dataclasses
    inside a dict, and unions are checked too, and a type it cannot check
    is refused rather than passed through."""

    def test_refuses_what_does_not_fit(self):
        from dataclasses import dataclass, field
        from typing import Dict, Literal

        @dataclass
        class Rule:
            tool: str

        @dataclass
        class Config:
            mode: Literal["block", "warn"] = "block"
            limits: Dict[str, int] = field(default_factory=dict)
            rules: Dict[str, Rule] = field(default_factory=dict)

        for bad in (
            {"mode": "blok"},
            {"limits": {"reads": "ten"}},
            {"rules": {"secrets": {"tol": "read_*"}}},
        ):
            with self.assertRaises(hp.ConfigError, msg="decode_config accepted %r" % bad):
                hp.decode_config(bad, Config)
        with self.assertRaisesRegex(hp.ConfigError, r"rules\.secrets\.tol"):
            hp.decode_config({"rules": {"secrets": {"tol": "read_*"}}}, Config)
        with self.assertRaisesRegex(hp.ConfigError, r"limits\.reads: wrong type"):
            hp.decode_config({"limits": {"reads": "ten"}}, Config)
        good = hp.decode_config(
            {"mode": "warn", "limits": {"reads": 10}, "rules": {"s": {"tool": "read_*"}}}, Config
        )
        self.assertEqual(good.mode, "warn")
        self.assertEqual(good.limits, {"reads": 10})
        self.assertEqual(good.rules, {"s": Rule(tool="read_*")})

    def test_checks_each_side_of_a_union(self):
        from dataclasses import dataclass
        from typing import Union

        @dataclass
        class Config:
            limit: Union[int, str]

        self.assertEqual(hp.decode_config({"limit": 3}, Config).limit, 3)
        self.assertEqual(hp.decode_config({"limit": "3"}, Config).limit, "3")
        with self.assertRaisesRegex(hp.ConfigError, "limit: wrong type: got list"):
            hp.decode_config({"limit": [3]}, Config)

    def test_refuses_a_type_it_cannot_check(self):
        from dataclasses import dataclass
        from typing import Tuple

        @dataclass
        class Config:
            pair: Tuple[int, int]

        with self.assertRaisesRegex(TypeError, "cannot check"):
            hp.decode_config({"pair": [1, 2]}, Config)


class LogLineSizeTest(unittest.TestCase):
    """PROTOCOL.md: the host cuts a stderr line over 32 KiB, and a cut
    JSON line is plain text, logged at DEBUG. The formatter cuts large
    fields (an exception message quoting a payload, a traceback) so that
    an ERROR line stays whole JSON at ERROR."""

    def test_error_line_fits_what_the_host_reads(self):
        import logging

        from hookhost_plugin.log import HclogFormatter

        rec = logging.LogRecord("hookhost_plugin", logging.ERROR, __file__, 1, "boom", (), None)
        rec.hookhost = {"error": "x" * (40 << 10)}
        line = HclogFormatter("p").format(rec)
        self.assertLessEqual(
            len(line.encode()) + 1,
            32 << 10,
            "an ERROR line of %d bytes: the host cuts it and logs it at DEBUG" % len(line),
        )
        entry = json.loads(line)
        self.assertEqual(entry["@level"], "error")
        self.assertEqual(entry["@message"], "boom")
        self.assertTrue(entry["error"].startswith("xxxx"))
        self.assertIn("bytes cut to fit the host's line", entry["error"])

    def test_many_large_fields_and_a_large_message_fit(self):
        import logging

        from hookhost_plugin.log import HclogFormatter

        rec = logging.LogRecord(
            "hookhost_plugin", logging.ERROR, __file__, 1, "é" * (30 << 10), (), None
        )
        rec.hookhost = {"a": "ü" * (20 << 10), "b": ["y" * 1000] * 40, "c": 1}
        line = HclogFormatter("p").format(rec)
        self.assertLessEqual(len(line.encode()) + 1, 32 << 10)
        entry = json.loads(line)
        self.assertEqual((entry["@level"], entry["c"]), ("error", 1))

    def test_short_line_is_untouched(self):
        import logging

        from hookhost_plugin.log import HclogFormatter

        rec = logging.LogRecord("hookhost_plugin", logging.ERROR, __file__, 1, "boom", (), None)
        rec.hookhost = {"error": "x" * 100}
        self.assertEqual(json.loads(HclogFormatter("p").format(rec))["error"], "x" * 100)


class MissingModulesTest(unittest.TestCase):
    """A missing module is explained ("install Debian's python3-grpcio,
    python3-protobuf and python3-cryptography ... its #! line must name
    that interpreter") whichever it is: protobuf, imported by ``import
    hookhost_plugin`` itself (the usual mistake: a venv without
    --system-site-packages, a pyenv interpreter), and cryptography, which
    is no socket problem."""

    def test_missing_protobuf_is_explained(self):
        script = (
            "import sys; sys.path.insert(0, %r)\n"
            "import hookhost_plugin as hp\n"
            "class P(hp.Plugin):\n    name = 'p'\n"
            "hp.serve(P())\n" % SRC
        )
        # -S: no site-packages, so neither grpc nor protobuf is found.
        r = subprocess.run(
            [sys.executable, "-S", "-c", script],
            env={"HOOKHOST_PLUGIN": server.MAGIC_COOKIE_VALUE, "PLUGIN_PROTOCOL_VERSIONS": "2"},
            capture_output=True,
            timeout=30,
        )
        err = r.stderr.decode()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("python3-protobuf", err, "stderr says only:\n" + err[-600:])
        # For the host, an ERROR line: the traceback after it is plain text.
        first = json.loads(err.splitlines()[0])
        self.assertEqual(first["@level"], "error")
        self.assertIn("python3-protobuf", first["@message"])

    def test_missing_cryptography_is_not_a_socket_error(self):
        _, cert_pem, _ = server.server_certificate("host")
        script = (
            "import sys; sys.modules['cryptography'] = None; sys.path.insert(0, %r)\n"
            "import hookhost_plugin as hp\n"
            "class P(hp.Plugin):\n    name = 'p'\n"
            "hp.serve(P())\n" % SRC
        )
        r = subprocess.run(
            [sys.executable, "-c", script],
            env={
                "HOOKHOST_PLUGIN": server.MAGIC_COOKIE_VALUE,
                "PLUGIN_PROTOCOL_VERSIONS": "2",
                "PLUGIN_CLIENT_CERT": cert_pem.decode(),
            },
            capture_output=True,
            timeout=30,
        )
        err = r.stderr.decode()
        self.assertNotIn("cannot listen on its socket", err)
        self.assertIn("python3-cryptography", err)


class HarnessV1DeadlineTest(unittest.TestCase):
    """The harness promises the host's behaviour on either protocol: on
    protocol 1 too, a handler that ignores its deadline fails
    DEADLINE_EXCEEDED when it passes, as the host reports it, instead of
    hanging the test or counting a late answer as a success."""

    def test_v1_call_past_its_deadline_fails_instead_of_hanging(self):
        from hookhost_plugin.testing import CallFailed, Harness

        release = threading.Event()
        self.addCleanup(release.set)

        class Stuck(hp.Plugin):
            name = "stuck"

            def pre_tool_call(self, call):
                release.wait(30)  # ignores its deadline

        got = []

        def run():
            h = Harness(Stuck(), protocol=1)
            try:
                h.call("pre_tool_call", hp.ToolCallRequest(name="t", arguments="{}"), timeout=0.2)
                got.append("answered")
            except CallFailed as exc:
                got.append(exc.kind)

        th = threading.Thread(target=run, daemon=True)
        th.start()
        th.join(3)
        self.assertEqual(
            got, ["DEADLINE_EXCEEDED"], "Harness(protocol=1).call still blocked after 3 s"
        )

    def test_v1_call_answered_in_time_succeeds(self):
        from hookhost_plugin.testing import Harness

        class Quick(hp.Plugin):
            name = "quick"

            def pre_tool_call(self, call):
                return hp.block("no")

        h = Harness(Quick(), protocol=1)
        d = h.call("pre_tool_call", hp.ToolCallRequest(name="t", arguments="{}"), timeout=2)
        self.assertEqual(d.block.message, "no")


class MatcherSyntaxTest(unittest.TestCase):
    """Matchers are Go's path.Match globs (PROTOCOL.md, Describe), which
    the host applies; the SDK applies them the same way (not as fnmatch,
    for which "[^x]" is "^ or x"), so that the harness says a hook is
    asked exactly where the host asks it."""

    # Each answer as Go's path.Match gives it (false for ErrBadPattern).
    GO = [
        ("p__[^x]*", "p__echo", True),
        ("p__[^x]*", "p__xecho", False),
        ("p__[^x]*", "^x", False),
        ("[^a-c]x", "dx", True),
        ("[^a-c]x", "bx", False),
        ("[^a-c]x", "^x", True),
        ("[a-c]x", "bx", True),
        ("[\\]]", "]", True),
        ("\\[x", "[x", True),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("a?c", "abc", True),
        ("x/*", "x/y", True),
        ("x/*", "x/y/z", False),
        ("*", "x/y", False),
        ("*z", "a/z", False),
        ("[]a]", "]", False),
        ("[^]", "^", False),
        ("[a", "a", False),
        ("[a-]", "a", False),
        ("[-a]", "-", False),
        ("a\\", "a", False),
    ]

    def test_path_match_is_gos(self):
        from hookhost_plugin.runtime import path_match

        for pattern, name, want in self.GO:
            with self.subTest(pattern=pattern, name=name):
                self.assertEqual(path_match(pattern, name), want)

    def test_harness_applies_matchers_as_the_host(self):
        from hookhost_plugin.testing import Harness

        class P(hp.Plugin):
            name = "p"
            matchers = ["p__[^x]*"]

            def pre_tool_call(self, call):
                return hp.block("asked")

        h = Harness(P())
        self.addCleanup(h.close)
        # path.Match("p__[^x]*", "p__echo") is true: the host asks.
        self.assertTrue(h.subscribed("pre_tool_call", "p__echo"))


class TypedToolCancelledTest(unittest.TestCase):
    """README: "hp.Cancelled (from ctx.check()) ... is reported as
    DEADLINE_EXCEEDED or CANCELLED". In a typed tool it is the call
    ending, as a Go tool returning ctx.Err(): no ERROR with a traceback on
    every cancelled or timed-out call. A tool's own bug still is one."""

    def test_cancelled_tool_is_not_an_error_log(self):
        from dataclasses import dataclass

        @dataclass
        class A:
            text: str = ""

        def run(args, ctx):
            ctx.check()
            return {"ok": True}

        t = hp.Tool("t", "d", run, A)
        ctx = hp.Context("pre_tool_call_can_provide_result", 5)
        ctx.cancel("cancelled")
        with self.assertNoLogs("hookhost_plugin", level="ERROR"):
            r = t.call("{}", ctx)
        self.assertTrue(r.is_error)
        self.assertIn("cancelled", r.content)

    def test_a_bug_in_a_live_call_is_still_an_error_log(self):
        from dataclasses import dataclass

        @dataclass
        class A:
            text: str = ""

        def run(args, ctx):
            raise KeyError("oops")

        t = hp.Tool("t", "d", run, A)
        with self.assertLogs("hookhost_plugin", level="ERROR"):
            r = t.call("{}", hp.Context("pre_tool_call_can_provide_result", 5))
        self.assertIn("it raised KeyError", r.content)


class LogBeforeServeTest(unittest.TestCase):
    """A plugin is constructed before serve() (hp.serve(Guard())), and
    loads its data there or at import. Started by the host (the magic
    cookie set), what it logs then is an hclog JSON line at its level,
    INFO included, as after serve()."""

    def test_warning_in_constructor_is_json(self):
        _, cert_pem, _ = server.server_certificate("host")
        script = (
            "import sys; sys.path.insert(0, %r)\n"
            "import hookhost_plugin as hp\n"
            "class P(hp.Plugin):\n"
            "    name = 'p'\n"
            "    def __init__(self):\n"
            "        hp.logger().warn('policy file missing, allowing everything')\n"
            "        hp.logger().info('policy loaded')\n"
            "hp.serve(P())\n" % SRC
        )
        d = tempfile.mkdtemp(prefix="hostile-")
        self.addCleanup(__import__("shutil").rmtree, d, True)
        p = subprocess.Popen(
            [sys.executable, "-c", script],
            env={
                "HOOKHOST_PLUGIN": server.MAGIC_COOKIE_VALUE,
                "PLUGIN_PROTOCOL_VERSIONS": "2",
                "PLUGIN_CLIENT_CERT": cert_pem.decode(),
                "PLUGIN_UNIX_SOCKET_DIR": d,
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        p.stdout.readline()  # the handshake
        first = p.stderr.readline().decode()
        try:
            entry = json.loads(first)
        except ValueError:
            self.fail("the constructor's warning reached stderr as plain text: %r" % first)
        self.assertEqual(entry["@level"], "warn")
        second = json.loads(p.stderr.readline().decode())
        self.assertEqual((second["@level"], second["@message"]), ("info", "policy loaded"))


class ModifyNotJSONTest(unittest.TestCase):
    """README, Failures: "an answer ... that cannot be encoded (modified
    arguments that are not JSON), is an ERROR naming the problem": text
    that is not JSON, or JSON that is not an object, fails the call in the
    plugin, on either protocol, rather than reaching the host."""

    def test_modify_with_text_that_is_not_json_fails(self):
        from hookhost_plugin.testing import CallFailed, Harness

        class P(hp.Plugin):
            name = "p"

            def pre_tool_call(self, call):
                return hp.modify(json.loads(call.arguments)["answer"])

        for proto in (1, 2):
            h = Harness(P(), protocol=proto)
            self.addCleanup(h.close)
            for bad, why in (("not json", "not valid JSON"), ("[1]", "want an object")):
                with self.assertRaises(CallFailed, msg="protocol %d" % proto) as failed:
                    h.pre_tool_call("t", {"answer": bad})
                self.assertEqual(failed.exception.kind, "ERROR")
                self.assertIn(why, str(failed.exception))
            d = h.pre_tool_call("t", {"answer": '{"a": 1}'})
            self.assertEqual(json.loads(d.modified_args), {"a": 1})


if __name__ == "__main__":
    unittest.main()
