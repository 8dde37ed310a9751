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

fn main() {
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
