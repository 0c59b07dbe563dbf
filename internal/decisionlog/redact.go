package decisionlog

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/hookhost/hookhost/internal/redact"
)

// Redactor blanks secrets out of what the log keeps: the secrets it is
// given (the API keys hookhost holds), the values of fields whose names
// say they hold one (authorization, api_key, token, password, ...), and
// strings that have the shape of a credential (a bearer token, a provider
// key). It errs towards blanking: a log is read by more people than the
// ones who may see a key.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a Redactor for secrets; empty ones are ignored.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if s = strings.TrimSpace(s); s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// secretField matches a JSON member whose name says it holds a secret,
// written plainly or inside a JSON string (a tool's arguments quoted in a
// message), with its string value.
var secretField = regexp.MustCompile(`(?i)(\\?"(?:authorization|proxy[-_]authorization|x[-_]api[-_]key|api[-_]?key|access[-_]?token|refresh[-_]?token|id[-_]?token|auth[-_]?token|bearer[-_]?token|token|secret|client[-_]?secret|password|passwd)\\?"\s*:\s*)(\\?")(?:[^"\\]|\\[^"])*?(\\?")`)

// secretShape matches strings shaped like credentials wherever they are.
var secretShape = regexp.MustCompile(`(?i)\bbearer\s+[a-z0-9._~+/=-]{8,}|\bsk-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{30,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{30,}`)

// Bytes redacts b in place where it can and returns the result.
func (r *Redactor) Bytes(b []byte) []byte {
	redact.Mask(b, r.secrets...)
	b = secretField.ReplaceAll(b, []byte(`${1}${2}`+redact.Marker+`${3}`))
	return secretShape.ReplaceAllFunc(b, func(m []byte) []byte {
		if len(m) > 6 && strings.EqualFold(string(m[:6]), "bearer") {
			return []byte("Bearer " + redact.Marker)
		}
		return []byte(redact.Marker)
	})
}

// String is Bytes for a string.
func (r *Redactor) String(s string) string { return string(r.Bytes([]byte(s))) }

// JSON is v as JSON, redacted; a value that cannot be marshalled is
// recorded as a string saying so, so that the entry stays valid JSON.
func (r *Redactor) JSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal("unrecordable: " + err.Error())
	}
	return r.Bytes(b)
}
