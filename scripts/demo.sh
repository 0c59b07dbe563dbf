#!/usr/bin/env bash
# The scripted demo behind `make run`: a few turns on the offline model with
# the gateway route on, each with its trace, showing the Kora plugin's tool
# bridge, its model router, and a native tool passing through it untouched;
# then the same host served over HTTP, called as an OpenAI client would.
set -euo pipefail
cd "$(dirname "$0")/.."

export HOOKHOST_USE_GATEWAY="${HOOKHOST_USE_GATEWAY:-1}"
config=examples/demo.toml

# Kora's ledger lives here (state_dir in the config); start from empty so
# the figures below are this run's.
rm -rf bin/kora-state

ask() {
	printf '\n\033[1m# %s\033[0m\n' "$1"
	printf '\033[1m$ hookhost chat -v %q\033[0m\n' "$2"
	./bin/hookhost chat -c "$config" -v "$2"
}

./bin/hookhost version
printf '\n\033[1m$ hookhost plugins check\033[0m\n'
./bin/hookhost plugins check -c "$config"

ask "Kora's tool bridge answers kora__get_burn; native dispatch is skipped" \
	"what's my burn?"
ask "offline-small hedges; Kora's router escalates to offline-large" \
	"show the tokens spent lately"
ask "a native tool passes through Kora untouched (Kora only audits it)" \
	"what time is it"
ask "the ledger holds both inferences of the escalated turn" \
	"show my recent inferences"

# The audit trail from Kora's database (bin/kora-state/ledger.db), as JSONL.
printf '\n\033[1m# kora export: the audit trail as JSONL, for people and tools that tail it\033[0m\n'
printf '\033[1m$ bin/plugins/kora export -config %s\033[0m\n' "$config"
./bin/plugins/kora export -config "$config"

# The same host as an HTTP gateway: an OpenAI-style request through it.
printf '\n\033[1m# hookhost serve: any OpenAI or Anthropic client points its base URL here\033[0m\n'
printf '\033[1m$ hookhost serve -listen 127.0.0.1:0\033[0m\n'
log=$(mktemp)
./bin/hookhost serve -c "$config" -listen 127.0.0.1:0 2>"$log" &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true; rm -f "$log"' EXIT
addr=""
for _ in $(seq 1 300); do
	addr=$(sed -n 's|^hookhost: serving on http://||p' "$log")
	[ -n "$addr" ] && break
	kill -0 "$serve_pid" 2>/dev/null || break
	sleep 0.1
done
cat "$log"
if [ -z "$addr" ]; then
	echo "hookhost serve did not start" >&2
	exit 1
fi
body='{"model":"offline-small","messages":[{"role":"user","content":"what is my burn?"}]}'
printf "\033[1m\$ curl http://%s/v1/chat/completions -H 'content-type: application/json' -d '%s'\033[0m\n" "$addr" "$body"
curl -sS "http://$addr/v1/chat/completions" -H 'content-type: application/json' -d "$body"
echo
kill -TERM "$serve_pid"
wait "$serve_pid"
