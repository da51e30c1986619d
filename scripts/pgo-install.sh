#!/usr/bin/env bash
# Install holdoff into a virtual environment with a profile-guided build of
# the Rust extension (`make install` runs this; `make install PGO=0` skips
# it). Profile-guided optimisation changes how the compiler lays out and
# inlines the code, never what it computes: reports are byte-identical with
# and without it (BENCHMARKS.md, ninth sitting).
#
# Steps:
#   1. build and install the extension instrumented (-Cprofile-generate);
#   2. run the training scenarios with it: every bundled example except the
#      two `holdoff bench` scenarios (bench-64b-1g-itr8000-napi*.toml), so
#      that the bench measures a build not trained on it;
#   3. merge the profiles with an llvm-profdata of the compiler's own LLVM
#      major version;
#   4. build and install the extension again with -Cprofile-use.
#
# Without a matching llvm-profdata (Debian: `apt install llvm-NN`, NN the
# "LLVM version" of `rustc -vV`; or rustup's llvm-tools component), or if
# a profiling step fails, it says why and installs the plain release build.
#
# Usage: scripts/pgo-install.sh PYTHON [PGO]
#   PGO=1 (default): as above; PGO=0: the plain build; PGO=check: print the
#   llvm-profdata it would use (or why it would build plain), install nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${1:?usage: scripts/pgo-install.sh PYTHON [PGO]}
PGO=${2:-1}
PIP=("$PYTHON" -m pip)

plain() {
    if [[ "$PGO" == check ]]; then
        echo "pgo-install: plain build: $1"
        exit 0
    fi
    echo "pgo-install: $1; installing the plain release build" >&2
    HOLDOFF_BUILD=plain "${PIP[@]}" install .
    exit 0
}

[[ "$PGO" == 0 ]] && plain "PGO=0"

# The compiler's LLVM major version and a profile merger of that version.
llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
[[ -n "$llvm_major" ]] || plain "rustc -vV names no LLVM version"
profdata=""
sysroot=$(rustc --print sysroot)
for cand in "llvm-profdata-$llvm_major" "/usr/lib/llvm-$llvm_major/bin/llvm-profdata" \
    "$sysroot"/lib/rustlib/*/bin/llvm-profdata llvm-profdata; do
    path=$(command -v "$cand" 2>/dev/null || true)
    [[ -n "$path" && -x "$path" ]] || continue
    if "$path" --version 2>/dev/null | grep -Eq "LLVM version $llvm_major\."; then
        profdata=$path
        break
    fi
done
[[ -n "$profdata" ]] ||
    plain "no llvm-profdata of LLVM $llvm_major (the compiler's; Debian: apt install llvm-$llvm_major)"

if [[ "$PGO" == check ]]; then
    echo "pgo-install: profile-guided build with $profdata (LLVM $llvm_major)"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'echo "pgo-install: interrupted; the environment may hold the instrumented build: run make install again" >&2; exit 130' INT TERM
flags=${RUSTFLAGS:-}

echo "pgo-install: 1/4 instrumented build" >&2
HOLDOFF_BUILD=instrumented RUSTFLAGS="$flags -Cprofile-generate=$work/raw" "${PIP[@]}" install . ||
    plain "the instrumented build failed"

echo "pgo-install: 2/4 training runs (bundled examples, without the bench scenarios)" >&2
trained=0
for f in python/holdoff/examples/*.toml; do
    case $(basename "$f") in
    bench-64b-1g-itr8000-napi*.toml | sweep-*.toml) continue ;;
    esac
    LLVM_PROFILE_FILE="$work/raw/holdoff-%p-%m.profraw" \
        "$PYTHON" -m holdoff run --json --no-progress "$f" >/dev/null ||
        plain "training run $f failed"
    trained=$((trained + 1))
done
((trained > 0)) || plain "no training scenarios found"

echo "pgo-install: 3/4 merging $trained runs' profiles with $profdata" >&2
"$profdata" merge -o "$work/holdoff.profdata" "$work"/raw/*.profraw ||
    plain "llvm-profdata merge failed"

echo "pgo-install: 4/4 optimised build" >&2
HOLDOFF_BUILD=profile-guided RUSTFLAGS="$flags -Cprofile-use=$work/holdoff.profdata" \
    "${PIP[@]}" install --force-reinstall --no-deps . ||
    plain "the profile-guided build failed"
echo "pgo-install: installed the profile-guided build" >&2
