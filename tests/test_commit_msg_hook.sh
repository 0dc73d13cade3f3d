#!/usr/bin/env bash
# The commit-message hook (.githooks/commit-msg) accepts a short subject with a body after a blank
# line, and refuses a subject over 72 characters or a body that starts on the second line.
set -u
hook="$1/.githooks/commit-msg"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf 'common: one IDA driver\n\nFigures in the body.\n# a comment git strips\n' > "$dir/ok"
printf '%s\n' "$(printf 'x%.0s' $(seq 73))" > "$dir/long"
printf 'subject\nbody without a blank line\n' > "$dir/cramped"
failed=0
"$hook" "$dir/ok" 2>/dev/null || { echo "refused a good message"; failed=1; }
"$hook" "$dir/long" 2>/dev/null && { echo "accepted a 73-character subject"; failed=1; }
"$hook" "$dir/cramped" 2>/dev/null && { echo "accepted a body on the second line"; failed=1; }
exit "$failed"
