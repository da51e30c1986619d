//! Receive-side scaling (RSS): how a multi-queue port picks the receive
//! queue of a frame from its headers.
//!
//! Models:
//! - Hash: the Toeplitz hash of the Microsoft RSS specification ("RSS
//!   Hashing Functions"; "Verifying the RSS Hash Calculation") with a
//!   40-byte key, over the fields the frame's flow type uses, in the order
//!   source address, destination address, source port, destination port.
//!   IPv4/IPv6 TCP hash the 4-tuple; UDP hashes the addresses only unless
//!   `rx_flow_hash_udp4 = "sdfn"` (Linux ixgbe `ixgbe_set_rss_hash_opt`,
//!   drivers/net/ethernet/intel/ixgbe/ixgbe_ethtool.c: UDP port hashing is
//!   off by default and `ethtool -N ethX rx-flow-hash udp4 sdfn` turns it
//!   on, with the driver's warning that fragmented datagrams may then
//!   arrive out of order); other IP protocols hash the addresses; non-IP
//!   frames are not hashed and go to queue 0 (the redirection table's
//!   entry 0 is not consulted: ixgbe `ixgbe_setup_mrqc` leaves the default
//!   queue of MRQC at 0).
//! - Key: a port setting (`rss_key`); default: the verification key of the
//!   Microsoft specification (the key DPDK's testpmd also uses by default).
//!   Linux fills a random key at boot (`netdev_rss_key_fill`,
//!   net/core/ethtool.c), so a real port's queue choice differs from boot
//!   to boot; the model needs a fixed one to stay deterministic.
//! - Redirection table (RETA): `reta_entries` entries (the chip's: 128 on
//!   82576/I350/82599/X540, 512 on X550), indexed by the low log2(entries)
//!   bits of the hash (Documentation/networking/scaling.rst: "the low order
//!   seven bits of the computed hash" for a 128-entry table). Filled either
//!   by equal spreading, entry j -> queue j mod queues (ixgbe
//!   `ixgbe_setup_reta`, the default `ethtool_rxfh_indir_default`), or by
//!   weights as `ethtool -X ethX weight w0 w1 ...` fills it (ethtool.c
//!   `fill_indir_table`: entry i goes to the first queue j whose cumulative
//!   weight share exceeds i, `i < size * partial / sum`).
//!
//! Simplifies: no extra RSS contexts, no n-tuple (Flow Director) rules, no
//! symmetric-hash variants; the hash is computed once per flow at the
//! sender (a generator's frames all reach one port, so precomputing the
//! hash the receiving port would compute over their headers changes
//! nothing), and a frame carries its low 15 bits (`Packet::rss`, `tag`).
//! TCP segments, ICMP messages and UDP sent by modelled hosts carry no
//! 5-tuple in this version: in RSS mode they index the table by their
//! connection (or application) index instead of a hash. A forwarding host
//! passes a frame on with the hash its first port computed (the same on
//! the next port when both use the same key and fields).
//!
//! Units: none (bytes of keys and headers, table indices).

use std::net::IpAddr;

/// Length of an RSS key [bytes] (ixgbe: ten 32-bit RSSRK registers).
pub const KEY_BYTES: usize = 40;

/// The verification key of the Microsoft RSS specification ("Verifying the
/// RSS Hash Calculation"): the default `rss_key`.
pub const MS_VERIFICATION_KEY: [u8; KEY_BYTES] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Bit 15 of `Packet::rss`: the frame carries a hash (bits 0-14 are its
/// low 15 bits, enough for tables of up to 32768 entries).
pub const HASHED: u16 = 0x8000;

/// A hash as a frame carries it (`Packet::rss`).
#[inline]
pub const fn tag(hash: u32) -> u16 {
    (hash as u16 & !HASHED) | HASHED
}

/// Longest hash input [bytes]: IPv6 addresses (32) and ports (4).
const MAX_INPUT: usize = 36;

/// IP protocol numbers the hash distinguishes.
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// The header fields RSS may hash: addresses, protocol and ports (ports
/// are 0 for protocols without them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
}

/// Toeplitz hash of `input` with `key`: for every set bit i of the input
/// (most significant bit of byte 0 first), XOR in the 32 key bits starting
/// at bit i. `input` is at most `KEY_BYTES - 4` bytes.
pub fn toeplitz(key: &[u8; KEY_BYTES], input: &[u8]) -> u32 {
    debug_assert!(input.len() <= MAX_INPUT);
    let mut result = 0u32;
    let mut window = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    for (i, &byte) in input.iter().enumerate() {
        let next = key.get(i + 4).copied().unwrap_or(0);
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                result ^= window;
            }
            window = (window << 1) | u32::from((next >> (7 - bit)) & 1);
        }
    }
    result
}

/// Which fields a port hashes (`ethtool -N ethX rx-flow-hash ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashFields {
    /// UDP over IPv4 and IPv6 also hashes the ports ("sdfn"); default
    /// addresses only ("sd").
    pub udp_ports: bool,
}

/// A port's RSS: key, hashed fields and redirection table.
#[derive(Clone, Debug)]
pub struct Rss {
    /// The key's contribution of every value of every input byte: entry
    /// [i][b] is the Toeplitz hash of byte value b at input position i (the
    /// hash is linear over XOR, so a whole input's hash is the XOR of its
    /// bytes' entries: one lookup per byte instead of eight shifts).
    tables: Box<[[u32; 256]; MAX_INPUT]>,
    fields: HashFields,
    /// Queue of each table entry; the length is a power of two.
    reta: Vec<u16>,
}

