"""The gRPC services as the host reaches them, in-process over a unix
socket without TLS: version 1's status codes and panic trailer, version
2's stream, health, and a shutdown that ends open streams."""

import concurrent.futures
import os
import shutil
import tempfile
import threading
import unittest

import grpc

import hookhost_plugin as hp
from hookhost_plugin._proto import grpc_controller_pb2 as ctlpb
from hookhost_plugin._proto import health_pb2 as healthpb
from hookhost_plugin._proto import plugin_pb2 as pb
from hookhost_plugin._proto import pluginv2_pb2 as pb2
from hookhost_plugin.runtime import Adapted
from hookhost_plugin.server import controller_service, health_service, v1_service, v2_service


class Plugin(hp.Plugin):
    name = "g"

    def pre_tool_call(self, call):
        if call.name == "exit":
            raise SystemExit(2)
        if call.name == "error":
            raise hp.HookError("refused")
        return hp.block("no") if call.name == "block" else None


class Optional_(hp.Plugin):
    """Serves transform_llm_output only when its config says "on"."""

    name = "optional"

    def configure(self, config):
        self.on = config.get("on")

    def unserved(self):
        if self.on == "broken":
            return [3]
        return [] if self.on else ["transform_llm_output"]

    def pre_tool_call(self, call):
        return None

    def transform_llm_output(self, out):
        return out.text


class Server:
    def __init__(self, version, plugin=None):
        self.dir = tempfile.mkdtemp()
        self.pool = concurrent.futures.ThreadPoolExecutor(8)
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(8))
        p = Adapted(plugin if plugin is not None else Plugin())
        self.close_streams = lambda: None
        if version == 2:
            service, self.close_streams = v2_service(grpc, p, self.pool, self.pool)
        else:
            service = v1_service(grpc, p, self.pool)
        self.stopped = threading.Event()

        def stop(reason):
            self.close_streams()
            self.server.stop(grace=1).wait()
            self.stopped.set()

        self.server.add_generic_rpc_handlers(
            [service, health_service(grpc), controller_service(grpc, stop)]
        )
        self.sock = os.path.join(self.dir, "s.sock")
        self.server.add_insecure_port("unix:" + self.sock)
        self.server.start()
        self.channel = grpc.insecure_channel("unix:" + self.sock)

    def unary(self, method, req, resp):
        return self.channel.unary_unary(
            method, request_serializer=req.SerializeToString, response_deserializer=resp.FromString
        )

    def close(self):
        self.channel.close()
        self.server.stop(0).wait()
        self.pool.shutdown(wait=False)
        shutil.rmtree(self.dir, ignore_errors=True)


class V1Test(unittest.TestCase):
    def setUp(self):
        self.s = Server(1)
        self.addCleanup(self.s.close)
        self.pre = self.s.unary(
            "/hookhost.plugin.v1.Plugin/PreToolCall", pb.ToolCallRequest, pb.PreToolCallResponse
        )

    def test_answers(self):
        self.assertEqual(self.pre(pb.ToolCallRequest(name="block")).block.message, "no")
        self.assertFalse(self.pre(pb.ToolCallRequest(name="x")).HasField("block"))
        # A hook the plugin does not serve: no opinion, as the Go SDK answers.
        tr = self.s.unary(
            "/hookhost.plugin.v1.Plugin/TransformLlmOutput", pb.LlmOutput, pb.TextResponse
        )
        self.assertFalse(tr(pb.LlmOutput(text="a")).HasField("text"))

    def test_error_is_unknown(self):
        with self.assertRaises(grpc.RpcError) as cm:
            self.pre(pb.ToolCallRequest(name="error"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNKNOWN)
        self.assertEqual(cm.exception.details(), "refused")

    def test_panic_is_internal_with_the_trailer(self):
        with self.assertRaises(grpc.RpcError) as cm:
            self.pre(pb.ToolCallRequest(name="exit"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INTERNAL)
        self.assertIn(("hookhost-failure", "panic"), tuple(cm.exception.trailing_metadata()))

    def test_undecodable_request(self):
        raw = self.s.channel.unary_unary("/hookhost.plugin.v1.Plugin/PreToolCall")
        with self.assertRaises(grpc.RpcError) as cm:
            raw(b"\xff\xff\xff")
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)

    def test_health(self):
        check = self.s.unary(
            "/grpc.health.v1.Health/Check",
            healthpb.HealthCheckRequest,
            healthpb.HealthCheckResponse,
        )
        self.assertEqual(
            check(healthpb.HealthCheckRequest(service="plugin")).status,
            healthpb.HealthCheckResponse.SERVING,
        )
        with self.assertRaises(grpc.RpcError) as cm:
            check(healthpb.HealthCheckRequest(service="other"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)


class V2Test(unittest.TestCase):
    def setUp(self):
        self.s = Server(2)
        self.addCleanup(self.s.close)

    def test_stream_and_shutdown(self):
        hooks = self.s.channel.stream_stream(
            "/hookhost.plugin.v2.Plugin/Hooks",
            request_serializer=pb2.HostMessage.SerializeToString,
            response_deserializer=pb2.PluginMessage.FromString,
        )
        more = threading.Event()

        def send():
            payload = pb.ToolCallRequest(name="block").SerializeToString()
            yield pb2.HostMessage(
                call=pb2.HookCall(
                    id=7,
                    stages=[pb2.Stage(hook="pre_tool_call", timeout_ns=10**9)],
                    payload=payload,
                )
            )
            yield pb2.HostMessage(cancel=pb2.Cancel(id=99))  # unknown: ignored
            more.wait(10)  # the host keeps its stream open

        responses = hooks(send())
        first = next(responses)
        self.assertEqual((first.id, first.stage, first.last), (7, 0, True))
        self.assertEqual(pb.PreToolCallResponse.FromString(first.answer).block.message, "no")

        # Shutdown answers, then the open stream ends at once rather than
        # holding the graceful stop for its whole grace.
        shutdown = self.s.unary("/plugin.GRPCController/Shutdown", ctlpb.Empty, ctlpb.Empty)
        shutdown(ctlpb.Empty())
        self.assertTrue(self.s.stopped.wait(0.9), "the stop waited out its grace")
        with self.assertRaises(StopIteration):
            next(responses)
        more.set()


class ConfigureTest(unittest.TestCase):
    """Configure's answer names the hooks the plugin does not serve as
    configured, over both versions; a broken unserved() fails the call."""

    def test_unserved_hooks(self):
        for version in (1, 2):
            for on, want in (("", ["transform_llm_output"]), ("yes", []), ("broken", None)):
                with self.subTest(version=version, on=on):
                    s = Server(version, Optional_())
                    self.addCleanup(s.close)
                    configure = s.unary(
                        "/hookhost.plugin.v%d.Plugin/Configure" % version,
                        pb.ConfigureRequest,
                        pb.ConfigureResponse,
                    )
                    req = pb.ConfigureRequest(config_json=b'{"on": "%s"}' % on.encode())
                    if want is None:
                        with self.assertRaises(grpc.RpcError) as cm:
                            configure(req)
                        self.assertEqual(cm.exception.code(), grpc.StatusCode.INTERNAL)
                        self.assertEqual(
                            cm.exception.details(),
                            "unserved() must return hook names (strings), got int 3",
                        )
                    else:
                        self.assertEqual(list(configure(req).unserved_hooks), want)


if __name__ == "__main__":
    unittest.main()
