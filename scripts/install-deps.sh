#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages that building, testing and
# running Kite's lab need. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git
  dpkg-dev                            # dpkg-shlibdeps: the .deb packages' Depends (CPack)
  clang libclang-rt-14-dev            # libFuzzer targets
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libpugixml-dev                      # FIX data dictionary loading
  libhowardhinnant-date-dev tzdata    # IANA time zones for session schedules
  liburing-dev
  libssl-dev openssl                  # the tls transport; its tests make certificates with openssl
  libquickfix-dev                     # peer flavour, benchmarks, interop tests
  sockperf                            # cross-check of the raw floor
  iproute2 procps util-linux          # network namespaces, veth, taskset
  valgrind                            # instruction counts (callgrind)
  libpq-dev postgresql                # the postgresql store; its tests start a private server
  python3
)
# The rust-pure flavour (flavours/rust-pure): Debian's Rust toolchain, unless a
# cargo is on PATH already (rustup's, for one).
if ! command -v cargo >/dev/null 2>&1; then
  packages+=(cargo rustc)
fi

# The .NET SDK (dotnet-pure flavour) is not a Debian 12 package: docs/dotnet-pure.md says how to add it.
command -v dotnet >/dev/null || echo "install-deps: no dotnet on PATH: the dotnet-pure tests report SKIPPED, its cells unbuilt" >&2

# The Java flavours (java-pure, java-jni) and the Java binding: a JDK 17 and
# JUnit 5's console launcher, where javac or the launcher is missing.
if ! command -v javac >/dev/null || [[ ! -f /usr/share/java/junit-platform-console-standalone.jar ]]; then
  packages+=(openjdk-17-jdk-headless junit5)
fi
# The results page (lab/site): Node.js and npm from Debian only where they are
# not on PATH already (a newer Node.js from elsewhere conflicts with Debian's
# npm); chromium for its browser tests. The build runs `npm ci` in lab/site.
packages+=(chromium)
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
