package sdk_test

import (
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/dispatch/schema"
)

type float32Bounds struct {
	Ratio float32 `json:"ratio" minimum:"0.7" maximum:"0.9"`
}

// a float32 field's bound is compared after the value is rounded to
// float32, but the host compares the decimal exactly. The host accepts a
// value equal to the bound, and the tool refuses it ("must be <= 0.9, got 0.9").
func TestFloat32BoundsAgreeWithHost(t *testing.T) {
	tool, _ := echoTool[float32Bounds]("t__f32")
	for _, args := range []string{`{"ratio":0.7}`, `{"ratio":0.9}`, `{"ratio":0.8}`} {
		hostErr := schema.Validate(tool.Spec().InputSchema, json.RawMessage(args))
		r := tool.Call(t.Context(), json.RawMessage(args))
		if (hostErr == nil) == r.IsError {
			t.Errorf("%s: host validation says %v, the tool answers %s", args, hostErr, r.Content)
		}
	}
}

type float32Default struct {
	Ratio *float32 `json:"ratio,omitempty" maximum:"0.1" default:"0.1"`
}

// a default equal to its own maximum makes NewTool panic on a float32.
func TestFloat32DefaultAtBound(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("NewTool panicked on a default equal to the maximum: %v", p)
		}
	}()
	echoTool[float32Default]("t__f32d")
}

type intArg struct {
	N int `json:"n"`
}

// integerDigits overflows `exp += e` for an exponent near the int
// range: len(digits)+exp wraps negative, the 21-digit guard is skipped and
// strings.Repeat("0", exp) panics in decodeArgs, outside runRecovered. The
// host's schema accepts 1e9223372036854775807 for an int (no bounds on a
// 64-bit int), so a model's call reaches the plugin and fails as a plugin
// error instead of an argument error result.
func TestHugeExponentIsAnArgumentError(t *testing.T) {
	tool, _ := echoTool[intArg]("t__n")
	for _, args := range []string{`{"n":1e9223372036854775807}`, `{"n":1.5e-9223372036854775808}`} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: Tool.Call panicked: %v", args, p)
				}
			}()
			if r := tool.Call(t.Context(), json.RawMessage(args)); !r.IsError {
				t.Errorf("%s: want an error result, got %s", args, r.Content)
			}
		}()
	}
}
