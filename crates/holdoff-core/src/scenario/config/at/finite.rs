//! The values of an `[[at]]` table's `set`, read with finite numbers only:
//! a JSON value cannot hold NaN or an infinity (it would become "unset",
//! and the field its default), so such a value is refused with its fix.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The values of a `set` table, refusing NaN and infinities: a JSON value
/// cannot hold them (they would become "unset", and the field its default).
pub(super) fn finite_values<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, Value>, D::Error> {
    let raw = BTreeMap::<String, Finite>::deserialize(d)?;
    Ok(raw.into_iter().map(|(k, v)| (k, v.0)).collect())
}

/// A value with finite numbers only.
struct Finite(Value);

impl<'de> Deserialize<'de> for Finite {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FiniteVisitor).map(Finite)
    }
}

struct FiniteVisitor;

impl<'de> serde::de::Visitor<'de> for FiniteVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| {
                let shown = if v.is_nan() {
                    "nan".into()
                } else {
                    v.to_string()
                };
                E::custom(format!(
                    "the value {shown} is not a number; give a finite number"
                ))
            })
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Finite::deserialize(d).map(|f| f.0)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Finite(v)) = a.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some((k, Finite(v))) = a.next_entry::<String, Finite>()? {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}
