//! Opening the files the core reads (profile files, captures): regular
//! files only, checked with `stat` before a byte is read, and text read
//! within a size limit.
//!
//! A path must be a regular file; a symbolic link is followed to one. A
//! directory, a device, a FIFO or a socket is refused with a message that
//! says which it is (a FIFO is never opened: opening one for reading waits
//! for a writer). A text file over its limit is refused with its size and
//! the limit before it is read, and the read itself stops at the limit plus
//! one byte, so a file that grows while it is read is still bounded.
//! Messages read as the Python side's (`holdoff.inputs`):
//! `<what> <path>: is a FIFO (named pipe); give a regular file`,
//! `<what> <path>: is 8.0 GiB, the limit for a <what> is 16 MiB`.
//!
//! Simplifies: the check and the open are two system calls; a path swapped
//! between them is read as it then is (within the limit).
//!
//! Units: sizes [bytes].

use std::io::Read;
use std::path::Path;

/// Largest profile file read [bytes] (16 MiB; a real one is under 4 KiB).
pub const MAX_PROFILE_FILE_BYTES: u64 = 16 << 20;

/// `n` bytes in binary units: `512 B`, `16 MiB`, `8.0 GiB`.
pub fn human_size(n: u64) -> String {
    let mut size = n as f64;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"] {
        if size < 1024.0 || unit == "TiB" {
            if unit == "B" || size.fract() == 0.0 {
                return format!("{} {unit}", size as u64);
            }
            return format!("{size:.1} {unit}");
        }
        size /= 1024.0;
    }
    format!("{n} B")
}

/// What a path that is not a regular file is ("is a FIFO (named pipe)").
fn kind_of(ft: std::fs::FileType) -> Option<&'static str> {
    if ft.is_file() {
        return None;
    }
    if ft.is_dir() {
        return Some("is a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() {
            return Some("is a character device");
        }
        if ft.is_block_device() {
            return Some("is a block device");
        }
        if ft.is_fifo() {
            return Some("is a FIFO (named pipe)");
        }
        if ft.is_socket() {
            return Some("is a socket");
        }
    }
    Some("is not a regular file")
}

/// Why `path` cannot be stat-ed, in words.
fn os_message(e: &std::io::Error, path: &Path) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound if path.symlink_metadata().is_ok() => {
            "is a symbolic link to a file that does not exist".into()
        }
        std::io::ErrorKind::NotFound => "not found".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => format!("cannot be read ({e})"),
    }
}

/// The size of `path` [bytes] after checking that it is (or links to) a
/// regular file of at most `limit` bytes (None: no limit). The error is
/// the whole message: `<what> <path>: <what is wrong>`.
pub fn check_regular(path: &Path, what: &str, limit: Option<u64>) -> Result<u64, String> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| format!("{what} {shown}: {}", os_message(&e, path)))?;
    if let Some(kind) = kind_of(meta.file_type()) {
        return Err(format!("{what} {shown}: {kind}; give a regular file"));
    }
    if let Some(cap) = limit {
        if meta.len() > cap {
            return Err(format!(
                "{what} {shown}: is {}, the limit for a {what} is {}",
                human_size(meta.len()),
                human_size(cap)
            ));
        }
    }
    Ok(meta.len())
}

/// The text of a regular file of at most `limit` bytes (see `check_regular`);
/// the read stops at `limit` + 1 bytes. Text must be UTF-8.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, String> {
    let size = check_regular(path, what, Some(limit))?;
    let shown = path.display();
    let f = std::fs::File::open(path)
        .map_err(|e| format!("{what} {shown}: {}", os_message(&e, path)))?;
    let mut buf = Vec::with_capacity(size.min(limit) as usize);
    f.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("{what} {shown}: cannot be read ({e})"))?;
    if buf.len() as u64 > limit {
        return Err(format!(
            "{what} {shown}: grew past the limit for a {what}, {}, while it was read",
            human_size(limit)
        ));
    }
    String::from_utf8(buf).map_err(|e| {
        format!(
            "{what} {shown}: is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(16 << 20), "16 MiB");
        assert_eq!(human_size(8 << 30), "8 GiB");
        assert_eq!(human_size(3 << 29), "1.5 GiB");
    }

    #[test]
    fn special_files_say_what_they_are() {
        let e = check_regular(Path::new("/"), "profile file", None).unwrap_err();
        assert_eq!(e, "profile file /: is a directory; give a regular file");
        #[cfg(unix)]
        {
            let e = check_regular(Path::new("/dev/null"), "profile file", None).unwrap_err();
            assert_eq!(
                e,
                "profile file /dev/null: is a character device; give a regular file"
            );
        }
        let e = check_regular(Path::new("/no/such/file"), "capture", None).unwrap_err();
        assert_eq!(e, "capture /no/such/file: not found");
    }
}
