//! The JSON Schema and `Scenario::validate` agree on every numeric bound.
//!
//! The test walks the generated schema (`holdoff schema`), finds every
//! property with a `minimum`, `maximum` or `exclusiveMinimum`, places the
//! field in a valid base scenario that uses the right `kind` (moderation
//! algorithm, application), and checks that the scenario is accepted at the
//! bounds and refused one step outside them (where the field's type can hold
//! that value). Cross-field rules that tie a field to another (for example
//! `rmem_default >= 2 x mss_bytes`) are met by the companion settings in
//! `companions`, written next to the rule they satisfy.
//!
//! It also pins the four inputs that used to pass validation and then break
//! the run (netpipe empty or inverted sizes, huge iperf `streams`, an rpc
//! response of 0 bytes, a huge polling clock): each is refused with an error
//! naming the field.

use holdoff_core::error::Error;
use holdoff_core::scenario::Scenario;
use serde_json::{json, Map, Value};

/// One step of a path through the scenario document.
#[derive(Clone, Debug)]
enum Step {
    Prop(String),
    /// Any element of an array.
    Item,
    /// A tagged-enum variant: the object's `kind` must be this.
    Kind(String),
}

/// A bounded numeric field found in the schema.
#[derive(Clone, Debug)]
struct Bounded {
    path: Vec<Step>,
    integer: bool,
    /// `format` (uint32, int32, uint64, uint16, double).
    format: String,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
}

fn resolve_ref<'a>(root: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.trim_start_matches("#/$defs/");
            resolve_ref(root, &root["$defs"][name])
        }
        None => v,
    }
}

fn walk(root: &Value, schema: &Value, path: Vec<Step>, out: &mut Vec<Bounded>) {
    let schema = resolve_ref(root, schema);
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        for v in variants {
            let v = resolve_ref(root, v);
            match v["properties"]["kind"]["const"].as_str() {
                Some(kind) => {
                    let mut p = path.clone();
                    p.push(Step::Kind(kind.to_string()));
                    walk(root, v, p, out);
                }
                // A plain string enum (no kind): nothing numeric inside.
                None => walk(root, v, path.clone(), out),
            }
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        for v in any {
            walk(root, v, path.clone(), out);
        }
    }
    if let Some(items) = schema.get("items") {
        let mut p = path.clone();
        p.push(Step::Item);
        walk(root, items, p, out);
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            let mut p = path.clone();
            p.push(Step::Prop(name.clone()));
            let sub_r = resolve_ref(root, sub);
            let has_bound = ["minimum", "maximum", "exclusiveMinimum"]
                .iter()
                .any(|k| sub_r.get(*k).is_some());
            if has_bound {
                let types: Vec<&str> = match &sub_r["type"] {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                out.push(Bounded {
                    path: p.clone(),
                    integer: types.contains(&"integer"),
                    format: sub_r["format"].as_str().unwrap_or("").to_string(),
                    minimum: sub_r["minimum"].as_f64(),
                    maximum: sub_r["maximum"].as_f64(),
                    exclusive_minimum: sub_r["exclusiveMinimum"].as_f64(),
                });
            }
            walk(root, sub, p, out);
        }
    }
}

/// The JSON pointer of `path` in `doc`, if the document has a matching spot
/// (intermediate tables that are absent are created).
fn place(doc: &mut Value, path: &[Step]) -> Option<Vec<String>> {
    match path.split_first() {
        None => Some(vec![]),
        Some((Step::Prop(name), rest)) => {
            let obj = doc.as_object_mut()?;
            if rest.is_empty() {
                return Some(vec![name.clone()]);
            }
            if !obj.contains_key(name) {
                if matches!(rest[0], Step::Prop(_)) {
                    obj.insert(name.clone(), Value::Object(Map::new()));
                } else {
                    return None;
                }
            }
            let mut tail = place(obj.get_mut(name)?, rest)?;
            tail.insert(0, name.clone());
            Some(tail)
        }
        Some((Step::Item, rest)) => {
            let arr = doc.as_array_mut()?;
            for (i, el) in arr.iter_mut().enumerate() {
                let mut probe = el.clone();
                if let Some(mut tail) = place(&mut probe, rest) {
                    *el = probe;
                    tail.insert(0, i.to_string());
                    return Some(tail);
                }
            }
            None
        }
        Some((Step::Kind(kind), rest)) => {
            if doc.get("kind").and_then(Value::as_str) == Some(kind.as_str()) {
                place(doc, rest)
            } else {
                None
            }
        }
    }
}

