//! Errors the core reports: a TOML syntax or type error, an invalid
//! scenario field, or a run that could not complete.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The scenario text is not valid TOML or does not match the schema.
    #[error("scenario parse error: {message}")]
    Parse { message: String },
    /// A field has a value that is not allowed.
    #[error("invalid scenario field `{field}`: {message}")]
    Config { field: String, message: String },
    /// The simulation could not complete (e.g. the packet ledger did not balance).
    #[error("simulation error: {message}")]
    Run { message: String },
}

pub type Result<T> = std::result::Result<T, Error>;
