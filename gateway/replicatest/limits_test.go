package replicatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sharedLimit sends a burst of plain chat completions (they need no
// stored state) with the key limited through lb, and checks that the
// three replicas admitted them from one budget of limitedRPM requests
// per minute: counted per replica, they would admit up to three times
// as many.
func sharedLimit(t *testing.T, lb string, names map[string]string) {
	const (
		requests = 3 * limitedRPM
		workers  = 12
	)
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"within the limit?"}]}`
	replies := make([]reply, requests)
	errs := make([]error, requests)
	next := make(chan int)
	var wg sync.WaitGroup
	// The counts are kept in fixed minutes of the clock Redis reads, this
	// machine's: which minutes the burst fell in says what may be admitted.
	before := time.Now().Truncate(time.Minute)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				replies[i], errs[i] = send(http.DefaultClient, limitedKey, lb+"/v1/chat/completions", body)
			}
		}()
	}
	for i := range requests {
		next <- i
	}
	close(next)
	wg.Wait()
	after := time.Now().Truncate(time.Minute)

	admitted, refused := 0, 0
	served := map[string]int{}
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatalf("request %d of the burst: %v", i, errs[i])
		}
		served[names[lastAddr(r.by)]]++
		switch r.status {
		case http.StatusOK:
			admitted++
			if !strings.Contains(string(r.body), "answer to within the limit?") {
				t.Errorf("request %d of the burst was admitted with %s, want the upstream's answer", i, r.body)
			}
		case http.StatusTooManyRequests:
			refused++
			var e struct {
				Error struct{ Message, Code string }
			}
			// OpenAI's shape for a rate limit: code rate_limit_exceeded.
			if json.Unmarshal(r.body, &e) != nil || e.Error.Code != "rate_limit_exceeded" || !strings.Contains(e.Error.Message, fmt.Sprintf(`inbound key "limited" has used its %d requests per minute`, limitedRPM)) {
				t.Errorf("request %d of the burst was refused with %s, want code rate_limit_exceeded naming key \"limited\" and its %d requests per minute", i, r.body, limitedRPM)
			}
			if s, err := strconv.Atoi(r.retryAfter); err != nil || s < 1 || s > 60 {
				t.Errorf("request %d of the burst was refused with retry-after %q, want whole seconds from 1 to 60", i, r.retryAfter)
			}
		default:
			t.Errorf("request %d of the burst: %d %s, want 200 or 429", i, r.status, r.body)
		}
	}
	t.Logf("%d requests: %d admitted, %d refused; served by %v; minute %s to %s", requests, admitted, refused, served, before.Format("15:04"), after.Format("15:04"))

	if before.Equal(after) {
		if admitted != limitedRPM || refused != requests-limitedRPM {
			t.Errorf("a burst within one minute: %d admitted and %d refused, want %d and %d: the replicas share one budget", admitted, refused, limitedRPM, requests-limitedRPM)
		}
	} else if admitted > 2*limitedRPM || admitted+refused != requests {
		t.Errorf("a burst across a minute boundary: %d admitted and %d refused, want at most %d admitted (two windows) and the rest refused", admitted, refused, 2*limitedRPM)
	}
	for _, name := range []string{"A", "B", "C"} {
		if served[name] == 0 {
			t.Errorf("the burst was served by %v, want all three replicas (nginx round-robin)", served)
			break
		}
	}
}
