// Indexing allocates many small, short-lived objects (parse trees, tokens) on every core;
// mimalloc's thread-local free lists cut the time glibc malloc spends there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    fn mi_malloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_calloc(count: usize, size: usize) -> *mut std::ffi::c_void;
    fn mi_realloc(p: *mut std::ffi::c_void, size: usize) -> *mut std::ffi::c_void;
    fn mi_free(p: *mut std::ffi::c_void);
}

#[cfg(test)]
unsafe extern "C" {
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_collect(force: bool);
}

/// `mi_option_purge_delay` in `mi_option_t` of the mimalloc (v3) that `libmimalloc-sys`
/// builds: milliseconds from a free to the return of the memory (arenas multiply it by
/// `arena_purge_mult`, 1 by default).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn hold_freed_memory(at_least: std::time::Duration) {
    let ms = at_least.as_millis().clamp(1, std::ffi::c_long::MAX as u128) as std::ffi::c_long;
    // SAFETY: sets one option; mimalloc reads it at each free.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) };
}

fn release_freed_memory() {
    // mimalloc collects the calling thread's heap, and returns what every thread freed to
    // the system as part of it; a thread that never allocated has no heap and returns at once.
    std::hint::black_box(Box::new(0u64));
    // SAFETY: a forced collection of this thread's heap and the process's arenas.
    unsafe { mi_collect(true) };
}

#[cfg(target_os = "linux")]
unsafe extern "C" {
    fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
}

fn main() {
    // No transparent huge pages for this process: mimalloc asks for them, and the kernel then
    // zeroes 2 MB on the first touch of any byte. Most commands are short and read little, so
    // that zeroing was up to a quarter of a search's cycles; indexing measured no slower
    // without them, and its peak memory is lower. SAFETY: PR_SET_THP_DISABLE (41) takes one
    // integer and touches no memory of ours.
    #[cfg(target_os = "linux")]
    unsafe {
        prctl(41, 1 as std::ffi::c_ulong, 0 as std::ffi::c_ulong, 0 as std::ffi::c_ulong, 0 as std::ffi::c_ulong);
    }
    // Tree-sitter's C core allocates its trees through these too. SAFETY: one allocator family,
    // installed before any tree-sitter object exists and never changed afterwards.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: mi_malloc,
            calloc: mi_calloc,
            realloc: mi_realloc,
            free: mi_free,
        }))
    };
    lynx_core::memory::install(lynx_core::memory::Allocator { hold: hold_freed_memory, release: release_freed_memory });
    std::process::exit(lynx::cli::main());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // SAFETY: reads and sets one option of this process's allocator.
        unsafe {
            // mimalloc v3's default purge delay: a different option under this number (another
            // mimalloc version) has another default.
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 1000);
            hold_freed_memory(std::time::Duration::from_secs(30));
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 30_000);
        }
        release_freed_memory();
    }
}
