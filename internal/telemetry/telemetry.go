// Package telemetry exports hookhost's traces over OTLP/HTTP when the
// standard OpenTelemetry variables ask for it: a span per gateway request
// or chat turn, a child per model call and tool call named and described
// by the GenAI semantic conventions, and a child per plugin hook call
// saying which plugin decided what, how fast, and how a failure failed.
//
// It is off unless OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp is set;
// off, every function here is a no-op that allocates nothing worth
// measuring. Prompts, answers, tool arguments and results, and hook
// payloads stay out of spans unless content is included ([trace]
// include_content = true).
package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// Attribute names of hookhost's own (the GenAI ones are the semantic
// conventions').
const (
	AttrPlugin      = "hookhost.plugin"
	AttrHook        = "hookhost.hook"
	AttrDecision    = "hookhost.decision"
	AttrLatencyMS   = "hookhost.latency_ms"
	AttrFailureKind = "hookhost.failure_kind"
	AttrRequestID   = "hookhost.request_id"
	AttrSessionID   = "hookhost.session_id"
	AttrIteration   = "hookhost.iteration"
	AttrToolPath    = "hookhost.tool.path"
	AttrAnsweredBy  = "hookhost.tool.answered_by"
	AttrHookInput   = "hookhost.hook.input"
	AttrHookAnswer  = "hookhost.hook.answer"
)

// state is what Setup decided; nil means off.
type state struct {
	tracer  trace.Tracer
	content bool
}

var current atomic.Pointer[state]

// Enabled reports whether spans are being exported.
func Enabled() bool { return current.Load() != nil }

// Wanted reports whether the environment asks for traces.
func Wanted(getenv func(string) string) bool {
	switch strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup starts exporting when the environment asks for it (Wanted); the
// exporter reads the standard OTEL_EXPORTER_OTLP_* variables itself. The
// returned shutdown flushes what is pending and stops; it is a no-op when
// Setup did nothing. includeContent puts prompts, answers and payloads in
// the spans.
func Setup(ctx context.Context, getenv func(string) string, version string, includeContent bool) (shutdown func(context.Context) error, err error) {
	if !Wanted(getenv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: the OTLP exporter: %w (check the OTEL_EXPORTER_OTLP_* variables)", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", serviceName(getenv)),
		attribute.String("service.version", version),
	))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	current.Store(&state{tracer: tp.Tracer("github.com/hookhost/hookhost"), content: includeContent})
	return func(ctx context.Context) error {
		current.Store(nil)
		return tp.Shutdown(ctx)
	}, nil
}

func serviceName(getenv func(string) string) string {
	if n := getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return "hookhost"
}

var noSpan = noop.Span{}

// start begins a span under ctx's, or returns ctx and a no-op span when
// off.
func start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	st := current.Load()
	if st == nil {
		return ctx, noSpan
	}
	return st.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

func content() bool {
	st := current.Load()
	return st != nil && st.content
}

// StartRequest begins the span of one gateway request or chat turn.
func StartRequest(ctx context.Context, name, requestID string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, noSpan
	}
	return start(ctx, name, trace.SpanKindServer, append(attrs, attribute.String(AttrRequestID, requestID))...)
}

