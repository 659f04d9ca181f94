//! Caches shared by every snapshot: kernel results by content hash, compiler output by content
//! hash, parsed interface files by modification time, and computed barrier fixes.

use crate::Stats;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A small least-recently-used map; eviction scans, which is fine at these sizes.
pub(crate) struct Lru<K, V> {
    map: HashMap<K, (u64, V)>,
    tick: u64,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    pub fn new(cap: usize) -> Self {
        Lru { map: HashMap::new(), tick: 0, cap }
    }

    pub fn get(&mut self, k: &K) -> Option<V> {
        self.tick += 1;
        let t = self.tick;
        self.map.get_mut(k).map(|e| {
            e.0 = t;
            e.1.clone()
        })
    }

    pub fn insert(&mut self, k: K, v: V) {
        self.tick += 1;
        if self.map.len() >= self.cap && !self.map.contains_key(&k) {
            let drop = self.map.len() / 8 + 1;
            let mut ticks: Vec<(u64, K)> = self.map.iter().map(|(k, (t, _))| (*t, k.clone())).collect();
            ticks.sort_by_key(|(t, _)| *t);
            for (_, k) in ticks.into_iter().take(drop) {
                self.map.remove(&k);
            }
        }
        self.map.insert(k, (self.tick, v));
    }

    pub fn remove(&mut self, k: &K) {
        self.map.remove(k);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }
}

/// The cache entries one file's last analysis used, so "re-check this file" can drop them.
#[derive(Default, Clone)]
pub(crate) struct FileKeys {
    pub kernels: Vec<u64>,
    pub compile: Option<u64>,
}

pub(crate) struct Db {
    pub kernels: Mutex<Lru<u64, Arc<crate::analyse::CachedKernel>>>,
    pub compiles: Mutex<Lru<u64, Arc<crate::analyse::Compiled>>>,
    pub fixes: Mutex<Lru<u64, Option<crate::Fix>>>,
    pub inputs: crate::inputs::InputCache,
    by_file: Mutex<HashMap<String, FileKeys>>,
    /// Idle solver processes, reused across analyses (starting one costs milliseconds).
    solvers: Mutex<Vec<check::Solver>>,
    kernel_checks: AtomicU64,
    compiles_run: AtomicU64,
}

impl Default for Db {
    fn default() -> Self {
        Db {
            kernels: Mutex::new(Lru::new(4096)),
            compiles: Mutex::new(Lru::new(64)),
            fixes: Mutex::new(Lru::new(256)),
            inputs: Default::default(),
            by_file: Mutex::default(),
            solvers: Mutex::default(),
            kernel_checks: AtomicU64::new(0),
            compiles_run: AtomicU64::new(0),
        }
    }
}

/// Locks a cache; a panic elsewhere while it was held leaves it usable (the data is a cache).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Idle solvers kept for reuse; more run at once when analyses run in parallel.
const IDLE_SOLVERS: usize = 4;

impl Db {
    /// Runs `f` with a solver of its own from the pool. A solver that was in use when `f`
    /// panicked may be mid-query: it is dropped (its process killed), not returned.
    pub fn with_solver<T>(&self, f: impl FnOnce(&mut check::Solver) -> T) -> T {
        let mut solver = lock(&self.solvers).pop().unwrap_or_default();
        let out = f(&mut solver);
        let mut pool = lock(&self.solvers);
        if pool.len() < IDLE_SOLVERS {
            pool.push(solver);
        }
        out
    }

    pub fn count_check(&self) {
        self.kernel_checks.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_compile(&self) {
        self.compiles_run.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stats(&self) -> Stats {
        Stats {
            kernel_checks: self.kernel_checks.load(Ordering::Relaxed),
            compiles: self.compiles_run.load(Ordering::Relaxed),
            cached_kernels: lock(&self.kernels).len(),
        }
    }

    pub fn record_file(&self, key: &str, keys: FileKeys) {
        lock(&self.by_file).insert(key.to_string(), keys);
    }

    pub fn forget_file(&self, key: &str) {
        lock(&self.by_file).remove(key);
    }

    pub fn invalidate_file(&self, key: &str) {
        let Some(keys) = lock(&self.by_file).remove(key) else { return };
        let mut kernels = lock(&self.kernels);
        for k in &keys.kernels {
            kernels.remove(k);
        }
        drop(kernels);
        if let Some(c) = keys.compile {
            lock(&self.compiles).remove(&c);
        }
    }
}
