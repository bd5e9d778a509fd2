#!/usr/bin/env python3
"""Every product source compiled (syntax only) against Debian 11's C
library and Linux UAPI headers, as docker/Dockerfile.surge-2025 builds it:
with docker/bullseye-compat's force-included compat.h and include/ first.
A new kernel or glibc name used without a shim broke that image once
(MOVE_MOUNT_F_EMPTY_PATH, issue 23) while nothing in CI built it; this
check costs seconds instead of the image's build.

The headers come from the surge-2025 profile's root (Debian 11 with
libc6-dev 2.31 and linux-libc-dev 5.10; profiles.surge-2025 creates it).
The libraries' own headers (libuv, json-c, libseccomp, libcap, nettle) are
the host's: their Debian 11 versions are checked by docker.images only.

  bullseye_headers.py SOURCE_DIR BUILD_DIR PROFILE_ROOTFS
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SKIP = 77
PRODUCT_DIRS = ("common", "proto", "runners", "judge", "http", "daemon", "client", "toolchains", "dataset", "cli")
LIB_HEADERS = ("uv.h", "uv", "json-c", "seccomp.h", "seccomp-syscalls.h", "nettle", "sys/capability.h", "http_parser.h")


def lib_header_dir(tmp):
    """The host's library headers, alone (the host's libc headers must not
    be reachable through them)."""
    d = os.path.join(tmp, "libs")
    for h in LIB_HEADERS:
        src = os.path.join("/usr/include", h)
        if not os.path.exists(src):
            print(f"SKIPPED: {src} is missing (bash .ci/deps installs the -dev packages)")
            sys.exit(SKIP)
        dst = os.path.join(d, h)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.symlink(src, dst)
    return d


def product_entries(src, build):
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    out = []
    for e in entries:
        rel = os.path.relpath(os.path.realpath(e["file"]), os.path.realpath(src))
        if rel.split(os.sep)[0] in PRODUCT_DIRS:
            out.append((rel, e))
    return out


def command_for(e, src, root, libs):
    args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
    keep, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-fsanitize") or a == "-Werror":
            continue
        keep.append(a)
    cc = args[0]
    gcc_inc = subprocess.run([cc, "-print-file-name=include"], capture_output=True, text=True).stdout.strip()
    multiarch = subprocess.run([cc, "-print-multiarch"], capture_output=True, text=True).stdout.strip() or "x86_64-linux-gnu"
    compat = os.path.join(src, "docker", "bullseye-compat")
    return [cc, "-fsyntax-only", "-nostdinc", "-include", os.path.join(compat, "compat.h"),
            "-I", os.path.join(compat, "include"), "-isystem", gcc_inc,
            "-isystem", os.path.join(root, "usr", "include", multiarch), "-isystem", os.path.join(root, "usr", "include"),
            "-isystem", libs] + keep


def main():
    src, build, root = sys.argv[1:4]
    if not os.path.exists(os.path.join(root, "usr", "include", "stdio.h")):
        print(f"SKIPPED: no Debian 11 root with libc6-dev at {root} (profiles.surge-2025 creates it)")
        sys.exit(SKIP)
    if not os.path.exists(os.path.join(build, "compile_commands.json")):
        print(f"FAIL: {build}/compile_commands.json is missing (CMAKE_EXPORT_COMPILE_COMMANDS)")
        sys.exit(1)
    with open(os.path.join(root, "etc", "debian_version")) as f:
        version = f.read().strip()
    if not version.startswith("11"):
        print(f"SKIPPED: {root} is Debian {version}, not 11")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory(prefix="sbbullseye-") as tmp:
        libs = lib_header_dir(tmp)
        entries = product_entries(src, build)
        if len(entries) < 50:
            print(f"FAIL: only {len(entries)} product sources in compile_commands.json")
            sys.exit(1)

        def one(item):
            rel, e = item
            p = subprocess.run(command_for(e, src, root, libs), cwd=e["directory"], capture_output=True, text=True)
            return rel, p.returncode, p.stderr

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            results = list(ex.map(one, entries))
    failed = [(rel, err) for rel, rc, err in results if rc != 0]
    for rel, err in failed:
        print(f"--- {rel}\n{err.strip()}")
    print(f"{len(results)} sources against Debian {version}'s headers: {len(failed)} failed")
    if failed:
        print("FAIL: supply the missing names in docker/bullseye-compat (compat.h or include/), as its comment says")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
