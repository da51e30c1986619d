//! From a position in a TOML scenario to the field path it belongs to
//! (`apps[0].think_us`), so that a value of the wrong type is reported with
//! its field, as the range checks are.
//!
//! A small scanner over the TOML text: `[table]` and `[[array]]` headers
//! (with per-parent counters, so `hosts[1].nics[0]`), `key = value` lines,
//! dotted keys, arrays and inline tables (as `tomli_w` writes scenarios given
//! as Python dicts). It only runs on text that already parsed as TOML, and
//! gives up (None) on anything it does not follow.

use std::collections::BTreeMap;
use std::ops::Range;

/// One key/value (or array element) and where its value is.
#[derive(Debug)]
struct Entry {
    path: String,
    key_start: usize,
    value: Range<usize>,
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    entries: Vec<Entry>,
    /// Table headers: (start of the header, concrete path).
    headers: Vec<(usize, String)>,
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// Skip blanks; with `newlines`, also newlines and comments.
    fn skip(&mut self, newlines: bool) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' if newlines => self.pos += 1,
                b'#' if newlines => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        let q = self.peek()?;
        let triple = self.b.get(self.pos..self.pos + 3) == Some(&[q, q, q][..]);
        let start = self.pos + if triple { 3 } else { 1 };
        self.pos = start;
        loop {
            let c = self.peek()?;
            if c == b'\\' && q == b'"' {
                self.pos += 2;
                continue;
            }
            if c == q && (!triple || self.b.get(self.pos..self.pos + 3) == Some(&[q, q, q][..])) {
                let s = String::from_utf8_lossy(&self.b[start..self.pos]).into_owned();
                self.pos += if triple { 3 } else { 1 };
                return Some(s);
            }
            self.pos += 1;
        }
    }

    /// A (possibly dotted, possibly quoted) key.
    fn key(&mut self) -> Option<Vec<String>> {
        let mut parts = Vec::new();
        loop {
            self.skip(false);
            match self.peek()? {
                b'"' | b'\'' => parts.push(self.string()?),
                _ => {
                    let start = self.pos;
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                    {
                        self.pos += 1;
                    }
                    if start == self.pos {
                        return None;
                    }
                    parts.push(String::from_utf8_lossy(&self.b[start..self.pos]).into_owned());
                }
            }
            self.skip(false);
            if self.peek() == Some(b'.') {
                self.pos += 1;
            } else {
                return Some(parts);
            }
        }
    }

    /// A value at `path`; records it and everything inside it.
    fn value(&mut self, path: String, key_start: usize) -> Option<()> {
        let start = self.pos;
        match self.peek()? {
            b'"' | b'\'' => {
                self.string()?;
            }
            b'[' => {
                self.pos += 1;
                let mut i = 0;
                self.items(b']', |s| {
                    let at = s.pos;
                    s.value(format!("{path}[{i}]"), at)?;
                    i += 1;
                    Some(())
                })?;
            }
            b'{' => {
                self.pos += 1;
                self.items(b'}', |s| {
                    let at = s.pos;
                    s.key_value(&path, at)
                })?;
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|c| !matches!(c, b',' | b']' | b'}' | b'\n' | b'#'))
                {
                    self.pos += 1;
                }
            }
        }
        let mut end = self.pos;
        while end > start && self.b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        self.entries.push(Entry {
            path,
            key_start,
            value: start..end,
        });
        Some(())
    }

    /// The elements of an array or inline table up to `close` (the opening
    /// bracket already taken): `item` reads each element, commas and
    /// newlines between them are skipped.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        loop {
            self.skip(true);
            match self.peek()? {
                c if c == close => {
                    self.pos += 1;
                    return Some(());
                }
                b',' => self.pos += 1,
                _ => item(self)?,
            }
        }
    }

    /// `key = value` (in a table or an inline table) under `base`; `at` is
    /// where the key starts.
    fn key_value(&mut self, base: &str, at: usize) -> Option<()> {
        let k = self.key()?;
        if self.peek()? != b'=' {
            return None;
        }
        self.pos += 1;
        self.skip(false);
        self.value(join(base, &k.join(".")), at)
    }

    fn document(&mut self) -> Option<()> {
        // Array-of-tables counts by concrete parent path, and the current
        // index of each array by generic path ("hosts.nics").
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut current: BTreeMap<String, usize> = BTreeMap::new();
        let mut table = String::new();
        loop {
            self.skip(true);
            let Some(c) = self.peek() else {
                return Some(());
            };
            let at = self.pos;
            if c == b'[' {
                let array = self.b.get(self.pos + 1) == Some(&b'[');
                self.pos += if array { 2 } else { 1 };
                let segs = self.key()?;
                self.pos += if array { 2 } else { 1 };
                let mut generic = String::new();
                let mut concrete = String::new();
                for (i, seg) in segs.iter().enumerate() {
                    generic = join(&generic, seg);
                    concrete = join(&concrete, seg);
                    if array && i + 1 == segs.len() {
                        let n = counts.entry(concrete.clone()).or_insert(0);
                        *n += 1;
                        current.insert(generic.clone(), *n - 1);
                        concrete.push_str(&format!("[{}]", *n - 1));
                    } else if let Some(ix) = current.get(&generic) {
                        concrete.push_str(&format!("[{ix}]"));
                    }
                }
                table = concrete;
                self.headers.push((at, table.clone()));
                continue;
            }
            self.key_value(&table, at)?;
        }
    }
}

