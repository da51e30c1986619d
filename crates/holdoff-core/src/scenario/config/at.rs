//! Changes during a run: the `[[at]]` tables of a scenario.
//!
//! ```toml
//! [[at]]
//! t_ms = 500
//! set = { "hosts[0].nics[0].moderation.enable_aim" = 2 }
//! ```
//!
//! At simulated time `t_ms` every `path = value` of `set` is applied, as
//! an operator's `sysctl` or `ethtool -C` in another terminal would be. A
//! path has the syntax of `holdoff run --set` and of sweep parameters
//! (names and list indices, `[*]` for every element; a missing last name or
//! table on the way is created, a list index must exist) and means the same
//! thing: [`set_path`] is the same operation as the Python `set_path`, and a
//! test runs both on the same paths.
//!
//! Validation, at load time: the changes are applied cumulatively in time
//! order (tables with equal `t_ms` in file order, the paths of one table in
//! sorted order) to the scenario in effect, and each resulting scenario is
//! read and validated as a whole, so an error names `at[i].set."path"`
//! and the rule it breaks. The difference each path makes is then
//! classified: only what a running system can change may differ
//! ([`LIVE_FIELDS`]): a moderation setting its kind accepts at run time
//! (`ModeratorConfig::live_change`, documented per kind with the driver
//! source), the TCP timers `delack_us` and `rto_min_ms`, and a generator's
//! offered rate and on/off switch. Topology (hosts, NICs, links,
//! applications), ring sizes, drivers, chips, profiles and the moderation
//! kind are fixed when the interfaces come up.
//!
//! Simplifies: a change takes one event at its instant, the first event of
//! that instant (`World::init` schedules changes first); the driver's own
//! CPU cost of the sysctl or ethtool call is not charged.
//!
//! Units: `t_ms` [ms] of simulated time, as `duration_ms`.

use super::{cfg_err, traffic, GeneratorCfg, HostCfg, ModerationCfg, NicCfg, Scenario};
use crate::error::Error;
use crate::moderation::LiveChange;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Most `[[at]]` tables, and most paths in all of them together.
pub const MAX_CHANGES: usize = 10_000;
/// Most hosts and generators all the changes touch together [elements]: a
/// path inside one element counts 1, a `[*]` path every element of its
/// list, any other path every host and generator (the whole scenario is
/// validated again). Each touched element is read and validated at load
/// (about 10 us for a NIC setting: 200 [*] changes on 1 000 hosts took
/// 2.0 s) and may hold an edit until the run ends: 200 000 keep the check
/// to seconds and the edits to tens of MB.
pub const MAX_CHANGE_ELEMENTS: usize = 200_000;

/// One `[[at]]` table: the paths set at simulated time `t_ms`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtCfg {
    /// Simulated time of the change [ms], 0 to below `duration_ms` (at
    /// most 3599999).
    #[schemars(range(min = 0, max = 3_599_999))]
    pub t_ms: u64,
    /// Field paths (the `--set` syntax) and their new values, e.g.
    /// `{ "hosts[0].nics[0].moderation.enable_aim" = 2 }`.
    #[serde(deserialize_with = "finite::finite_values")]
    pub set: BTreeMap<String, Value>,
}

/// What can change during a run, for messages.
pub const LIVE_FIELDS: &str = "hosts[i].nics[j].moderation.<a run-time setting of its kind: \
     static: every field; e1000-itr: interrupt_throttle_rate; igb: rx_usecs; \
     freebsd-aim: enable_aim>, hosts[i].tcp.delack_us, hosts[i].tcp.rto_min_ms, \
     generators[i].rate_pps, generators[i].load, generators[i].enabled";

/// One piece of the running world that a change touches, with its new
/// configuration.
#[derive(Clone, Debug)]
pub enum Edit {
    /// The moderation table of `hosts[host].nics[nic]`.
    Moderation {
        host: usize,
        nic: usize,
        cfg: ModerationCfg,
        how: LiveChange,
    },
    /// The TCP timers of `hosts[host]`.
    Tcp {
        host: usize,
        delack_us: u64,
        rto_min_ms: u64,
    },
    /// The offered rate or on/off switch of `generators[gen]`.
    Generator {
        gen: usize,
        cfg: super::GeneratorCfg,
    },
}

