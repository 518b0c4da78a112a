//! A counting allocator for the tests that hold a build or a decode to a memory bound: it counts
//! the bytes the calling thread holds now and the most it held at once since the last reset.
//! Per thread: each test runs on its own thread, and tests run side by side without their
//! allocations mixing. A test binary that includes this module has it as its allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub struct Counting;

thread_local! {
    pub static NOW: Cell<isize> = const { Cell::new(0) };
    pub static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Adds `delta` bytes to the thread's count (nothing while the thread is being torn down).
fn count(delta: isize) {
    let _ = NOW.try_with(|now| {
        now.set(now.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now.get())));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, size) };
        if !q.is_null() {
            count(size as isize - layout.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most memory `f` held at once beyond what was held before it, with what it returned.
#[allow(dead_code)]
pub fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = NOW.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    let peak = PEAK.with(Cell::get) - before;
    (out, peak.max(0) as usize)
}
