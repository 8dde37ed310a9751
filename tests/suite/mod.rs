//! The integration tests, one module per area (`runner::trust::…` is tests/suite/trust.rs).
mod adopt;
mod agent_context;
mod chunking;
mod cli_conventions;
mod cli_help;
mod corruption;
mod data_access;
mod decoders;
mod dense_index;
#[cfg(all(feature = "docs", feature = "ui", feature = "mcp"))]
mod doc_sources;
mod embeddings;
mod encodings;
mod evaluate;
mod freshness;
mod graph;
mod index_views;
mod integrate;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod mcp_client;
mod models;
mod ranking;
// What README.md promises is the whole product.
#[cfg(all(feature = "docs", feature = "ui", feature = "mcp"))]
mod readme_commands;
mod remote;
mod remote_store;
mod robustness;
mod scip;
mod segments_sql;
mod trust;
#[cfg(feature = "ui")]
mod ui;
mod views;
mod workflows;
mod workspace;