/// One path of one `[[at]]` table, resolved.
#[derive(Clone, Debug)]
pub struct Step {
    /// When [ms].
    pub t_ms: u64,
    /// The index of its `[[at]]` table.
    pub at: usize,
    /// The path as written, and its value.
    pub path: String,
    pub value: Value,
    /// What it changes in the running world (empty: nothing differs).
    pub edits: Vec<Edit>,
}

/// A path token: a table key, a list index, or every element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    Key(String),
    Index(usize),
    All,
}

const PATH_HELP: &str = "a field path is names and list indices, e.g. \
     hosts[0].nics[0].moderation.itr_per_s, generators[0].rate_pps or hosts[*].profile";

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Splits `hosts[0].nics[*].name` into tokens; the grammar of the Python
/// `parse_path`: `name([n]|[*])*(.name([n]|[*])*)*`.
pub fn parse_path(path: &str) -> Result<Vec<Token>, String> {
    let bad = || format!("`{path}` is not a field path: {PATH_HELP}");
    let mut out = Vec::new();
    let mut rest = path;
    loop {
        let name_len = rest
            .char_indices()
            .find(|&(i, c)| {
                !(if i == 0 {
                    is_name_start(c)
                } else {
                    is_name_char(c)
                })
            })
            .map_or(rest.len(), |(i, _)| i);
        if name_len == 0 {
            return Err(bad());
        }
        out.push(Token::Key(rest[..name_len].to_string()));
        rest = &rest[name_len..];
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(bad)?;
            let inner = &r[..end];
            if inner == "*" {
                out.push(Token::All);
            } else if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
                out.push(Token::Index(inner.parse().map_err(|_| bad())?));
            } else {
                return Err(bad());
            }
            rest = &r[end + 1..];
        }
        if rest.is_empty() {
            return Ok(out);
        }
        rest = rest.strip_prefix('.').ok_or_else(bad)?;
    }
}

/// Sets `path` in the document `doc` to `value`, as the Python `set_path`
/// does: a missing last name (or tables on the way) is created, a list
/// index must exist, `[*]` sets every element. Errors name the path and
/// say what is wrong.
pub fn set_path(doc: &mut Value, path: &str, value: &Value) -> Result<(), String> {
    let tokens = parse_path(path)?;
    assign(doc, &tokens, value, "", path)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "table",
        Value::Array(_) => "list",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::Null => "unset value",
    }
}

fn assign(
    node: &mut Value,
    tokens: &[Token],
    value: &Value,
    done: &str,
    path: &str,
) -> Result<(), String> {
    let last = tokens.len() == 1;
    match &tokens[0] {
        Token::Key(k) => {
            let here = if done.is_empty() {
                k.clone()
            } else {
                format!("{done}.{k}")
            };
            let kind = type_name(node);
            let Value::Object(map) = node else {
                return Err(format!(
                    "`{path}`: `{done}` is a {kind}, not a table, so it has no `{k}`"
                ));
            };
            if last {
                map.insert(k.clone(), value.clone());
                return Ok(());
            }
            if !map.contains_key(k) || map[k].is_null() {
                if !matches!(tokens[1], Token::Key(_)) {
                    return Err(format!(
                        "`{path}`: the scenario has no `{here}` list to index"
                    ));
                }
                map.insert(k.clone(), Value::Object(Default::default()));
            }
            assign(
                map.get_mut(k).expect("present"),
                &tokens[1..],
                value,
                &here,
                path,
            )
        }
        tok => {
            let kind = type_name(node);
            let Value::Array(list) = node else {
                return Err(format!(
                    "`{path}`: `{done}` is a {kind}, not a list, so it cannot be indexed"
                ));
            };
            let indices: Vec<usize> = match tok {
                Token::All if list.is_empty() => {
                    return Err(format!("`{path}`: `{done}` is an empty list"));
                }
                Token::All => (0..list.len()).collect(),
                Token::Index(i) if *i >= list.len() => {
                    let n = list.len();
                    return Err(format!(
                        "`{path}`: index {i} is out of range; `{done}` has {n} element{} (indices 0..{})",
                        if n == 1 { "" } else { "s" },
                        n.saturating_sub(1)
                    ));
                }
                Token::Index(i) => vec![*i],
                Token::Key(_) => unreachable!(),
            };
            for i in indices {
                if last {
                    list[i] = value.clone();
                } else {
                    assign(
                        &mut list[i],
                        &tokens[1..],
                        value,
                        &format!("{done}[{i}]"),
                        path,
                    )?;
                }
            }
            Ok(())
        }
    }
}

