//! The integration tests in one binary: each area's tests are a module of `suite/` (run one
//! area with `cargo test --test runner trust::`). One binary links arrow, parquet, gix and rmcp
//! once instead of once per area. `fuzz` (which limits its own process's memory) and
//! `architecture` (which reads the sources only) stay binaries of their own.

mod common;
mod suite;
