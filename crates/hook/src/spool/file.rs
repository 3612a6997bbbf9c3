//! The spool file itself: durable appends, bounded size, snapshots, and
//! rewrites without the delivered prefix. Every operation that touches the
//! file holds the append lock and opens the path fresh, so a rewrite (temp
//! file + rename) never loses a line appended around it.

use std::{
    collections::HashSet,
    fs::{File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    os::unix::fs::OpenOptionsExt,
    path::Path,
};

use super::{Entry, Spool, lock, meta};

/// After trimming a full spool, it is brought down to this share of the bound
/// so that the next appends do not each rewrite the whole file.
const TRIM_TO_PERCENT: u64 = 90;

/// What the spool held at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub entries: Vec<Entry>,
    pub bytes: u64,
}

fn read_all(path: &Path) -> std::io::Result<Vec<u8>> {
    match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        other => other,
    }
}

/// The lines of the file, the last one even without its newline. Only called
/// under the append lock, where an unterminated last line is a torn write
/// (it parses, and is kept, only if it was whole).
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty())
}

/// Parses every line, skipping the ones that are not entries.
pub fn parse_all(bytes: &[u8]) -> Vec<Entry> {
    lines(bytes).filter_map(Entry::parse).collect()
}

impl Spool {
    fn lock_path(&self) -> std::path::PathBuf {
        self.sibling("lock")
    }

    pub(super) fn append_lock(&self) -> std::io::Result<lock::AppendGuard> {
        lock::append(&self.lock_path())
    }

    pub fn try_flush_lock(&self) -> std::io::Result<Option<lock::FlushGuard>> {
        lock::try_flush(&self.sibling("flush.lock"))
    }

    pub fn flush_lock(&self) -> std::io::Result<lock::FlushGuard> {
        lock::flush(&self.sibling("flush.lock"))
    }

    /// Appends one event durably (fsync'd before returning). Past the bound,
    /// the oldest lines go first and are counted in the sidecar.
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        super::disk::create_dir(&self.dir)?;
        let line = entry.to_line();
        let _guard = self.append_lock()?;
        let path = self.path();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)?;
        let len = file.metadata()?.len();
        if len + line.len() as u64 + 1 > self.max_bytes {
            drop(file);
            return self.append_trimming(&line);
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        if len > 0 && !ends_with_newline(&mut file, len)? {
            // A torn line from a crash: end it so that ours stays whole.
            buf.push(b'\n');
        }
        buf.extend_from_slice(&line);
        file.write_all(&buf)?;
        file.sync_data()
    }

    /// The rare full-spool case: rewrite without the oldest lines (under the append lock).
    fn append_trimming(&self, line: &[u8]) -> std::io::Result<()> {
        let path = self.path();
        let bytes = read_all(&path)?;
        let target = self.max_bytes * TRIM_TO_PERCENT / 100;
        let kept_lines: Vec<&[u8]> = lines(&bytes).collect();
        let mut total: u64 = kept_lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>() + line.len() as u64;
        let mut start = 0;
        let mut dropped = 0u64;
        while total > target && start < kept_lines.len() {
            total -= kept_lines[start].len() as u64 + 1;
            if Entry::parse(kept_lines[start]).is_some() {
                dropped += 1;
            }
            start += 1;
        }
        let mut out = Vec::with_capacity(total as usize);
        for l in &kept_lines[start..] {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        if (line.len() as u64) <= self.max_bytes {
            out.extend_from_slice(line);
        } else {
            // An event larger than the whole bound cannot be kept.
            dropped += 1;
        }
        meta::add_dropped(&self.sibling("meta"), dropped)?;
        super::disk::write_atomic(&path, &out)
    }

    /// The oldest entry waiting, read without the rest of the file: a hook
    /// behind a backlog tries it first, so a server that is still away costs
    /// one line, not the whole spool.
    pub fn head(&self) -> std::io::Result<Option<Entry>> {
        use std::io::BufRead;
        let _guard = self.append_lock()?;
        let file = match File::open(self.path()) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            other => other?,
        };
        let mut reader = std::io::BufReader::new(file);
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                return Ok(None);
            }
            if let Some(entry) = Entry::parse(line.strip_suffix(b"\n").unwrap_or(&line)) {
                return Ok(Some(entry));
            }
        }
    }

    /// Every entry waiting, in order (under the append lock, so no write is half done).
    pub fn snapshot(&self) -> std::io::Result<Snapshot> {
        let _guard = self.append_lock()?;
        let bytes = read_all(&self.path())?;
        Ok(Snapshot {
            entries: parse_all(&bytes),
            bytes: bytes.len() as u64,
        })
    }

    /// Rewrites the file without its leading delivered entries (and any
    /// unreadable lines among them). Matching by key rather than by offset
    /// keeps this right even if a full spool was trimmed in between.
    pub fn remove_delivered(&self, delivered: &HashSet<String>) -> std::io::Result<()> {
        let _guard = self.append_lock()?;
        let path = self.path();
        let bytes = read_all(&path)?;
        let mut cut = 0;
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            match Entry::parse(line.strip_suffix(b"\n").unwrap_or(line)) {
                Some(entry) if !delivered.contains(&entry.key) => break,
                _ => cut += line.len(),
            }
        }
        if cut == 0 {
            return Ok(());
        }
        super::disk::write_atomic(&path, &bytes[cut..])
    }

    /// Under the append lock: when nothing deliverable is left, empties the
    /// file (of torn remains) and returns true with the lock still held, so
    /// that the caller can release the flush lock before any append can land.
    pub(super) fn check_drained(&self) -> std::io::Result<Option<lock::AppendGuard>> {
        let guard = self.append_lock()?;
        let path = self.path();
        let bytes = read_all(&path)?;
        if lines(&bytes).any(|l| Entry::parse(l).is_some()) {
            return Ok(None);
        }
        if !bytes.is_empty() {
            super::disk::write_atomic(&path, b"")?;
        }
        Ok(Some(guard))
    }
}