/// The scenario as a document, without its `[[at]]` tables.
fn doc_of(s: &Scenario) -> Value {
    let mut s = s.clone();
    s.at.clear();
    serde_json::to_value(&s).expect("a scenario always serialises")
}

/// A differing place between two documents, as path segments.
#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn diff(a: &Value, b: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                at.push(Seg::Key(k.clone()));
                diff(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    at,
                    out,
                );
                at.pop();
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                at.push(Seg::Index(i));
                diff(p, q, at, out);
                at.pop();
            }
        }
        _ if a == b => {}
        _ => out.push(at.clone()),
    }
}

fn seg_text(p: &[Seg]) -> String {
    let mut t = String::new();
    for s in p {
        match s {
            Seg::Key(k) if t.is_empty() => t += k,
            Seg::Key(k) => {
                t.push('.');
                t += k;
            }
            Seg::Index(i) => t += &format!("[{i}]"),
        }
    }
    t
}

/// What the difference between `old` and `new` (two valid scenarios, the
/// second one change later) does to a running world, or why it cannot
/// happen during a run.
fn classify(old: &Scenario, new: &Scenario) -> Result<Vec<Edit>, String> {
    let mut places = Vec::new();
    diff(&doc_of(old), &doc_of(new), &mut Vec::new(), &mut places);
    classify_places(&places, Side::whole(old), Side::whole(new))
}

/// The hosts and generators of one side of a change: the whole scenario,
/// or one element (`first` is its index) when only it can differ.
#[derive(Clone, Copy)]
struct Side<'a> {
    hosts: &'a [HostCfg],
    first_host: usize,
    gens: &'a [GeneratorCfg],
    first_gen: usize,
}

impl<'a> Side<'a> {
    fn whole(s: &'a Scenario) -> Self {
        Side {
            hosts: &s.hosts,
            first_host: 0,
            gens: &s.generators,
            first_gen: 0,
        }
    }
    /// Host `i` alone.
    fn one_host(h: &'a HostCfg, i: usize) -> Self {
        Side {
            hosts: std::slice::from_ref(h),
            first_host: i,
            gens: &[],
            first_gen: 0,
        }
    }
    /// Generator `i` alone.
    fn one_gen(g: &'a GeneratorCfg, i: usize) -> Self {
        Side {
            hosts: &[],
            first_host: 0,
            gens: std::slice::from_ref(g),
            first_gen: i,
        }
    }
    fn host(&self, i: usize) -> &'a HostCfg {
        &self.hosts[i - self.first_host]
    }
    fn gen(&self, i: usize) -> &'a GeneratorCfg {
        &self.gens[i - self.first_gen]
    }
}