fn set(doc: &mut Value, pointer: &[String], v: Value) {
    let mut cur = doc;
    for (i, key) in pointer.iter().enumerate() {
        let last = i + 1 == pointer.len();
        cur = match cur {
            Value::Object(o) => {
                if last {
                    o.insert(key.clone(), v);
                    return;
                }
                o.get_mut(key).expect("placed")
            }
            Value::Array(a) => &mut a[key.parse::<usize>().expect("index")],
            _ => panic!("cannot set {pointer:?}"),
        };
    }
}

fn check(doc: &Value) -> Result<(), Error> {
    let s: Scenario = serde_json::from_value(doc.clone()).map_err(|e| Error::Parse {
        message: e.to_string(),
    })?;
    s.validate()
}

fn host(name: &str, chip: &str, moderation: Value) -> Value {
    json!({
        "name": name,
        "profile": "ideal",
        // The most cores a host may have, so that `core` and `irq_core`
        // reach their schema maximum (255).
        "cores": 256,
        "nics": [{"name": "eth0", "chip": chip, "moderation": moderation}],
    })
}

/// Two hosts a and b linked back to back, a generator feeding a's second
/// NIC, and the given moderation on a's first NIC and applications.
fn base(chip: &str, moderation: Value, apps: Value, generator: Value) -> Value {
    let mut a = host("a", chip, moderation);
    a["nics"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "eth1", "chip": "82546"}));
    json!({
        "name": "bounds",
        "duration_ms": 10,
        "hosts": [a, host("b", "82576", json!({"kind": "static"}))],
        "generators": [generator],
        "links": [
            {"a": "a.eth0", "b": "b.eth0"},
            {"a": "g", "b": "a.eth1"},
        ],
        "apps": apps,
    })
}

/// One valid base per moderation kind, application kind and generator shape.
fn bases() -> Vec<Value> {
    let gen_rate = json!({"name": "g", "rate_pps": 1000.0, "frame_bytes": 64});
    let gen_load = json!({"name": "g", "load": 0.5,
        "frame_sizes": [{"bytes": 64, "weight": 1}, {"bytes": 1518, "weight": 1}]});
    let apps = json!([
        {"kind": "udp_sink", "name": "sink", "host": "a"},
        {"kind": "ping", "name": "ping", "host": "a", "to": "b"},
        {"kind": "netpipe", "name": "np", "host": "a", "to": "b"},
        {"kind": "rpc", "name": "rpc", "host": "b", "to": "a"},
        {"kind": "iperf", "name": "iperf", "host": "a", "to": "b"},
        {"kind": "udp_send", "name": "blast", "host": "a", "to": "b", "rate_pps": 1000.0},
        {"kind": "rpc_open", "name": "open", "host": "a", "to": "b", "rate_rps": 1000.0,
            "request_sizes": [{"bytes": 64, "weight": 1}, {"bytes": 300, "weight": 1}],
            "response_sizes": [{"bytes": 1000, "weight": 3}, {"bytes": 64, "weight": 1}]},
    ]);
    let itr_chip = "82546";
    let eitr_chip = "82576";
    let mut out = Vec::new();
    for (chip, m) in [
        (itr_chip, json!({"kind": "static"})),
        (eitr_chip, json!({"kind": "static"})),
        (itr_chip, json!({"kind": "e1000-5x"})),
        (itr_chip, json!({"kind": "e1000-itr"})),
        (eitr_chip, json!({"kind": "igb"})),
        (eitr_chip, json!({"kind": "ixl"})),
        (itr_chip, json!({"kind": "freebsd-aim"})),
        (eitr_chip, json!({"kind": "dim"})),
        // The 10 GbE part with the most queues (63), for `queues`.
        ("x550", json!({"kind": "ixgbe"})),
        // The 700/800 Series kinds with adaptive off: static rx-usecs and
        // rx-usecs-high are refused while adaptive is on.
        (
            "e810-c",
            json!({"kind": "ice", "adaptive_rx": false, "adaptive_tx": false}),
        ),
        (
            "x710",
            json!({"kind": "i40e", "adaptive_rx": false, "adaptive_tx": false}),
        ),
        // The completion-queue chips.
        ("cx5", json!({"kind": "mlx5"})),
        ("ena", json!({"kind": "ena"})),
        // A C moderator (for `call_limit_ms`): validation checks the table
        // only; the source is compiled when the run is built.
        (
            itr_chip,
            json!({"kind": "c", "source": "never_built.c", "entry": "update_itr"}),
        ),
    ] {
        for g in [&gen_rate, &gen_load] {
            out.push(base(chip, m.clone(), apps.clone(), g.clone()));
        }
    }
    // A replaying generator (capture, speed, loops, mtu_bytes).
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/captures/office.pcapng"
    );
    out.push(base(
        itr_chip,
        json!({"kind": "static"}),
        apps.clone(),
        json!({"name": "g", "pattern": "replay", "capture": capture}),
    ));
    // INTx (for irq_line) and a polling host (its clock and burst).
    let mut intx = base(
        itr_chip,
        json!({"kind": "static"}),
        apps.clone(),
        gen_rate.clone(),
    );
    intx["hosts"][0]["nics"][0]["interrupt_mode"] = json!("intx");
    out.push(intx);
    // A change during the run (`at[].t_ms` must be below `duration_ms`:
    // the longest run lets it reach its schema maximum).
    let mut at = base(itr_chip, json!({"kind": "static"}), apps, gen_rate);
    at["duration_ms"] = json!(3_600_000);
    at["at"] = json!([{"t_ms": 1, "set": {"generators[0].rate_pps": 2000.0}}]);
    out.push(at);
    out
}

