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
    std::process::exit(lynx::cli::main());
}
