package codec

import (
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/internal/upstream/sampling"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// What every codec's upstream request starts from and ends with.

// Names is the name map of req's tools, which the body sends them by and
// the answer is read with, once req's sampling settings, with s's
// temperature, are known to be ones an upstream takes (sampling.Check).
func Names(req llm.Request, s upstream.Settings) (*toolfmt.NameMap, error) {
	names, err := toolfmt.NewNameMap(toolfmt.SpecNames(req.Tools))
	if err != nil {
		return nil, upstream.Fail("cannot offer the tools", err)
	}
	checked := req
	checked.Temperature = s.TemperatureFor(req)
	if err := sampling.Check(checked); err != nil {
		return nil, upstream.Fail("request not sent", err)
	}
	return names, nil
}

// Tools is req's tools in a protocol's form, as wire writes each.
func Tools[T any](specs []llm.ToolSpec, wire func(llm.ToolSpec) (T, error)) ([]T, error) {
	var out []T
	for _, s := range specs {
		t, err := wire(s)
		if err != nil {
			return nil, upstream.Fail("cannot offer the tools", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Encoded is the upstream.Codec.Body of a protocol whose request is the
// typed body build returns: that body, encoded.
func Encoded[T any](build func(llm.Request, upstream.Settings, bool) (T, *toolfmt.NameMap, error)) func(llm.Request, upstream.Settings, bool) ([]byte, *toolfmt.NameMap, error) {
	return func(req llm.Request, s upstream.Settings, stream bool) ([]byte, *toolfmt.NameMap, error) {
		body, names, err := build(req, s, stream)
		if err != nil {
			return nil, nil, err
		}
		b, err := rawjson.Marshal(body)
		if err != nil {
			return nil, nil, upstream.Fail("cannot encode the request", err)
		}
		return b, names, nil
	}
}
