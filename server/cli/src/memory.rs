//! The memory ceiling: an allocator that counts the bytes the process holds (in
//! `model::budget::ALLOCATED`), and the ceiling every check's budget compares them with.
//!
//! A check that needs more (an exact rational that keeps growing, a replay over a huge launch,
//! the normal forms of a long reduction) stops as `uncertified` with the reason, instead of
//! taking the editor's machine down. The ceiling is `LARK_MEMORY_MB`, else half of the
//! machine's memory.

use model::budget::ALLOCATED;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::Ordering::Relaxed;

pub struct Counting;

// SAFETY: every call is passed to `System` unchanged; only the byte count is kept beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            ALLOCATED.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            ALLOCATED.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        ALLOCATED.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                ALLOCATED.fetch_add(new_size - layout.size(), Relaxed);
            } else {
                ALLOCATED.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

/// Sets the ceiling from `LARK_MEMORY_MB`, else half of the machine's memory (`/proc/meminfo`);
/// an unreadable setting is reported and the default used.
pub fn set_ceiling() {
    let from_env = std::env::var("LARK_MEMORY_MB").ok().map(|v| match v.trim().parse::<usize>() {
        Ok(mb) => Some(mb),
        Err(_) => {
            eprintln!("lark: LARK_MEMORY_MB: expected a number of megabytes, found `{v}`; using the default");
            None
        }
    });
    let mb = from_env.flatten().or_else(|| machine_mb().map(|m| m / 2));
    if let Some(mb) = mb {
        model::budget::set_memory_ceiling(mb.saturating_mul(1 << 20));
    }
}

fn machine_mb() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: usize = info.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}
