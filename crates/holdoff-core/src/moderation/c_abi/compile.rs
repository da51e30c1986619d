//! Building a C moderator: the system C compiler turns one source file into
//! a shared object, cached by content.
//!
//! Models nothing; it is the build step of the `c` moderation kind
//! (docs/models/c-moderators.md). The compiler is `$HOLDOFF_CC`, else `$CC`,
//! else `cc`, run with kernel-like flags ([`CFLAGS`]: no strict aliasing,
//! wrapping signed arithmetic, GNU C11) and `-I` the ABI and shim headers,
//! which are built into holdoff and written next to the cache. The cache key
//! hashes the source bytes, the headers, the flags and the compiler's name
//! (two 64-bit FNV-1a hashes with different offsets: a cache key, not a
//! security boundary). The cache directory is `$HOLDOFF_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/holdoff/c`, else `~/.cache/holdoff/c`, else
//! `.holdoff-cache/c` in the working directory. A finished object is
//! renamed into place, so concurrent runs never load a half-written file.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The ABI header (`include/holdoff/moderator.h`).
pub const MODERATOR_H: &str = include_str!("../../../../../include/holdoff/moderator.h");
/// The kernel shim header (`include/holdoff/kernel_shim.h`).
pub const KERNEL_SHIM_H: &str = include_str!("../../../../../include/holdoff/kernel_shim.h");

/// Compiler flags: optimised position-independent shared object, with the
/// kernel's `-fno-strict-aliasing -fwrapv` and GNU C11.
pub const CFLAGS: [&str; 7] = [
    "-O2",
    "-fPIC",
    "-shared",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-std=gnu11",
    "-fvisibility=default",
];

/// Largest source file accepted [bytes].
const MAX_SOURCE_BYTES: u64 = 4 << 20;

fn fnv1a(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut h = seed;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separator, so that ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn key(parts: &[&[u8]]) -> String {
    format!(
        "{:016x}{:016x}",
        fnv1a(0xcbf2_9ce4_8422_2325, parts),
        fnv1a(0x6c62_272e_07bb_0142, parts)
    )
}

/// The compiler command: `$HOLDOFF_CC`, `$CC` or `cc`.
pub fn compiler() -> String {
    ["HOLDOFF_CC", "CC"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_else(|| "cc".into())
}

/// The cache directory for built moderators.
pub fn cache_dir() -> PathBuf {
    let env = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("HOLDOFF_CACHE_DIR") {
        return d;
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return d.join("holdoff").join("c");
    }
    if let Some(d) = env("HOME") {
        return d.join(".cache").join("holdoff").join("c");
    }
    PathBuf::from(".holdoff-cache").join("c")
}

/// The headers' folder under the cache (written once per header version):
/// `-I` it, and its `holdoff/` for `#include "kernel_shim.h"`.
fn headers(dir: &Path) -> Result<PathBuf, String> {
    let inc = dir.join(format!(
        "include-{}",
        key(&[MODERATOR_H.as_bytes(), KERNEL_SHIM_H.as_bytes()])
    ));
    let sub = inc.join("holdoff");
    for (name, text) in [
        ("moderator.h", MODERATOR_H),
        ("kernel_shim.h", KERNEL_SHIM_H),
    ] {
        let path = sub.join(name);
        if path.is_file() {
            continue;
        }
        std::fs::create_dir_all(&sub)
            .map_err(|e| format!("cannot create the C moderator cache {}: {e}", sub.display()))?;
        let tmp = sub.join(format!("{name}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(inc)
}

/// Build `source` (or find it in the cache); the shared object's path.
/// Errors name the file: unreadable, too large, no compiler, or the
/// compiler's own messages.
pub fn build(source: &Path) -> Result<PathBuf, String> {
    let shown = source.display();
    let meta = std::fs::metadata(source).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(format!(
            "{shown} is {} bytes; a C moderator source may have at most {MAX_SOURCE_BYTES}",
            meta.len()
        ));
    }
    let text = std::fs::read(source).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let cc = compiler();
    let flags = CFLAGS.join(" ");
    let k = key(&[
        &text,
        MODERATOR_H.as_bytes(),
        KERNEL_SHIM_H.as_bytes(),
        flags.as_bytes(),
        cc.as_bytes(),
    ]);
    let dir = cache_dir();
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "moderator".into());
    let so = dir.join(format!("{stem}-{k}.so"));
    if so.is_file() {
        return Ok(so);
    }
    let inc = headers(&dir)?;
    let tmp = dir.join(format!("{stem}-{k}.{}.tmp.so", std::process::id()));
    let out = Command::new(&cc)
        .args(CFLAGS)
        .arg("-I")
        .arg(&inc)
        .arg("-I")
        .arg(inc.join("holdoff"))
        .arg("-o")
        .arg(&tmp)
        .arg(source)
        .output()
        .map_err(|e| {
            format!(
                "cannot build {shown}: the C compiler `{cc}` did not start ({e}); install a C \
                 compiler (gcc or clang) or name one in $HOLDOFF_CC"
            )
        })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let msg = String::from_utf8_lossy(&out.stderr);
        let msg: String = msg.chars().take(8000).collect();
        return Err(format!(
            "{shown} does not compile (`{cc} {flags}` {}):\n{}",
            out.status,
            msg.trim_end()
        ));
    }
    std::fs::rename(&tmp, &so).map_err(|e| format!("cannot write {}: {e}", so.display()))?;
    Ok(so)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_changes_with_any_part_and_with_the_split() {
        let a = key(&[b"ab", b"c"]);
        assert_ne!(a, key(&[b"a", b"bc"]));
        assert_ne!(a, key(&[b"ab", b"d"]));
        assert_eq!(a, key(&[b"ab", b"c"]));
        assert_eq!(a.len(), 32);
    }
}