fn ends_with_newline(file: &mut File, len: u64) -> std::io::Result<bool> {
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    fn entry(i: usize) -> Entry {
        let body = RawValue::from_string(format!(r#"{{"i":{i}}}"#)).unwrap();
        Entry::new("claude-code", &format!("k{i}"), i as i64, "", body)
    }

    fn spool(dir: &Path, max: u64) -> Spool {
        Spool::new(dir, "http://x", "t", max)
    }

    fn keys(s: &Spool) -> Vec<String> {
        s.snapshot().unwrap().entries.into_iter().map(|e| e.key).collect()
    }

    #[test]
    fn appends_are_private_and_read_back_in_order() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("spool");
        let s = spool(&dir, 1 << 20);
        for i in 0..3 {
            s.append(&entry(i)).unwrap();
        }
        assert_eq!(keys(&s), ["k0", "k1", "k2"]);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&s.path()), 0o600);
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn the_head_is_the_oldest_whole_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let s = spool(tmp.path(), 1 << 20);
        assert!(s.head().unwrap().is_none());
        std::fs::create_dir_all(tmp.path()).unwrap();
        std::fs::write(s.path(), b"{torn\n").unwrap();
        s.append(&entry(1)).unwrap();
        s.append(&entry(2)).unwrap();
        assert_eq!(s.head().unwrap().unwrap().key, entry(1).key);
    }

    #[test]
    fn a_torn_line_loses_nothing_around_it() {
        let tmp = tempfile::tempdir().unwrap();
        let s = spool(tmp.path(), 1 << 20);
        s.append(&entry(0)).unwrap();
        s.append(&entry(1)).unwrap();
        let torn = entry(2).to_line();
        let mut f = OpenOptions::new().append(true).open(s.path()).unwrap();
        f.write_all(&torn[..torn.len() / 2]).unwrap();
        assert_eq!(keys(&s), ["k0", "k1"]);
        s.append(&entry(3)).unwrap();
        assert_eq!(keys(&s), ["k0", "k1", "k3"]);
    }

    #[test]
    fn delivered_prefix_is_removed_and_the_rest_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let s = spool(tmp.path(), 1 << 20);
        for i in 0..5 {
            s.append(&entry(i)).unwrap();
        }
        let done: HashSet<String> = ["k0", "k1", "k3"].iter().map(|k| k.to_string()).collect();
        s.remove_delivered(&done).unwrap();
        // k3 is not in the prefix: it stays until everything before it went.
        assert_eq!(keys(&s), ["k2", "k3", "k4"]);
    }

    #[test]
    fn the_bound_drops_the_oldest_and_counts_them() {
        let tmp = tempfile::tempdir().unwrap();
        let line = entry(0).to_line().len() as u64;
        let s = spool(tmp.path(), line * 10);
        for i in 0..25 {
            s.append(&entry(i)).unwrap();
        }
        let left = keys(&s);
        assert!(std::fs::metadata(s.path()).unwrap().len() <= line * 10);
        assert_eq!(left.last().unwrap(), "k24");
        assert_eq!(s.dropped() + left.len() as u64, 25);
        let first: usize = left[0][1..].parse().unwrap();
        assert_eq!(first as u64, s.dropped(), "only the oldest were dropped");
    }
}