/// What the differing `places` do to a running world (see `classify`).
fn classify_places(places: &[Vec<Seg>], old: Side, new: Side) -> Result<Vec<Edit>, String> {
    let fixed = |p: &[Seg]| {
        format!(
            "`{}` cannot change during a run: the topology (hosts, NICs, links, \
             applications), ring sizes, drivers, chips, profiles and moderation kinds are \
             fixed when the interfaces come up; what can change: {LIVE_FIELDS}",
            seg_text(p)
        )
    };
    let mut edits: Vec<Edit> = Vec::new();
    for p in places {
        use Seg::{Index as I, Key as K};
        match p.as_slice() {
            [K(h), I(hi), K(n), I(ni), K(m), rest @ ..]
                if h == "hosts" && n == "nics" && m == "moderation" =>
            {
                let (old_m, new_m) = (
                    &old.host(*hi).nics[*ni].moderation,
                    &new.host(*hi).nics[*ni].moderation,
                );
                let kind = |m: &ModerationCfg| {
                    serde_json::to_value(m)
                        .ok()
                        .and_then(|v| v.get("kind").cloned())
                };
                if kind(old_m) != kind(new_m) {
                    return Err(format!(
                        "`hosts[{hi}].nics[{ni}].moderation` cannot change its kind during a run \
                         (another algorithm is another driver or module); change a run-time \
                         setting of its kind instead: {LIVE_FIELDS}"
                    ));
                }
                let Ok(algo) = new_m.algo() else {
                    return Err(format!(
                        "`{}`: a Python moderator's parameters cannot change during a run",
                        seg_text(p)
                    ));
                };
                let Some(K(field)) = rest.first() else {
                    return Err(fixed(p));
                };
                let how = algo.live_change(field).map_err(|why| {
                    format!("`{}` cannot change during a run: {why}", seg_text(p))
                })?;
                let found = edits.iter_mut().find_map(|e| match e {
                    Edit::Moderation { host, nic, how, .. } if *host == *hi && *nic == *ni => {
                        Some(how)
                    }
                    _ => None,
                });
                match found {
                    Some(h) => *h = (*h).max(how),
                    None => edits.push(Edit::Moderation {
                        host: *hi,
                        nic: *ni,
                        cfg: new_m.clone(),
                        how,
                    }),
                }
            }
            [K(h), I(hi), K(t), K(f)]
                if h == "hosts" && t == "tcp" && (f == "delack_us" || f == "rto_min_ms") =>
            {
                let tcp = &new.host(*hi).tcp;
                if !edits
                    .iter()
                    .any(|e| matches!(e, Edit::Tcp { host, .. } if host == hi))
                {
                    edits.push(Edit::Tcp {
                        host: *hi,
                        delack_us: tcp.delack_us,
                        rto_min_ms: tcp.rto_min_ms,
                    });
                }
            }
            [K(g), I(gi), K(f)]
                if g == "generators" && matches!(f.as_str(), "rate_pps" | "load" | "enabled") =>
            {
                let cfg = new.gen(*gi);
                if cfg.pattern == super::Pattern::Replay {
                    return Err(format!(
                        "`{}` cannot change during a run: a replayed capture keeps its own \
                         times and cannot be paused",
                        seg_text(p)
                    ));
                }
                if !edits
                    .iter()
                    .any(|e| matches!(e, Edit::Generator { gen, .. } if gen == gi))
                {
                    edits.push(Edit::Generator {
                        gen: *gi,
                        cfg: cfg.clone(),
                    });
                }
            }
            _ => return Err(fixed(p)),
        }
    }
    Ok(edits)
}

/// Apply every `[[at]]` change of `s` in time order and check each step;
/// returns the steps in the order they happen. Errors name
/// `at[i].set."path"` (or `at[i].t_ms`).
pub fn resolve(s: &Scenario) -> Result<Vec<Step>, Error> {
    if s.at.is_empty() {
        return Ok(Vec::new());
    }
    let paths: usize = s.at.iter().map(|a| a.set.len()).sum();
    if s.at.len() > MAX_CHANGES || paths > MAX_CHANGES {
        return Err(cfg_err(
            "at",
            format!(
                "{} tables with {paths} paths; allowed: at most {MAX_CHANGES} of each",
                s.at.len()
            ),
        ));
    }
    let whole = s.hosts.len() + s.generators.len();
    let touched: usize =
        s.at.iter()
            .flat_map(|a| a.set.keys())
            .map(|p| match parse_path(p) {
                Err(_) => 1, // refused below, naming the path
                Ok(_) => element_of(p, s).map_or(whole, |(_, v)| v.len()),
            })
            .fold(0, usize::saturating_add);
    if touched > MAX_CHANGE_ELEMENTS {
        return Err(cfg_err(
            "at",
            format!(
                "the changes touch {touched} hosts and generators in all (a `[*]` path \
                 touches every element of its list); the limit is {MAX_CHANGE_ELEMENTS}: \
                 change fewer elements, or set the value from the start instead"
            ),
        ));
    }
    for (i, a) in s.at.iter().enumerate() {
        if a.t_ms >= s.duration_ms {
            return Err(cfg_err(
                format!("at[{i}].t_ms"),
                format!(
                    "got {}; allowed: 0 to {} (before the end of the run, duration_ms = {})",
                    a.t_ms,
                    s.duration_ms - 1,
                    s.duration_ms
                ),
            ));
        }
        if a.set.is_empty() {
            return Err(cfg_err(
                format!("at[{i}].set"),
                "is empty; give at least one \"path\" = value, e.g. \
                 set = { \"generators[0].rate_pps\" = 150000 }",
            ));
        }
    }
    let mut order: Vec<usize> = (0..s.at.len()).collect();
    order.sort_by_key(|&i| s.at[i].t_ms);
    let mut cur = s.clone();
    cur.at.clear();
    let mut doc = doc_of(&cur);
    let mut steps = Vec::new();
    for i in order {
        for (path, value) in &s.at[i].set {
            let field = format!("at[{i}].set.\"{path}\"");
            set_path(&mut doc, path, value).map_err(|m| cfg_err(field.clone(), m))?;
            let edits = match element_and_nic(path, &cur) {
                Some(one) => apply_local(&mut cur, &doc, one).map_err(|e| after(&field, e))?,
                None => {
                    let mut next: Scenario =
                        serde_json::from_value(doc.clone()).map_err(|e| after(&field, e))?;
                    next.base_dir = s.base_dir.clone();
                    next.validate().map_err(|e| after(&field, e))?;
                    let edits = classify(&cur, &next).map_err(|m| cfg_err(field.clone(), m))?;
                    cur = next;
                    edits
                }
            };
            steps.push(Step {
                t_ms: s.at[i].t_ms,
                at: i,
                path: path.clone(),
                value: value.clone(),
                edits,
            });
        }
    }
    Ok(steps)
}

