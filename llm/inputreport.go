package llm

import "context"

type inputReportKey struct{}

// WithInputReport returns a context under which a streaming call (Stream,
// or Forward with onText) reports the call's input tokens through report
// as soon as the upstream announces them, before any of the answer's text:
// an Anthropic stream states them in its message_start. A gateway whose
// client's protocol also announces them when its message starts can then
// send the real count instead of an estimate. report is called at most
// once per call, from the goroutine that made it, and only with a count
// above 0; a provider whose protocol reports usage only at the end of the
// answer (OpenAI's) never calls it, and the caller has the count from the
// Response.
func WithInputReport(ctx context.Context, report func(inputTokens int)) context.Context {
	return context.WithValue(ctx, inputReportKey{}, report)
}

// ReportInput hands n to the function WithInputReport put in ctx, if any,
// when n is above 0. Providers call it.
func ReportInput(ctx context.Context, n int) {
	if f, ok := ctx.Value(inputReportKey{}).(func(int)); ok && f != nil && n > 0 {
		f(n)
	}
}
