//! holdoff-core: a deterministic discrete-event model of NIC interrupt
//! moderation on e1000/igb-class hardware and of the host that services it.
//!
//! ```text
//!  generator / peer ──wire──▶ NIC port ──(RDTR/RADV, TIDV/TADV)──▶ ICR & IMS
//!                               │                                    │
//!                               │ rings, DMA              ITR / EITR throttle
//!                               ▼                                    ▼
//!                         RX/TX descriptors ◀── driver ◀── IRQ line / MSI-X vector
//!                                                 │ (hard IRQ → NAPI softirq)
//!                                                 ▼
//!                                   stack (UDP, ICMP) ──▶ application
//! ```
//!
//! Layers, one direction of dependency (top depends on bottom):
//! `scenario` (wires everything) → `apps` → `host` (cores, profiles, drivers)
//! → `nic` → `wire` → `moderation` (sees only samples) → `metrics` →
//! `engine` → `units`. No PyO3 here; the bindings live in `holdoff-py`.
//!
//! Time is integer nanoseconds (`SimTime`, `Nanos`); same scenario and seed
//! give identical output.

#![forbid(unsafe_code)]

pub mod api;
pub mod apps;
pub mod engine;
pub mod error;
pub mod host;
pub mod input_file;
pub mod metrics;
pub mod moderation;
pub mod nic;
pub mod packet;
pub mod scenario;
pub mod stack;
pub mod units;
pub mod wire;

pub use error::{Error, Result};

/// Crate version, recorded in every report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
