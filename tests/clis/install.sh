#!/usr/bin/env bash
# Install the pinned coding-agent CLIs that Flotilla's end-to-end tests drive.
#
# Versions live in package.json / package-lock.json beside this script. Native
# binaries (claude, codex, opencode) come from per-platform npm optional
# dependencies, so nothing is downloaded from outside the npm registry: the
# postinstalls of @anthropic-ai/claude-code and opencode-ai only copy the binary
# out of those packages. package.json's allowScripts lists the install scripts
# npm may run; node-pty's node-gyp build is denied (gemini/qwen use the
# prebuilt @lydell/node-pty instead). To change a pin, edit package.json and
# run ./update-lock.sh (it prunes lock edges to platform packages the registry
# here does not serve, which would otherwise make `npm ci` fail).
#
# Usage: tests/clis/install.sh     (prints the bin directory on its last line)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
bin_dir="$here/node_modules/.bin"

# binary -> npm package that provides it
declare -A pkg_of=(
  [claude]=@anthropic-ai/claude-code
  [codex]=@openai/codex
  [qwen]=@qwen-code/qwen-code
  [gemini]=@google/gemini-cli
  [pi]=@mariozechner/pi-coding-agent
  [opencode]=opencode-ai
  [grok]=@vibe-kit/grok-cli
)
bins=(claude codex qwen gemini pi opencode grok)

# What `<bin> --version` prints when it differs from the package version.
# @vibe-kit/grok-cli 0.0.34 hard-codes "1.0.1" in its commander setup.
declare -A printed_version=([grok]=1.0.1)

die() { echo "install.sh: $*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed (need node >= 20.6 to install)"
command -v npm >/dev/null || die "npm is not installed"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old (need >= 20.6)"
# claude and qwen run on node >= 22. On Linux the registry's per-platform node
# package (an optional dependency) puts node 22 in the bin directory, first on
# the tests' PATH; elsewhere the machine's node must be new enough.
export PATH="$bin_dir:$PATH"

# Version of $1 recorded in package-lock.json.
locked_version() {
  node -e '
    const lock = require("./package-lock.json");
    const p = lock.packages["node_modules/" + process.argv[1]];
    if (!p) process.exit(1);
    console.log(p.version);' "$1"
}

# True when every package is installed at its locked version (one node call).
packages_match_lock() {
  node -e '
    const lock = require("./package-lock.json");
    for (const name of process.argv.slice(1)) {
      const want = lock.packages["node_modules/" + name];
      let have;
      try { have = require("./node_modules/" + name + "/package.json").version; } catch { process.exit(1); }
      if (!want || want.version !== have) process.exit(1);
    }' "${pkg_of[@]}"
}

# True when every binary is present at its locked version.
up_to_date() {
  local b
  for b in "${bins[@]}"; do
    [ -x "$bin_dir/$b" ] || return 1
  done
  if [ "$(uname -s)" = Linux ]; then [ -x "$bin_dir/node" ] || return 1; fi
  packages_match_lock
}

if up_to_date; then
  echo "install.sh: all CLIs already installed at locked versions, skipping npm ci"
else
  echo "install.sh: running npm ci in $here"
  npm ci --no-audit --no-fund
fi

# Verify: each binary exists and prints a version. Run with a throwaway HOME so
# that no CLI writes into the real home directory.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
missing=()
for b in "${bins[@]}"; do
  pkg="${pkg_of[$b]}"
  want="${printed_version[$b]:-$(locked_version "$pkg")}"
  if [ ! -x "$bin_dir/$b" ]; then
    missing+=("$b ($pkg: no $bin_dir/$b)")
    continue
  fi
  out="$(cd "$scratch" && HOME="$scratch" XDG_CONFIG_HOME="$scratch/.config" \
    XDG_DATA_HOME="$scratch/.local/share" XDG_CACHE_HOME="$scratch/.cache" \
    XDG_STATE_HOME="$scratch/.local/state" TMPDIR="$scratch" NO_COLOR=1 \
    timeout 60 "$bin_dir/$b" --version 2>"$scratch/stderr" </dev/null)" || {
    missing+=("$b ($pkg: --version failed: $(tr '\n' ' ' <"$scratch/stderr"))")
    continue
  }
  # pi prints its version on stderr.
  [ -n "$out" ] || out="$(cat "$scratch/stderr")"
  case "$out" in
    *"$want"*) printf '  %-9s %s\n' "$b" "${out//$'\n'/ }" ;;
    *) missing+=("$b ($pkg: --version printed '${out//$'\n'/ }', expected $want)") ;;
  esac
done

run_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$run_major" -ge 22 ] || missing+=("node $(node --version) runs the CLIs; claude and qwen need >= 22 (install node 22)")

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install.sh: missing or broken CLIs:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "$bin_dir"