/// A change's error as `at[i].set."path"`: what the scenario after it breaks.
fn after(field: &str, e: impl Into<AfterError>) -> Error {
    match e.into() {
        AfterError::Read(e) => cfg_err(
            field,
            format!("after this change the scenario does not read: {e}"),
        ),
        AfterError::Invalid(Error::Config {
            field: inner,
            message,
        }) => cfg_err(field, format!("after this change, {inner}: {message}")),
        AfterError::Invalid(other) => cfg_err(field, other.to_string()),
        AfterError::Fixed(m) => cfg_err(field, m),
    }
}

/// Why a change's result is refused: it does not read as a scenario, it
/// breaks a rule, or it changes what cannot change during a run.
enum AfterError {
    Read(serde_json::Error),
    Invalid(Error),
    Fixed(String),
}

impl From<serde_json::Error> for AfterError {
    fn from(e: serde_json::Error) -> Self {
        AfterError::Read(e)
    }
}
impl From<Error> for AfterError {
    fn from(e: Error) -> Self {
        AfterError::Invalid(e)
    }
}

/// The elements a path changes inside, when they are all within hosts or
/// within generators (`hosts[0].tcp.delack_us`, `generators[*].rate_pps`):
/// the list, and the element indices. None for anything else (the whole
/// scenario is then read and validated again).
fn element_of(path: &str, cur: &Scenario) -> Option<(bool, Vec<usize>)> {
    element_and_nic(path, cur).map(|(hosts, v, _)| (hosts, v))
}

/// As `element_of`, and the NIC index when the path changes a field inside
/// one NIC of each host (`hosts[0].nics[1].moderation.itr_per_s`).
fn element_and_nic(path: &str, cur: &Scenario) -> Option<(bool, Vec<usize>, Option<usize>)> {
    let tokens = parse_path(path).ok()?;
    let (Token::Key(list), Some(at)) = (tokens.first()?, tokens.get(1)) else {
        return None;
    };
    // A path that replaces a whole element (or its name) may change what
    // other parts refer to: checked as a whole.
    if tokens.len() < 3 || tokens.get(2) == Some(&Token::Key("name".into())) {
        return None;
    }
    let (hosts, len) = match list.as_str() {
        "hosts" => (true, cur.hosts.len()),
        "generators" => (false, cur.generators.len()),
        _ => return None,
    };
    let indices = match at {
        Token::Index(i) if *i < len => vec![*i],
        Token::All if len > 0 => (0..len).collect(),
        _ => return None,
    };
    let nic = match tokens.as_slice() {
        [_, _, Token::Key(n), Token::Index(j), Token::Key(f), ..]
            if hosts
                && n == "nics"
                && f != "name"
                && indices.iter().all(|&i| *j < cur.hosts[i].nics.len()) =>
        {
            Some(*j)
        }
        _ => None,
    };
    Some((hosts, indices, nic))
}

