//! A bounded pool of analysis threads, separate from the runtime that reads and writes the
//! protocol: however many analyses are queued, the server keeps answering requests (including
//! `shutdown`). Superseded analyses are cancelled by the analysis host and finish within
//! milliseconds when their turn comes.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send + 'static>;

pub struct Pool {
    jobs: Mutex<Sender<Job>>,
}

impl Pool {
    /// A pool of `threads` workers (at least one).
    pub fn new(threads: usize) -> Pool {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let rx = rx.clone();
            let _ = std::thread::Builder::new().name(format!("lark-analysis-{i}")).spawn(move || worker(&rx));
        }
        Pool { jobs: Mutex::new(tx) }
    }

    /// A pool with one worker per core.
    pub fn per_core() -> Pool {
        Pool::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    /// Runs `f` on a worker without waiting for it; a panic in `f` is logged.
    pub fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        let job: Job = Box::new(move || {
            if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
                crate::log::error!("a background job failed: {}", crate::guard::panic_message(&*p));
            }
        });
        let _ = crate::state::lock(&self.jobs).send(job);
    }

    /// Runs `f` on a worker; a panic in `f` comes back as `Err` with its message.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| crate::guard::panic_message(&*p));
            let _ = tx.send(r);
        });
        crate::state::lock(&self.jobs).send(job).map_err(|_| "the analysis pool has stopped".to_string())?;
        rx.await.map_err(|_| "the analysis was dropped".to_string())?
    }
}

fn worker(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock() {
            Ok(r) => r.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}
