"""Shared fixtures: the installed nbg_lab, the `nbg` command to compare it with, the public files.

The tests run against the installed wheel (`.ci/setup` installs it), never the source tree. A
component that is missing is skipped with a note on stderr; under CI=true it is a failure.
"""

import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def missing(what):
    """Skip for a missing component, said on stderr; under CI=true, fail."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing (CI=true: every component must be present)")
    print(f"python tests: skipped: {what} is missing", file=sys.stderr)
    pytest.skip(f"{what} is missing")


def nbg_binary():
    """The `nbg` command: $NBG_BIN (the Rust test that runs this suite sets it), else the newest
    build in the checkout."""
    given = os.environ.get("NBG_BIN")
    if given:
        return pathlib.Path(given)
    built = [ROOT / "target" / p / "nbg" for p in ("release", "debug")]
    built = [b for b in built if b.is_file()]
    return max(built, key=lambda b: b.stat().st_mtime) if built else None


@pytest.fixture(scope="session")
def nbg():
    """Run `nbg ARGS...`, returning (exit status, stdout bytes)."""
    binary = nbg_binary()
    if binary is None or not binary.is_file():
        missing("the nbg command (cargo build, or NBG_BIN)")

    def run(*args):
        done = subprocess.run([str(binary), *map(str, args)], capture_output=True)
        return done.returncode, done.stdout

    return run


def public_files():
    """Every public NBG file: ../shared/corpus (v1 and v2) and the repository's controls, each
    content once (controls/public carries copies of shared files)."""
    found, seen = [], set()
    for base in (SHARED / "corpus", ROOT / "controls"):
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*.nb")):
            if p.is_file() and not p.is_symlink():
                digest = hashlib.sha256(p.read_bytes()).digest()
                if digest not in seen:
                    seen.add(digest)
                    found.append(p)
    return found


@pytest.fixture(scope="session")
def shared_files():
    """The public files of ../shared/corpus (skipped, or failed under CI, when absent)."""
    files = [p for p in public_files() if SHARED in p.parents]
    if not files:
        missing("../shared/corpus")
    return files


def largest_public_file():
    files = public_files()
    return max(files, key=lambda p: p.stat().st_size) if files else None


def v2_board_file():
    """The smallest v2 board file of ../shared/corpus (else of the controls), for the mutation
    run: small enough for hundreds of parses, with every v2 decoder on it."""
    v2 = [p for p in public_files() if "v2" in p.parts]
    return min(v2, key=lambda p: p.stat().st_size) if v2 else None
