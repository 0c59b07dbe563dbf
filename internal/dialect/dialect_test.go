package dialect

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestFieldsReturnsTheTopLevelFieldsRaw(t *testing.T) {
	top, err := Fields([]byte(`{"model":"m", "n" : [1, 2]}`), `{"model":"m"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(top) != 2 || string(top["model"]) != `"m"` || string(top["n"]) != `[1, 2]` {
		t.Fatalf("Fields = %q, want model and n as sent", top)
	}
}

func TestFieldsRefusesWhatIsNotAnObject(t *testing.T) {
	for _, body := range []string{``, `{"model":`, `[1]`, `null`, `"s"`, `1`, `{} {}`} {
		_, err := Fields([]byte(body), `{"model":"…"}`)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Fields(%q) error = %v, want an *Error", body, err)
		}
		if e.Status != http.StatusBadRequest || e.Type != "invalid_request_error" || e.Param != "" {
			t.Errorf("Fields(%q) = %+v, want a 400 invalid_request_error about no one field", body, e)
		}
		if !strings.Contains(e.Message, "not a JSON object") || !strings.Contains(e.Message, `{"model":"…"}`) {
			t.Errorf("Fields(%q) message %q does not say what is wrong and what to send", body, e.Message)
		}
	}
}
