#!/usr/bin/env bash
# Run a debussy plan as Kubernetes Jobs, wave after wave:
#   1. `debussy pipeline PLAN --format k8s` writes one batch/v1 Job per phase
#      ready now (not completed in git, every dependency completed); each Job
#      clones the repository into an emptyDir and runs
#        debussy run PLAN --only ID --base deps --push origin
#   2. apply them and wait until each has succeeded or failed;
#   3. `debussy collect PLAN --from origin --push` merges the completed
#      phases' branches into this branch and pushes it: the next wave's
#      phases are ready now;
#   4. again, until nothing is ready (done) or collect fails (a phase failed
#      or was blocked, or a merge conflicted: it says which; exit 1).
#
# Usage: examples/k8s-driver.sh docs/plans/MASTER_PLAN.md [debussy pipeline flags...]
#   e.g. --namespace ci --secret debussy --image registry.example.com/debussy:1
# The Jobs run debussy's image of the release that writes them
# (ghcr.io/debussy-dev/debussy:vX.Y.Z), as its user (uid and gid 1000), unless
# --image names another (a dev build of debussy must; docs/ci.md).
#
# Run it in a clone of the repository, on the branch the results go to, with
# an origin it may push to and kubectl pointed at the cluster. The Jobs read
# the Secret (default name debussy; every key optional):
#   kubectl create secret generic debussy \
#     --from-literal=CLAUDE_CODE_OAUTH_TOKEN="$(claude setup-token …)" \
#     --from-literal=DEBUSSY_PUSH_TOKEN=<a token that may push over https>
# Use CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY: a copied
# ~/.claude/.credentials.json shared by many pods breaks when one refreshes it.
set -euo pipefail

plan=${1:?usage: k8s-driver.sh MASTER_PLAN.md [debussy pipeline flags...]}
shift
poll=${DEBUSSY_POLL_SECONDS:-30}
branch=$(git symbolic-ref --short HEAD)
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT

while :; do
	git pull --quiet --no-rebase origin "$branch"
	debussy pipeline "$plan" --format k8s "$@" -o "$jobs"
	if ! grep -q '^kind: Job$' "$jobs"; then
		echo "debussy: nothing is ready: every phase is completed, or waits on one that is not"
		debussy collect "$plan" --from origin
		exit 0
	fi
	# Jobs are named after the phase and the commit they start from: a rerun
	# at the same commit finds the Jobs of the try before. A failed one is
	# replaced; a running one is waited for; a succeeded one is collected
	# (its phase's branch holds the work).
	kubectl get -f "$jobs" --ignore-not-found --no-headers \
		-o custom-columns=NS:.metadata.namespace,NAME:.metadata.name,FAILED:.status.failed |
		awk '$3 != "<none>" { print $1, $2 }' |
		while read -r ns name; do
			kubectl delete job --namespace "$ns" "$name" --wait
		done
	kubectl apply -f "$jobs"
	# A Job is finished once it records a success or a failure
	# (backoffLimit 0: debussy retries inside the pod, never Kubernetes).
	while kubectl get -f "$jobs" --no-headers -o custom-columns=S:.status.succeeded,F:.status.failed |
		awk '$1 == "<none>" && $2 == "<none>" { found = 1 } END { exit !found }'; do
		sleep "$poll"
	done
	debussy collect "$plan" --from origin --push
done