/// Apply a change inside hosts or generators to `cur`, element by element:
/// each changed element is read from `doc` and validated alone (its own
/// rules; what a running system can change has no rule across elements),
/// and only its differences are classified. Linear in the elements it
/// touches, not in the scenario.
fn apply_local(
    cur: &mut Scenario,
    doc: &Value,
    (hosts, indices, nic): (bool, Vec<usize>, Option<usize>),
) -> Result<Vec<Edit>, AfterError> {
    let base = cur.base_dir.clone();
    let mut edits = Vec::new();
    for i in indices {
        let list = if hosts { "hosts" } else { "generators" };
        let mut places = Vec::new();
        let prefix = vec![Seg::Key(list.into()), Seg::Index(i)];
        if let Some(j) = nic {
            // Inside one NIC: that NIC is read and checked alone (on its
            // host's cores), and only it is compared.
            let new_nic: NicCfg = serde_json::from_value(doc[list][i]["nics"][j].clone())?;
            new_nic.validate(&format!("hosts[{i}].nics[{j}]"), cur.hosts[i].cores)?;
            let old_v = serde_json::to_value(&cur.hosts[i].nics[j]).expect("a NIC serialises");
            let new_v = serde_json::to_value(&new_nic).expect("a NIC serialises");
            let mut at = prefix.clone();
            at.extend([Seg::Key("nics".into()), Seg::Index(j)]);
            diff(&old_v, &new_v, &mut at, &mut places);
            let mut new = cur.hosts[i].clone();
            new.nics[j] = new_nic;
            let sides = (Side::one_host(&cur.hosts[i], i), Side::one_host(&new, i));
            edits.extend(classify_places(&places, sides.0, sides.1).map_err(AfterError::Fixed)?);
            cur.hosts[i] = new;
            continue;
        }
        let new_v = doc[list][i].clone();
        if hosts {
            let new: HostCfg = serde_json::from_value(new_v)?;
            new.validate(&format!("hosts[{i}]"), base.as_deref())?;
            let old_v = serde_json::to_value(&cur.hosts[i]).expect("a host serialises");
            let new_v = serde_json::to_value(&new).expect("a host serialises");
            diff(&old_v, &new_v, &mut prefix.clone(), &mut places);
            let sides = (Side::one_host(&cur.hosts[i], i), Side::one_host(&new, i));
            edits.extend(classify_places(&places, sides.0, sides.1).map_err(AfterError::Fixed)?);
            cur.hosts[i] = new;
        } else {
            let new: GeneratorCfg = serde_json::from_value(new_v)?;
            let path = format!("generators[{i}]");
            traffic::validate_generator(&new, &path)?;
            traffic::validate_capture(&new, &path, base.as_deref())?;
            let old_v = serde_json::to_value(&cur.generators[i]).expect("serialises");
            let new_v = serde_json::to_value(&new).expect("serialises");
            diff(&old_v, &new_v, &mut prefix.clone(), &mut places);
            let sides = (Side::one_gen(&cur.generators[i], i), Side::one_gen(&new, i));
            edits.extend(classify_places(&places, sides.0, sides.1).map_err(AfterError::Fixed)?);
            cur.generators[i] = new;
        }
    }
    Ok(edits)
}

/// The scenario in effect after every change (without its `[[at]]`
/// tables), for tests and for tools comparing with `--set`.
pub fn after_all(s: &Scenario) -> Result<Scenario, Error> {
    resolve(s)?;
    let mut doc = doc_of(s);
    let mut order: Vec<usize> = (0..s.at.len()).collect();
    order.sort_by_key(|&i| s.at[i].t_ms);
    for i in order {
        for (path, value) in &s.at[i].set {
            set_path(&mut doc, path, value).map_err(|m| cfg_err("at", m))?;
        }
    }
    let mut out: Scenario =
        serde_json::from_value(doc).map_err(|e| cfg_err("at", e.to_string()))?;
    out.base_dir = s.base_dir.clone();
    Ok(out)
}

mod finite;
#[cfg(test)]
mod tests;
