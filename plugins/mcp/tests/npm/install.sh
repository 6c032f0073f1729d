#!/usr/bin/env bash
# Installs the reference MCP servers of package.json (pinned by package-lock.json) into the
# directory the agent-host-mcp tests look in: $AGENT_HOST_TEST_NPM_DIR, else
# ~/.cache/agent-host/test-npm. Run by .ci/run; run it once on a developer machine too.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="${AGENT_HOST_TEST_NPM_DIR:-$HOME/.cache/agent-host/test-npm}"
mkdir -p "$target"
if cmp -s "$here/package-lock.json" "$target/package-lock.json" && [ -d "$target/node_modules" ]; then
    exit 0  # already installed from this very lockfile
fi
cp "$here/package.json" "$here/package-lock.json" "$target/"
npm ci --prefix "$target" --no-audit --no-fund --loglevel=error