/// Settings that a cross-field rule needs for a field to reach `value`:
/// (field name, value) -> extra (sibling field, value) pairs.
fn companions(field: &str, value: f64) -> Vec<(&'static str, Value)> {
    match (field, value as u64) {
        // rmem_default >= 2 x mss_bytes, wmem_default >= mss_bytes,
        // wmem_max >= wmem_default, truesize 0 or mss..=rmem/2.
        ("rmem_default", 1072) | ("wmem_default", 536) | ("wmem_max", 536) => vec![
            ("mss_bytes", json!(536)),
            ("wmem_default", json!(536)),
            ("skb_truesize_bytes", json!(0)),
        ],
        ("wmem_default", v) if v >= 1 << 20 => vec![("wmem_max", json!(v))],
        // rmem_max >= rmem_default.
        ("rmem_max", 1072) => vec![
            ("rmem_default", json!(1072)),
            ("mss_bytes", json!(536)),
            ("skb_truesize_bytes", json!(0)),
        ],
        ("mss_bytes", 8960) => vec![("skb_truesize_bytes", json!(0))],
        ("skb_truesize_bytes", v) if v > 1 << 20 => vec![("rmem_default", json!(1u64 << 30))],
        // rpc_open: at most one server thread per connection.
        ("server_threads", v) if v > 16 => vec![("connections", json!(v))],
        // end_bytes >= start_bytes.
        ("start_bytes", v) if v > 8_388_608 => vec![("end_bytes", json!(v))],
        _ => vec![],
    }
}

/// The JSON value of `v` for the field's type, or None when the type cannot
/// hold it (e.g. -1 for an unsigned field).
fn value_of(b: &Bounded, v: f64) -> Option<Value> {
    if !b.integer {
        return Some(json!(v));
    }
    let (lo, hi): (i128, i128) = match b.format.as_str() {
        "uint16" => (0, u16::MAX as i128),
        "uint32" => (0, u32::MAX as i128),
        "int32" => (i32::MIN as i128, i32::MAX as i128),
        "uint64" => (0, u64::MAX as i128),
        other => panic!("unknown integer format {other}"),
    };
    let i = v as i128;
    (lo..=hi).contains(&i).then(|| {
        if i < 0 {
            json!(i as i64)
        } else {
            json!(i as u64)
        }
    })
}

fn name(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Prop(p) => format!(".{p}"),
            Step::Item => "[]".into(),
            Step::Kind(k) => format!("<{k}>"),
        })
        .collect()
}

