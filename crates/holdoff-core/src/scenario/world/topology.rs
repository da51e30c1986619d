//! A scenario's endpoint, link and route tables, computed once before a
//! world is built (by `build` and `build_apps`), so that building never
//! searches the configuration again.
//!
//! Units: link rates [bit/s], propagation [ns].

use super::Endpoint;
use crate::scenario::config::{parse_rate, LinkCfg, Scenario};
use crate::units::{BitsPerSec, Nanos};
use crate::wire::LinkDir;
use std::collections::BTreeMap;

/// Endpoint, link and route tables of a scenario, computed once so that
/// building never searches the configuration again.
pub(super) struct Topology<'s> {
    /// The endpoint of every "host.nic" and generator name.
    index: BTreeMap<String, Endpoint>,
    /// The link of every endpoint (ports first, then generators).
    pub(super) link: Vec<&'s LinkCfg>,
    /// Host index by name.
    host: BTreeMap<&'s str, u16>,
    /// (from host, to host) -> (local port, remote port): the first link
    /// between the two hosts, in declaration order.
    route: BTreeMap<(&'s str, &'s str), (u16, u16)>,
}

impl<'s> Topology<'s> {
    pub(super) fn new(s: &'s Scenario) -> Self {
        let names = s.endpoint_names();
        let nports: usize = s.hosts.iter().map(|h| h.nics.len()).sum();
        let index: BTreeMap<String, Endpoint> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let ep = if i < nports {
                    Endpoint::Port(i as u16)
                } else {
                    Endpoint::Gen((i - nports) as u16)
                };
                (n.clone(), ep)
            })
            .collect();
        // Validated: every endpoint is on exactly one link.
        let mut link_of: BTreeMap<&str, &LinkCfg> = BTreeMap::new();
        for l in &s.links {
            link_of.insert(&l.a, l);
            link_of.insert(&l.b, l);
        }
        let link = names.iter().map(|ep| link_of[ep.as_str()]).collect();
        let host = s
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.as_str(), i as u16))
            .collect();
        let mut route = BTreeMap::new();
        for l in &s.links {
            for (x, y) in [(&l.a, &l.b), (&l.b, &l.a)] {
                let (Some((hx, _)), Some((hy, _))) = (x.split_once('.'), y.split_once('.')) else {
                    continue;
                };
                if let (Some(&Endpoint::Port(px)), Some(&Endpoint::Port(py))) =
                    (index.get(x.as_str()), index.get(y.as_str()))
                {
                    if hx != hy {
                        route.entry((hx, hy)).or_insert((px, py));
                    }
                }
            }
        }
        Topology {
            index,
            link,
            host,
            route,
        }
    }

    pub(super) fn endpoint(&self, name: &str) -> Endpoint {
        *self.index.get(name).expect("validated endpoint")
    }

    pub(super) fn port(&self, name: &str) -> u16 {
        match self.endpoint(name) {
            Endpoint::Port(p) => p,
            Endpoint::Gen(_) => unreachable!("forwarding is between host NICs"),
        }
    }

    pub(super) fn host(&self, name: &str) -> u16 {
        *self.host.get(name).expect("validated host")
    }

    /// (local port, remote port) from host `from` to host `to`.
    pub(super) fn route(&self, from: &str, to: &str) -> (u16, u16) {
        *self.route.get(&(from, to)).expect("validated route")
    }

    /// The egress link direction of endpoint `ep`.
    pub(super) fn egress(&self, ep: usize) -> LinkDir {
        let l = self.link[ep];
        LinkDir::new(
            BitsPerSec(parse_rate(&l.rate).expect("validated rate")),
            Nanos(l.propagation_ns),
        )
    }
}
