#!/usr/bin/env bash
# The newcomer's first hour, from a clone of this repository alone (no ../shared beside
# it): the README's first command (`make run`) must serve the sandbox's demo car, and its
# second (`make test`) must pass; `make test` includes tests/docs/test_readme.py, which runs
# every shell block of the README verbatim, in order, against a fresh `autoport serve`.
# Run from anywhere: bash scripts/fresh_clone_check.sh
# AUTOPORT_PORT picks the port `make run` serves on (default: a free one).
set -euo pipefail
source_repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
work=$(mktemp -d /tmp/autoport-fresh-XXXXXX)
trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
git clone --quiet "$source_repo" "$work/autoport"
cd "$work/autoport"
[ ! -e ../shared ] || { echo "fresh clone has ../shared beside it" >&2; exit 1; }
port=${AUTOPORT_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
base=http://127.0.0.1:$port

echo "==> make run (port $port)"
# Only `make run` gets the port: the suite builds its own settings and URLs.
AUTOPORT_PORT=$port make run >"$work/run.log" 2>&1 &
server=$!
for _ in $(seq 300); do curl -sf "$base/readyz" >/dev/null && break; sleep 1; done
curl -sf "$base/readyz" || { tail -40 "$work/run.log"; exit 1; }
echo
secrets=data/first-start-secrets.txt
client_id=$(awk '/client_id:/ {print $2}' "$secrets")
client_secret=$(awk '/client_secret:/ {print $2}' "$secrets")
token=$(curl -sf "$base/sandbox/v1/access_tokens" -d grant_type=client_credentials \
  -d client_id="$client_id" -d client_secret="$client_secret" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
odometer() {
  curl -sf "$base/sandbox/v1/vehicle-data/autoapi-13/SBXPSRGC89T9TK2VN" \
    -H "Authorization: Bearer $token" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["diagnostics"]["odometer"]["data"]["value"])'
}
first=$(odometer); sleep 3; second=$(odometer)
echo "demo EV odometer: $first -> $second km"
python3 -c "import sys; sys.exit(not float('$second') > float('$first'))" \
  || { echo "the demo car did not move" >&2; exit 1; }
kill "$server"; wait "$server" 2>/dev/null || true

echo "==> make test"
make test
echo "fresh clone: make run and make test passed ($work)"
