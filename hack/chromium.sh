#!/usr/bin/env bash
# Headless Chromium for the report's browser test (test/e2e/report_test.go), from the
# distribution's packages. Prints the browser's path. Installs it (apt-get, as root or with
# sudo) only when no chromium is on PATH; the test fails without one.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
	if p=$(command -v "$b"); then
		echo "$p"
		exit 0
	fi
done
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "chromium is missing and apt-get needs root: install the chromium package" >&2; exit 1; }
	sudo="sudo"
fi
command -v apt-get >/dev/null || { echo "chromium is missing and there is no apt-get: install Chromium and put it on PATH" >&2; exit 1; }
echo "installing chromium (apt-get) for the report's browser test" >&2
# Another apt run (a shared machine) holds the lock for a while: wait for it.
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >&2
command -v chromium