/// The entries and table headers of `text`, or None if the scanner does not
/// follow it.
fn scan(text: &str) -> Option<Scanner<'_>> {
    let mut s = Scanner {
        b: text.as_bytes(),
        pos: 0,
        entries: Vec::new(),
        headers: Vec::new(),
    };
    s.document()?;
    Some(s)
}

/// The field path for an error at `span` of `text`; `quoted` is the value
/// the error message quotes, if any (serde reports a wrong value inside an
/// internally tagged table, such as an application, at the whole table).
pub fn field_at(text: &str, span: Range<usize>, quoted: Option<&str>) -> Option<String> {
    let s = scan(text)?;
    let at = span.start;
    // The innermost value around the position (or whose key starts there).
    let inner = s
        .entries
        .iter()
        .filter(|e| e.value.contains(&at) || e.key_start == at)
        .min_by_key(|e| e.value.len());
    // The region the error covers: that value, or a header's whole table.
    let region = match inner {
        Some(e) => e.value.clone(),
        None => {
            let next = s
                .headers
                .iter()
                .map(|(h, _)| *h)
                .find(|h| *h > at)
                .unwrap_or(text.len());
            at..next
        }
    };
    if let Some(v) = quoted {
        let hit = s.entries.iter().find(|e| {
            region.start <= e.value.start && e.value.end <= region.end && {
                let t = &text[e.value.clone()];
                t == v || t.trim_matches('"') == v || t.trim_matches('\'') == v
            }
        });
        if let Some(e) = hit {
            return Some(e.path.clone());
        }
    }
    if let Some(e) = inner {
        return Some(e.path.clone());
    }
    s.headers
        .iter()
        .find(|(h, _)| *h == at)
        .map(|(_, p)| p.clone())
}

/// The byte offset of `field`'s value, for the line/column of a message.
pub fn offset_of(text: &str, field: &str) -> Option<usize> {
    let s = scan(text)?;
    s.entries
        .iter()
        .find(|e| e.path == field)
        .map(|e| e.value.start)
        .or_else(|| s.headers.iter().find(|(_, p)| p == field).map(|(h, _)| *h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_nested_arrays_and_inline_tables() {
        let text = "name = \"x\"\n[[hosts]]\nname = \"a\"\n[[hosts.nics]]\nchip = \"1\"\n\
                    [[hosts]]\nname = \"b\"\n[[hosts.nics]]\nchip = \"2\"\n[[hosts.nics]]\nchip = \"3\"\n\
                    [hosts.nics.moderation]\nkind = \"dim\"\n";
        let at = |needle: &str| text.find(needle).unwrap();
        let f = |needle: &str| field_at(text, at(needle)..at(needle) + 1, None);
        assert_eq!(f("\"1\"").as_deref(), Some("hosts[0].nics[0].chip"));
        assert_eq!(f("\"3\"").as_deref(), Some("hosts[1].nics[1].chip"));
        assert_eq!(
            f("\"dim\"").as_deref(),
            Some("hosts[1].nics[1].moderation.kind")
        );
        let inline = "apps = [\n    { kind = \"udp_sink\", name = \"s\", rcvbuf_bytes = -5 },\n]\n";
        let table = inline.find('{').unwrap();
        assert_eq!(
            field_at(inline, table..table + 10, Some("-5")).as_deref(),
            Some("apps[0].rcvbuf_bytes")
        );
    }
}
