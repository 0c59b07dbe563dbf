#!/usr/bin/env bash
# The fuzzing run behind `make fuzz`: every fuzz target in the repository,
# found by its `func FuzzXxx(f *testing.F)` line in a _test.go file, is
# fuzzed on its own for FUZZTIME, one after another. Targets are found
# afresh on each run, so a new one needs no edit here.
#
#   FUZZTIME       how long each target runs (go test -fuzztime), default 30s
#   FUZZ_PARALLEL  fuzzing workers per target, default 2
#   FUZZ           only targets whose name matches this extended regexp
#   FUZZMINTIME    how long to minimise a new interesting input
#                  (go test -fuzzminimizetime), default 5s: go's own 60s
#                  default can stall a short run's executions for most of
#                  its time while the coverage-guided corpus grows
#
# A failing input is written by go test to the package's
# testdata/fuzz/FuzzXxx/, where plain `go test` replays it from then on.
# The script exits non-zero if any target failed, naming each.
set -uo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"
FUZZ_PARALLEL="${FUZZ_PARALLEL:-2}"
FUZZ="${FUZZ:-.}"
FUZZMINTIME="${FUZZMINTIME:-5s}"

# "dir name" per target, sorted so runs are comparable.
targets="$(find . -name '*_test.go' -not -path './.git/*' -not -path './bin/*' -not -path '*/testdata/*' -print0 |
	xargs -0 -r grep -HE '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_][A-Za-z0-9_]* \*testing\.F\)' |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' |
	grep -E " .*${FUZZ}" | sort -u)"
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found (FUZZ=$FUZZ)" >&2
	exit 1
fi
count="$(printf '%s\n' "$targets" | wc -l)"
echo "fuzz: $count targets, $FUZZTIME each, $FUZZ_PARALLEL workers, minimising for at most $FUZZMINTIME"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
trap 'echo; echo "fuzz: interrupted" >&2; exit 130' INT TERM
failed=()
summary=()
while read -r dir name; do
	echo
	echo "== $dir $name"
	# Run from the package directory so a target in a nested module is
	# built with that module's go.mod.
	(cd "$dir" && "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINTIME" -parallel "$FUZZ_PARALLEL" .) 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	execs="$(grep -oE 'execs: [0-9]+' "$log" | tail -n1 | cut -d' ' -f2)"
	if [ "$status" -ne 0 ]; then
		failed+=("$dir $name")
		summary+=("FAIL $dir $name")
	elif grep -q 'no fuzz tests to fuzz' "$log"; then
		# A target excluded by build constraints would otherwise pass unseen.
		failed+=("$dir $name (not built: check its build constraints)")
		summary+=("FAIL $dir $name: not built")
	else
		summary+=("ok   $dir $name ${execs:-?} execs")
	fi
done <<<"$targets"

echo
echo "fuzz summary ($FUZZTIME each):"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "fuzz: ${#failed[@]} of $count targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	echo "failing inputs are under each package's testdata/fuzz/<target>/; commit them so go test replays them" >&2
	exit 1
fi