// StartModelCall begins a model call's span, named "chat MODEL" as the
// GenAI conventions name an inference.
func StartModelCall(ctx context.Context, sessionID string, iteration int, req hooks.ModelRequest) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, noSpan
	}
	ctx, span := start(ctx, "chat "+req.Model, trace.SpanKindClient,
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", req.Model),
		attribute.String(AttrSessionID, sessionID),
		attribute.Int(AttrIteration, iteration),
	)
	if req.MaxTokens > 0 {
		span.SetAttributes(attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if req.Temperature != nil {
		span.SetAttributes(attribute.Float64("gen_ai.request.temperature", *req.Temperature))
	}
	if content() {
		span.SetAttributes(attribute.String("gen_ai.input.messages", jsonText(req.Messages)))
		if req.System != "" {
			span.SetAttributes(attribute.String("gen_ai.system_instructions", req.System))
		}
	}
	return ctx, span
}

// EndModelCall ends a model call's span with what came back.
func EndModelCall(span trace.Span, resp hooks.ModelResponse, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.String("gen_ai.response.model", resp.Model),
		attribute.Int("gen_ai.usage.input_tokens", resp.Usage.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", resp.Usage.OutputTokens),
	)
	if resp.StopReason != "" {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(resp.StopReason)}))
	}
	if content() && err == nil {
		span.SetAttributes(attribute.String("gen_ai.output.messages", jsonText([]hooks.Message{resp.Message})))
	}
	fail(span, err)
	span.End()
}

// StartToolCall begins a tool call's span, "execute_tool NAME".
func StartToolCall(ctx context.Context, c hooks.ToolCall) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, noSpan
	}
	ctx, span := start(ctx, "execute_tool "+c.Name, trace.SpanKindInternal,
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", c.Name),
		attribute.String("gen_ai.tool.call.id", c.ID),
	)
	if content() {
		span.SetAttributes(attribute.String("gen_ai.tool.call.arguments", string(c.Arguments)))
	}
	return ctx, span
}

// EndToolCall ends a tool call's span with its outcome.
func EndToolCall(span trace.Span, out dispatch.Outcome) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(AttrToolPath, string(out.Path)))
	if out.AnsweredBy != "" {
		span.SetAttributes(attribute.String(AttrAnsweredBy, out.AnsweredBy))
	}
	if content() {
		span.SetAttributes(attribute.String("gen_ai.tool.call.result", out.Result.Content))
	}
	if out.Result.IsError {
		span.SetStatus(codes.Error, "the tool call ended in an error result")
	}
	span.End()
}

// HookCall records one plugin hook call as a span under ctx's, its times
// the call's own. It is a hookbus.Config.OnCall.
func HookCall(ctx context.Context, c hookbus.CallRecord) {
	st := current.Load()
	if st == nil {
		return
	}
	decision := "answer"
	switch {
	case c.Kind != hookbus.KindNone:
		decision = c.Kind.String()
	case c.Hook.Observer():
		decision = "delivered"
	case c.Answer == nil:
		decision = "nil"
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrPlugin, c.Plugin),
		attribute.String(AttrHook, string(c.Hook)),
		attribute.String(AttrDecision, decision),
		attribute.Float64(AttrLatencyMS, float64(c.Latency.Microseconds())/1000),
	}
	if c.RequestID != "" {
		attrs = append(attrs, attribute.String(AttrRequestID, c.RequestID))
	}
	if c.Kind != hookbus.KindNone {
		attrs = append(attrs, attribute.String(AttrFailureKind, c.Kind.String()))
	}
	if st.content {
		attrs = append(attrs, attribute.String(AttrHookInput, jsonText(c.Payload)))
		if c.Answer != nil {
			attrs = append(attrs, attribute.String(AttrHookAnswer, jsonText(c.Answer)))
		}
	}
	_, span := st.tracer.Start(ctx, "hook "+string(c.Hook), trace.WithTimestamp(c.Start), trace.WithAttributes(attrs...))
	if c.Kind != hookbus.KindNone && c.Kind != hookbus.KindCancelled {
		msg := c.Kind.String()
		if c.Err != nil {
			msg += ": " + c.Err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(c.Start.Add(c.Latency)))
}

// EndRequest ends a request's span; status is the HTTP status, 0 for a
// chat turn.
func EndRequest(span trace.Span, status int, err error) {
	if !span.IsRecording() {
		return
	}
	if status > 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, fmt.Sprintf("HTTP %d", status))
		}
	}
	fail(span, err)
	span.End()
}

func fail(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unrecordable: %v", err)
	}
	return string(b)
}
