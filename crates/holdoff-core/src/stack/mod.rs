//! The network stack above the driver: UDP and ICMP delivery (in
//! `scenario::world`, where sockets meet applications) and a Linux-like TCP
//! endpoint (`tcp`), a pure state machine the world drives.

pub mod tcp;
