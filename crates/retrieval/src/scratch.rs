//! Dense per-slot scratch that a thread's searches reuse.
//!
//! A search of a 100,000-memory project needs arrays as long as the
//! project (BM25F sums, `lexical`'s own 8-byte variant; which slots the
//! semantic pool holds; where fusion put each slot). Allocated and zeroed per search they were about 1.4 MB
//! a query: `malloc` and `memset` in the profile, and the caches swept
//! clean between two searches. Here each entry carries the number of the
//! search that wrote it (`stamp`), so a new search starts by adding one
//! to the stamp and reads every older entry as empty: nothing is cleared,
//! and only the entries a search touches are written.

/// Values by slot, empty at the start of each [`Stamped::begin`].
pub struct Stamped<T> {
    stamp: u32,
    entries: Vec<(u32, T)>,
}

impl<T: Copy + Default> Default for Stamped<T> {
    fn default() -> Self {
        Self {
            stamp: 0,
            entries: Vec::new(),
        }
    }
}

impl<T: Copy + Default> Stamped<T> {
    /// Starts a search over `slots` slots: every entry is empty.
    pub fn begin(&mut self, slots: usize) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Once in 2³² searches: stamps would repeat, so forget them all.
            self.entries.iter_mut().for_each(|e| e.0 = 0);
            self.stamp = 1;
        }
        if self.entries.len() < slots {
            self.entries.resize(slots, (0, T::default()));
        }
    }

    pub fn get(&self, slot: u32) -> Option<T> {
        let (stamp, value) = self.entries[slot as usize];
        (stamp == self.stamp).then_some(value)
    }

    pub fn contains(&self, slot: u32) -> bool {
        self.entries[slot as usize].0 == self.stamp
    }

    pub fn set(&mut self, slot: u32, value: T) {
        self.entries[slot as usize] = (self.stamp, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_search_sees_nothing_of_the_last_one() {
        let mut s = Stamped::<f32>::default();
        s.begin(10);
        s.set(3, 1.5);
        s.set(4, 2.0);
        assert_eq!((s.get(3), s.get(4), s.get(5)), (Some(1.5), Some(2.0), None));
        assert!(s.contains(4) && !s.contains(5));
        s.begin(12);
        assert!((0..12).all(|slot| s.get(slot).is_none() && !s.contains(slot)));
    }

    #[test]
    fn stamps_that_wrap_do_not_revive_old_entries() {
        let mut s = Stamped::<u32>::default();
        s.begin(4);
        s.set(1, 7);
        // The entry above carries stamp 1; run the stamp round to 1 again.
        s.stamp = u32::MAX;
        for _ in 0..3 {
            s.begin(4);
            assert_eq!(s.get(1), None);
        }
    }
}
