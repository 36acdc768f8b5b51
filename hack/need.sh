#!/usr/bin/env bash
# A program the end-to-end tests need, from the distribution's packages:
#   hack/need.sh PACKAGE WHY COMMAND...
# prints the path of the first COMMAND on PATH; when none is, installs PACKAGE (apt-get, as root
# or with sudo) and prints the first COMMAND's path. The tests that need it fail without it.
#   make chromium: hack/need.sh chromium "the report's browser test" chromium chromium-browser google-chrome
#   make tmux:     hack/need.sh tmux "the top command's terminal test" tmux
set -euo pipefail
pkg=$1 why=$2
shift 2
for b in "$@"; do
	if p=$(command -v "$b"); then
		echo "$p"
		exit 0
	fi
done
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "$pkg is missing and apt-get needs root: install the $pkg package" >&2; exit 1; }
	sudo="sudo"
fi
command -v apt-get >/dev/null || { echo "$pkg is missing and there is no apt-get: install $pkg and put it on PATH" >&2; exit 1; }
echo "installing $pkg (apt-get) for $why" >&2
# Another apt run (a shared machine) holds the lock for a while: wait for it.
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$pkg" >&2
command -v "$1"
