#!/usr/bin/env bash
# Installs Debian's headless browser for the dashboard test
# (services/api/tests/dashboard): `chromium` and `chromium-driver` with apt
# when /usr/bin/chromium is missing; silent when both are there.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
echo "installing chromium and chromium-driver with apt" >&2
as_root apt-get update -qq
DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver fonts-dejavu-core >/dev/null
