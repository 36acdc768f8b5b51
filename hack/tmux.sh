#!/usr/bin/env bash
# tmux for the interactive table's test (test/e2e/top_tui_test.go: send-keys, capture-pane),
# from the distribution's packages. Prints its path. Installs it (apt-get, as root or with sudo)
# only when none is on PATH; the test fails without one.
set -euo pipefail
if p=$(command -v tmux); then
	echo "$p"
	exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "tmux is missing and apt-get needs root: install the tmux package" >&2; exit 1; }
	sudo="sudo"
fi
command -v apt-get >/dev/null || { echo "tmux is missing and there is no apt-get: install tmux and put it on PATH" >&2; exit 1; }
echo "installing tmux (apt-get) for the top command's terminal test" >&2
# Another apt run (a shared machine) holds the lock for a while: wait for it.
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends tmux >&2
command -v tmux
