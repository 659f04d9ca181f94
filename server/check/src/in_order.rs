//! A map over items on several threads, with the results in the items' order.
//!
//! The replays that turn a check's counterexamples into findings are independent of one another
//! (runs they share are made once, see `runs`), and were the longest part of a check on kernels
//! with many candidates (llm.c's tiled matmul: 0.9 s of replays after 0.3 s of questions). The
//! report lists what they find in the order of the candidates, whichever thread finished first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` of each item, on up to `threads` threads (the calling thread alone for one thread or one
/// item), taken in the order `schedule` lists their indices (every index once), the results in
/// the items' order. A panic in `f` is raised again here.
pub fn map<T: Send, R: Send>(items: Vec<T>, schedule: &[usize], threads: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    debug_assert!({
        let mut sorted = schedule.to_vec();
        sorted.sort_unstable();
        sorted == (0..n).collect::<Vec<_>>()
    });
    let threads = threads.min(n);
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    // Each item is taken once, by whichever thread comes for the next.
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let take = |i: usize| items[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let Some(&i) = schedule.get(next.fetch_add(1, Ordering::Relaxed)) else { return out };
                        if let Some(item) = take(i) {
                            out.push((i, f(item)));
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let mut results: Vec<Option<R>> = (0..n).map(|_| None).collect();
    for (i, r) in done.into_iter().flatten() {
        results[i] = Some(r);
    }
    results.into_iter().map(|r| r.expect("every item was mapped")).collect()
}

/// A schedule for [`map`]: the items grouped by `same` key (an item without a key is a group of
/// its own), the first item of each group in the items' order, then the second of each, and so
/// on.
pub fn round_robin<K>(keys: &[Option<K>], same: impl Fn(&K, &K) -> bool) -> Vec<usize> {
    // Each group's key and how many of its items are listed so far.
    let mut groups: Vec<(Option<&K>, usize)> = Vec::new();
    let mut keyed: Vec<(usize, usize, usize)> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let found = key.as_ref().and_then(|k| groups.iter().position(|(g, _)| g.is_some_and(|g| same(g, k))));
        let group = found.unwrap_or_else(|| {
            groups.push((key.as_ref(), 0));
            groups.len() - 1
        });
        keyed.push((groups[group].1, group, i));
        groups[group].1 += 1;
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    /// One of each key first, in the items' order, then the second of each; items without a
    /// key are groups of their own.
    #[test]
    fn round_robin_takes_one_of_each_group_first() {
        let keys = [Some('a'), Some('a'), Some('a'), None, Some('b'), Some('b'), None, Some('c')];
        assert_eq!(super::round_robin(&keys, |x, y| x == y), vec![0, 3, 4, 6, 7, 1, 5, 2]);
        assert!(super::round_robin::<u8>(&[], |x, y| x == y).is_empty());
    }

    /// Results come in the items' order whatever order the schedule takes them in and the
    /// threads finish in, and every item is mapped once.
    #[test]
    fn results_keep_the_items_order() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let backwards: Vec<usize> = (0..20).rev().collect();
        let out = super::map((0..20u64).collect(), &backwards, 3, |i| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis((20 - i) % 7));
            i * i
        });
        assert_eq!(out, (0..20u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 20);
        assert_eq!(super::map(vec![1, 2], &[1, 0], 1, |i| i + 1), vec![2, 3]);
        assert!(super::map(Vec::<u8>::new(), &[], 4, |i| i).is_empty());
    }
}
