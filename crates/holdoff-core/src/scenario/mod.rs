//! Scenario: builds a world from a validated configuration and runs it. The
//! only module that wires components together (`world`); `config` holds the
//! file format and its validation; `report` turns a finished world into the
//! documented outputs.

pub mod config;
pub mod netstack;
pub mod replay;
pub mod report;
pub mod world;

pub use config::Scenario;
pub use world::World;
