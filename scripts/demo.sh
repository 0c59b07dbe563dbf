#!/usr/bin/env bash
# The scripted demo behind `make run`: a few turns on the offline model with
# the gateway route on, each with its trace, showing the Kora plugin's tool
# bridge, its model router, and a native tool passing through it untouched.
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