/// How the redirection table is filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetaFill {
    /// Entry j -> queue j mod queues.
    Equal,
    /// `ethtool -X weight`: queue j gets a share weights[j] / sum.
    Weights(Vec<u32>),
}

/// Why a redirection table cannot be built (the caller names the field).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetaError {
    /// More weights than queues.
    TooManyWeights { weights: usize, queues: u32 },
    /// All weights are zero.
    ZeroSum,
    /// The weights add up to more than the table has entries.
    SumOverSize { sum: u64, entries: u32 },
}

impl std::fmt::Display for RetaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetaError::TooManyWeights { weights, queues } => write!(
                f,
                "got {weights} weights for {queues} queue(s); give at most one weight per queue"
            ),
            RetaError::ZeroSum => write!(f, "at least one weight must be non-zero"),
            RetaError::SumOverSize { sum, entries } => write!(
                f,
                "the weights add up to {sum}, more than the {entries} entries of the \
                 redirection table; scale them down"
            ),
        }
    }
}

/// The redirection table of `entries` entries (a power of two) over
/// `queues` queues.
pub fn fill_reta(entries: u32, queues: u32, fill: &RetaFill) -> Result<Vec<u16>, RetaError> {
    debug_assert!(entries.is_power_of_two() && entries <= 32768 && queues >= 1);
    match fill {
        RetaFill::Equal => Ok((0..entries).map(|j| (j % queues) as u16).collect()),
        RetaFill::Weights(w) => {
            if w.len() > queues as usize {
                return Err(RetaError::TooManyWeights {
                    weights: w.len(),
                    queues,
                });
            }
            let sum: u64 = w.iter().map(|&x| u64::from(x)).sum();
            if sum == 0 {
                return Err(RetaError::ZeroSum);
            }
            if sum > u64::from(entries) {
                return Err(RetaError::SumOverSize { sum, entries });
            }
            let size = u64::from(entries);
            let mut table = Vec::with_capacity(entries as usize);
            // Queue j covers the entries i with
            // size * (w0 + .. + w(j-1)) / sum <= i < size * (w0 + .. + wj) / sum.
            let (mut j, mut partial) = (0usize, 0u64);
            for i in 0..size {
                while i >= size * partial / sum {
                    partial += u64::from(w[j]);
                    j += 1;
                }
                table.push((j - 1) as u16);
            }
            Ok(table)
        }
    }
}

impl Rss {
    /// A port's RSS from its key, hashed fields and filled table.
    pub fn new(key: [u8; KEY_BYTES], fields: HashFields, reta: Vec<u16>) -> Rss {
        debug_assert!(reta.len().is_power_of_two());
        let mut tables = Box::new([[0u32; 256]; MAX_INPUT]);
        let mut input = [0u8; MAX_INPUT];
        for (i, t) in tables.iter_mut().enumerate() {
            // Each bit alone, then every byte value as the XOR of its bits.
            let mut bit_hash = [0u32; 8];
            for (bit, h) in bit_hash.iter_mut().enumerate() {
                input[i] = 0x80 >> bit;
                *h = toeplitz(&key, &input[..=i]);
            }
            input[i] = 0;
            for (b, e) in t.iter_mut().enumerate() {
                *e = (0..8)
                    .filter(|bit| b & (0x80 >> bit) != 0)
                    .fold(0, |acc, bit| acc ^ bit_hash[bit]);
            }
        }
        Rss {
            tables,
            fields,
            reta,
        }
    }

    /// The 32-bit hash the port computes over a frame with these headers.
    pub fn hash(&self, t: &FiveTuple) -> u32 {
        let mut input = [0u8; MAX_INPUT];
        let mut n = 0;
        for a in [t.src, t.dst] {
            match a {
                IpAddr::V4(v) => {
                    input[n..n + 4].copy_from_slice(&v.octets());
                    n += 4;
                }
                IpAddr::V6(v) => {
                    input[n..n + 16].copy_from_slice(&v.octets());
                    n += 16;
                }
            }
        }
        let ports = t.proto == PROTO_TCP || (t.proto == PROTO_UDP && self.fields.udp_ports);
        if ports {
            input[n..n + 2].copy_from_slice(&t.sport.to_be_bytes());
            input[n + 2..n + 4].copy_from_slice(&t.dport.to_be_bytes());
            n += 4;
        }
        input[..n]
            .iter()
            .zip(self.tables.iter())
            .fold(0, |acc, (&b, t)| acc ^ t[b as usize])
    }

    /// The redirection table (queue per entry).
    pub fn reta(&self) -> &[u16] {
        &self.reta
    }

    /// The queue of a frame whose hash has these low bits (the table has
    /// at most 32768 entries, so bit 15 is never an index bit).
    #[inline(always)]
    pub fn queue_of_hash(&self, hash_low: u16) -> u16 {
        self.reta[hash_low as usize & (self.reta.len() - 1)]
    }
}

/// Parse a key written as 40 hex bytes, with or without ':' separators
/// (`ethtool -X ethX hkey 6d:5a:...`).
pub fn parse_key(s: &str) -> Result<[u8; KEY_BYTES], String> {
    let hex: String = s.chars().filter(|c| *c != ':').collect();
    if hex.len() != 2 * KEY_BYTES || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "got {s:?}; allowed: {KEY_BYTES} bytes in hex, e.g. \"6d:5a:56:da:...\" \
             ({} hex digits, ':' separators optional)",
            2 * KEY_BYTES
        ));
    }
    let mut key = [0u8; KEY_BYTES];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("checked hex digits");
    }
    Ok(key)
}

#[cfg(test)]
mod tests;
