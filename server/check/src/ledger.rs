//! One witness per key, with checks answered in parallel.
//!
//! A kernel's checks are numbered, and the report keeps what checking them one after another
//! would give: for each key (a pair of source lines, a line and array, a line and kind of
//! barrier), the first check with a witness, and nothing after it; the later checks of that key
//! would each cost their queries, witness tiers and a replay for a finding the report drops.
//! Workers answer the checks in parallel, so a worker asks [`FirstWitness::worth_checking`]
//! before it checks number `n`: it skips only when a witness *before* `n` is known, which a
//! sequential run would have had too. [`FirstWitness::select`] then applies the sequential rule
//! to the outcomes exactly, so the report never depends on the workers' timing.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// The first check (by number) with a witness, for each key, as far as known.
pub struct FirstWitness<K> {
    witnessed: Mutex<HashMap<K, usize>>,
}

impl<K> Default for FirstWitness<K> {
    fn default() -> Self {
        FirstWitness { witnessed: Mutex::new(HashMap::new()) }
    }
}

impl<K: Hash + Eq> FirstWitness<K> {
    /// Whether check `n` with `key` may still be reported: no check before it with that key has
    /// a witness, as far as known. A check without a key is always reported.
    pub fn worth_checking(&self, key: Option<&K>, n: usize) -> bool {
        let Some(key) = key else { return true };
        self.lock().get(key).is_none_or(|&first| first >= n)
    }

    /// Records that check `n` with `key` found a witness.
    pub fn record_witness(&self, key: Option<K>, n: usize) {
        let Some(key) = key else { return };
        let mut witnessed = self.lock();
        let first = witnessed.entry(key).or_insert(n);
        *first = (*first).min(n);
    }

    /// How many keys have a witness at a check before `n`, as far as known.
    pub fn keys_witnessed_before(&self, n: usize) -> usize {
        self.lock().values().filter(|&&first| first < n).count()
    }

    /// The outcomes a sequential run reports, from `outcomes` (check number and outcome, for
    /// the checks that have one): for each key, nothing after its first witness.
    pub fn select<O>(outcomes: Vec<(usize, O)>, key: impl Fn(usize) -> Option<K>, is_witness: impl Fn(&O) -> bool) -> Vec<O> {
        let mut first: HashMap<K, usize> = HashMap::new();
        for (n, o) in &outcomes {
            if let (true, Some(k)) = (is_witness(o), key(*n)) {
                let f = first.entry(k).or_insert(*n);
                *f = (*f).min(*n);
            }
        }
        outcomes.into_iter().filter(|(n, _)| key(*n).and_then(|k| first.get(&k).copied()).is_none_or(|f| *n <= f)).map(|(_, o)| o).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, usize>> {
        // A worker that panicked while holding the lock left the map consistent (each update
        // is one insert or min), and the panic is resumed when the workers are joined.
        self.witnessed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::FirstWitness;

    #[test]
    fn a_check_is_skipped_only_after_an_earlier_witness_of_its_key() {
        let ledger = FirstWitness::<u32>::default();
        ledger.record_witness(Some(7), 5);
        assert!(ledger.worth_checking(Some(&7), 3), "a witness after it says nothing");
        assert!(ledger.worth_checking(Some(&7), 5), "the witness's own check");
        assert!(!ledger.worth_checking(Some(&7), 6));
        assert!(ledger.worth_checking(Some(&8), 6), "another key");
        assert!(ledger.worth_checking(None, 6), "no key: never skipped");
        ledger.record_witness(Some(7), 2);
        assert!(!ledger.worth_checking(Some(&7), 3), "the earliest witness counts");
        assert_eq!(ledger.keys_witnessed_before(3), 1);
        assert_eq!(ledger.keys_witnessed_before(2), 0);
    }

    #[test]
    fn selection_keeps_what_checking_in_order_would_report() {
        // Checks 0..5; keys: 0 and 2 share key 1, 3 and 4 share key 2, 1 has none.
        let key = |n: usize| match n {
            0 | 2 => Some(1),
            3 | 4 => Some(2),
            _ => None,
        };
        // (check, witness?): check 4's witness came first in time, check 3's undecided outcome
        // still comes before it; check 2 is after key 1's first witness (check 0).
        let outcomes = vec![(0, true), (1, true), (2, true), (3, false), (4, true)];
        let kept = FirstWitness::select(outcomes.into_iter().map(|(n, w)| (n, (n, w))).collect(), key, |o| o.1);
        assert_eq!(kept, vec![(0, true), (1, true), (3, false), (4, true)]);
    }
}