/// The scenario with `b`'s field at `v` (and its companions), in the first
/// base where the field has a place.
fn with_value(bases: &[Value], b: &Bounded, v: &Value, base_ix: usize) -> Value {
    let mut doc = bases[base_ix].clone();
    let ptr = place(&mut doc, &b.path).expect("placed before");
    let field = ptr.last().unwrap().clone();
    if let Some(x) = v.as_f64() {
        for (sib, sv) in companions(&field, x) {
            let mut p = ptr.clone();
            *p.last_mut().unwrap() = sib.to_string();
            set(&mut doc, &p, sv);
        }
    }
    set(&mut doc, &ptr, v.clone());
    doc
}

#[test]
fn schema_bounds_and_validation_agree() {
    let schema: Value = serde_json::from_str(&holdoff_core::api::schema_json()).unwrap();
    let mut fields = Vec::new();
    walk(&schema, &schema, vec![], &mut fields);
    assert!(
        fields.len() > 60,
        "found only {} bounded fields",
        fields.len()
    );
    // Every cost a scenario may override is a bounded field of its own.
    for cost in holdoff_core::host::profile::OVERRIDABLE {
        assert!(
            fields.iter().any(|b| matches!(
                b.path.as_slice(),
                [.., Step::Prop(o), Step::Prop(c)] if o == "profile_overrides" && c == cost
            )),
            "profile_overrides.{cost} has no bounds in the schema"
        );
    }
    let bases = bases();
    for (i, b) in bases.iter().enumerate() {
        check(b).unwrap_or_else(|e| panic!("base {i} is not valid: {e}"));
    }
    let mut problems = Vec::new();
    for b in &fields {
        let label = name(&b.path);
        let mut inside: Vec<Value> = Vec::new();
        let mut outside: Vec<Value> = Vec::new();
        if let Some(lo) = b.minimum {
            inside.extend(value_of(b, lo));
            if b.integer {
                outside.extend(value_of(b, lo - 1.0));
            }
        }
        if let Some(hi) = b.maximum {
            inside.extend(value_of(b, hi));
            if b.integer {
                outside.extend(value_of(b, hi + 1.0));
            } else {
                outside.push(json!(hi * (1.0 + 1e-9)));
            }
        }
        if let Some(x) = b.exclusive_minimum {
            outside.push(json!(x));
        }
        // The first base where the field has a place and every in-range
        // value is accepted.
        let chosen = (0..bases.len()).find(|&ix| {
            let mut probe = bases[ix].clone();
            place(&mut probe, &b.path).is_some()
                && inside
                    .iter()
                    .all(|v| check(&with_value(&bases, b, v, ix)).is_ok())
        });
        let Some(ix) = chosen else {
            let why: Vec<String> = (0..bases.len())
                .filter(|&ix| place(&mut bases[ix].clone(), &b.path).is_some())
                .flat_map(|ix| {
                    inside
                        .iter()
                        .filter_map(|v| check(&with_value(&bases, b, v, ix)).err())
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                })
                .take(2)
                .collect();
            problems.push(format!(
                "{label}: no base accepts the schema's in-range values {inside:?}: {why:?}"
            ));
            continue;
        };
        for v in &outside {
            if check(&with_value(&bases, b, v, ix)).is_ok() {
                problems.push(format!(
                    "{label}: {v} is outside the schema's bounds but validation accepts it"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn config_error(doc: &Value) -> (String, String) {
    match check(doc) {
        Err(Error::Config { field, message }) => (field, message),
        other => panic!("expected a field error, got {other:?}"),
    }
}

fn app_base(app: Value) -> Value {
    base(
        "82546",
        json!({"kind": "static"}),
        json!([app]),
        json!({"name": "g", "rate_pps": 1000.0}),
    )
}

#[test]
fn netpipe_empty_or_inverted_sizes_are_refused() {
    // NetPIPE needs sizes of at least one byte and a non-empty range
    // (`Netpipe::new` asserts both; NPtcp refuses them).
    let np = |start: u64, end: u64| {
        app_base(
            json!({"kind": "netpipe", "name": "np", "host": "a", "to": "b",
            "start_bytes": start, "end_bytes": end}),
        )
    };
    let (field, msg) = config_error(&np(0, 0));
    assert_eq!(field, "apps[0].start_bytes", "{msg}");
    let (field, msg) = config_error(&np(1, 0));
    assert_eq!(field, "apps[0].end_bytes", "{msg}");
    let (field, msg) = config_error(&np(100, 10));
    assert_eq!(field, "apps[0].end_bytes");
    assert!(msg.contains("start_bytes"), "{msg}");
    check(&np(10, 10)).expect("one size is a valid range");
}

#[test]
fn iperf_stream_count_is_bounded() {
    // One TCP connection per stream; 4294967295 streams used to abort the
    // process allocating their tables.
    let ip = |n: u64| {
        app_base(json!({"kind": "iperf", "name": "i", "host": "a", "to": "b", "streams": n}))
    };
    let (field, msg) = config_error(&ip(4_294_967_295));
    assert_eq!(field, "apps[0].streams");
    assert!(msg.contains("1 to 128"), "{msg}");
    let (field, _) = config_error(&ip(0));
    assert_eq!(field, "apps[0].streams");
    check(&ip(128)).expect("128 streams");
}

#[test]
fn rpc_response_of_zero_bytes_is_refused() {
    // A 0-byte response is never sent, so the client waits forever while
    // its requests pile up: the size must be at least one byte.
    let rpc = |req: u64, resp: u64| {
        app_base(json!({"kind": "rpc", "name": "r", "host": "a", "to": "b",
            "request_bytes": req, "response_bytes": resp}))
    };
    let (field, msg) = config_error(&rpc(64, 0));
    assert_eq!(field, "apps[0].response_bytes");
    assert!(msg.contains("got 0"), "{msg}");
    let (field, _) = config_error(&rpc(0, 64));
    assert_eq!(field, "apps[0].request_bytes");
}

#[test]
fn polling_clock_is_bounded() {
    // 4294967295 polling ticks per second left simulated time crawling;
    // the clock is bounded at 100000 Hz (see host::BSD_BOUNDS).
    let mut doc = app_base(json!({"kind": "udp_sink", "name": "s", "host": "a"}));
    doc["hosts"][0]["driver"] = json!("polling");
    doc["hosts"][0]["bsd"] = json!({"poll_hz": 4_294_967_295u64});
    let (field, msg) = config_error(&doc);
    assert_eq!(field, "hosts[0].bsd.poll_hz");
    assert!(msg.contains("1 to 100000"), "{msg}");
    doc["hosts"][0]["bsd"] = json!({"poll_hz": 100_000});
    check(&doc).expect("the highest polling clock");
}

#[test]
fn e1000_itr_timers_are_16_bit() {
    // e1000_param.c bounds RxIntDelay, RxAbsIntDelay, TxIntDelay and
    // TxAbsIntDelay to 0..=0xFFFF (MAX_RXDELAY etc.).
    for field in [
        "rx_int_delay",
        "rx_abs_int_delay",
        "tx_int_delay",
        "tx_abs_int_delay",
    ] {
        let mut m = json!({"kind": "e1000-itr"});
        m[field] = json!(65_536);
        let doc = base(
            "82546",
            m.clone(),
            json!([]),
            json!({"name": "g", "rate_pps": 1.0}),
        );
        let (f, msg) = config_error(&doc);
        assert_eq!(f, format!("hosts[0].nics[0].moderation.{field}"));
        assert!(msg.contains("0 to 65535"), "{msg}");
        m[field] = json!(65_535);
        let doc = base("82546", m, json!([]), json!({"name": "g", "rate_pps": 1.0}));
        check(&doc).expect("65535 is allowed");
    }
}

#[test]
fn enum_strings_are_listed_in_the_schema() {
    let s = holdoff_core::api::schema_json();
    for word in [
        "\"e1000e\"",
        "\"rx-cqe\"",
        "\"tx-eqe\"",
        "\"both\"",
        "\"p4-xeon-2004\"",
        "\"i210\"",
    ] {
        assert!(s.contains(word), "schema lacks {word}");
    }
    // An unknown value is a parse error that lists the allowed ones.
    let mut doc = app_base(json!({"kind": "udp_sink", "name": "s", "host": "a"}));
    doc["hosts"][0]["nics"][0]["chip"] = json!("82576");
    doc["hosts"][0]["nics"][0]["moderation"] = json!({"kind": "dim", "profile": "rx"});
    let err = check(&doc).unwrap_err().to_string();
    assert!(err.contains("rx-eqe"), "{err}");
}
