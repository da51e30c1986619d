//! Host profile files: a preset with some of its costs replaced, kept in a
//! TOML file that scenarios name (`hosts[].profile = "my-host.toml"`).
//! `holdoff calibrate` writes them from measurements taken on a user's own
//! machine; they can also be written by hand.
//!
//! Format (docs/models/host-profiles.md, "Profile files"):
//!
//! ```toml
//! base = "apu2"            # required: the preset the file starts from
//! name = "my-apu2"         # optional: the name runs report (default: the file stem)
//! description = "..."      # optional
//! [costs]                  # optional: any of profile::OVERRIDABLE
//! tx_packet_ns = 7000      # ns at the base preset's nominal clock
//! copy_ps_per_byte = 900   # ps per byte
//! [variance]               # optional: service-time variance (host::variance);
//! cost_cv_permille = 150   #   `variance = "none"` instead makes every cost
//! tick_hz = 1000           #   constant; a table starts from the base's
//! [fit]                    # optional, free-form: provenance, not read
//! ```
//!
//! Everything the file does not set (the clock, the kernel defaults, the
//! costs it leaves out) is the base preset's. A scenario's
//! `profile_overrides` apply on top of the file's costs, and `cpu_mhz` scales
//! the result as it scales a preset.
//!
//! Simplifies: the file cannot define a new clock or kernel: those belong to
//! the base preset.
//!
//! Units: costs in ns (`*_ns`) or ps per byte (`copy_ps_per_byte`), at the
//! base preset's nominal clock.
//!
//! A relative path is resolved against the scenario file's directory (as a
//! replayed `capture` is), or the working directory for scenario text.
//! Files are read when a scenario is validated; each distinct (path, text)
//! is built once per process. A profile file must be a regular file (a
//! symbolic link to one is followed) of at most `MAX_PROFILE_FILE_BYTES`
//! (16 MiB), checked before it is read (`crate::input_file`).

use super::cfg_err;
use crate::error::Error;
use crate::host::profile::{self, HostProfile, MAX_COST, OVERRIDABLE};
use crate::host::variance::{Variance, VARIANCE_KEYS};
use crate::input_file::{read_text, MAX_PROFILE_FILE_BYTES};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The keys a profile file may have at its top level.
pub const FILE_KEYS: [&str; 6] = ["base", "name", "description", "costs", "variance", "fit"];

/// Whether a `hosts[].profile` value names a profile file rather than a preset.
pub fn is_file(profile: &str) -> bool {
    profile.ends_with(".toml")
}

/// The path a profile file value refers to: relative to `base` (the
/// scenario file's directory) when given, else to the working directory.
pub fn resolve_path(profile: &str, base: Option<&Path>) -> PathBuf {
    let p = Path::new(profile);
    match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    }
}

/// Load the profile file `profile` (a `hosts[].profile` value ending in
/// `.toml`), relative to `base`; errors name `field` (`hosts[i].profile`),
/// the file and the key inside it.
pub fn load(
    profile: &str,
    base: Option<&Path>,
    field: &str,
) -> Result<&'static HostProfile, Error> {
    let path = resolve_path(profile, base);
    let text = read_text(&path, "profile file", MAX_PROFILE_FILE_BYTES).map_err(|m| {
        // A missing file may be a mistyped preset name: list them.
        let help = if m.ends_with("not found") || m.ends_with("does not exist") {
            format!(
                "; give a preset name ({}) or the path of a profile file, relative to the \
                 scenario file",
                preset_names()
            )
        } else {
            String::new()
        };
        cfg_err(field, format!("{m}{help}"))
    })?;
    type Key = (PathBuf, String);
    static CACHE: OnceLock<Mutex<BTreeMap<Key, &'static HostProfile>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
    let key = (path.clone(), text);
    if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p);
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| profile.to_string());
    let built = parse(&key.1, &stem)
        .map_err(|m| cfg_err(field, format!("profile file {}: {m}", path.display())))?;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, built);
    Ok(built)
}

fn preset_names() -> String {
    profile::presets()
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Build the profile a file's text describes; `stem` is its default name.
/// The error message names the key inside the file and the fix.
pub fn parse(text: &str, stem: &str) -> Result<&'static HostProfile, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.to_string().trim_end()))?;
    if let Some(bad) = doc.keys().find(|k| !FILE_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key `{bad}`; allowed: {}",
            FILE_KEYS.join(", ")
        ));
    }
    let base_name = match doc.get("base") {
        None => {
            return Err(format!(
                "`base` is missing; name the preset the file starts from: base = \"{}\" \
                 (allowed: {})",
                "apu2",
                preset_names()
            ))
        }
        Some(toml::Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(format!(
                "`base` must be a preset name in quotes, got {v}; allowed: {}",
                preset_names()
            ))
        }
    };
    let base = profile::by_name(base_name).ok_or_else(|| {
        format!(
            "`base` = {base_name:?} is not a preset; allowed: {} (a profile file cannot \
             start from another file)",
            preset_names()
        )
    })?;
    let text_field = |key: &str, default: &str| -> Result<String, String> {
        match doc.get(key) {
            None => Ok(default.to_string()),
            Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(toml::Value::String(_)) if key == "description" => Ok(String::new()),
            Some(v) => Err(format!("`{key}` must be a non-empty string, got {v}")),
        }
    };
    let name = text_field("name", stem)?;
    let description = text_field("description", base.description)?;
    let mut costs = BTreeMap::new();
    match doc.get("costs") {
        None => {}
        Some(toml::Value::Table(t)) => {
            for (k, v) in t {
                if !OVERRIDABLE.contains(&k.as_str()) {
                    return Err(format!(
                        "`costs.{k}` is not a cost of a host profile; allowed: {}",
                        OVERRIDABLE.join(", ")
                    ));
                }
                let n = match v {
                    toml::Value::Integer(n) => *n,
                    other => {
                        return Err(format!(
                            "`costs.{k}` must be an integer (ns, or ps per byte for \
                             copy_ps_per_byte), got {other}"
                        ))
                    }
                };
                if n < 0 || n as u64 > MAX_COST {
                    return Err(format!(
                        "`costs.{k}` = {n} is out of range; allowed: 0 to {MAX_COST}"
                    ));
                }
                costs.insert(k.clone(), n as u64);
            }
        }
        Some(v) => {
            return Err(format!(
                "`costs` must be a table (a [costs] section of cost = value lines), got {v}"
            ))
        }
    }
    if let Some(v) = doc.get("fit") {
        if !v.is_table() {
            return Err(format!(
                "`fit` must be a table (a [fit] section; it is not read), got {v}"
            ));
        }
    }
    let built = base.with_overrides_named(&costs, Some((&name, &description)))?;
    let variance = match doc.get("variance") {
        None => return Ok(built),
        Some(v) => parse_variance(v, base.variance)?,
    };
    if variance == built.variance {
        return Ok(built);
    }
    // Leaked once per distinct file text (`load` caches by text).
    Ok(Box::leak(Box::new(HostProfile {
        variance,
        ..built.clone()
    })))
}

/// A file's `variance`: the string "none", or a table of parameters set on
/// top of the base preset's.
fn parse_variance(v: &toml::Value, base: Variance) -> Result<Variance, String> {
    let t = match v {
        toml::Value::String(s) if s == "none" => return Ok(Variance::NONE),
        toml::Value::Table(t) => t,
        other => {
            return Err(format!(
                "`variance` must be \"none\" or a table ([variance] with any of {}), got {other}",
                VARIANCE_KEYS.join(", ")
            ))
        }
    };
    let mut out = base;
    for (k, v) in t {
        let n = match v {
            toml::Value::Integer(n) if *n >= 0 => *n as u64,
            other => {
                return Err(format!(
                    "`variance.{k}` must be a non-negative integer, got {other}"
                ))
            }
        };
        out.set(k, n)?;
    }
    out.check()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    #[test]
    fn a_file_sets_its_costs_on_its_base_and_keeps_the_rest() {
        let p = parse(
            "base = \"apu2\"\nname = \"mine\"\n[costs]\ntx_packet_ns = 7000\n\
             copy_ps_per_byte = 900\ncontext_switch_ns = 2500\n[fit]\nrows = \"x.csv\"\n",
            "stem",
        )
        .unwrap();
        let b = &HostProfile::APU2;
        assert_eq!(p.name, "mine");
        assert_eq!(p.description, b.description);
        assert_eq!(p.tx_packet_ns, Nanos(7000));
        assert_eq!(p.copy_ps_per_byte, 900);
        assert_eq!(p.context_switch_ns, Nanos(2500));
        assert_eq!(p.rx_packet_ns, b.rx_packet_ns);
        assert_eq!(p.cpu_mhz, b.cpu_mhz);
        assert_eq!(p.kernel, b.kernel);
        // Built once per distinct text.
        let again = parse(
            "base = \"apu2\"\nname = \"mine\"\n[costs]\ntx_packet_ns = 7000\n\
             copy_ps_per_byte = 900\ncontext_switch_ns = 2500\n[fit]\nrows = \"x.csv\"\n",
            "stem",
        )
        .unwrap();
        assert!(std::ptr::eq(p, again));
    }

    #[test]
    fn a_file_without_costs_is_its_base_under_another_name() {
        let p = parse("base = \"p4-xeon-2004\"\n", "my-host").unwrap();
        let b = &HostProfile::P4_XEON_2004;
        assert_eq!(p.name, "my-host");
        for k in OVERRIDABLE {
            assert_eq!(p.cost(k), b.cost(k), "{k}");
        }
    }

    #[test]
    fn bad_files_name_the_key_and_the_fix() {
        // Table: (file text, words the message must contain).
        let cases: [(&str, &[&str]); 10] = [
            ("name = \"x\"\n", &["`base` is missing", "apu2"]),
            (
                "base = \"pentium\"\n",
                &["`base`", "\"pentium\"", "xeon-modern"],
            ),
            ("base = 3\n", &["`base`", "preset name"]),
            (
                "base = \"apu2\"\n[costs]\nrx_pkt_ns = 5\n",
                &["`costs.rx_pkt_ns`", "allowed", "rx_packet_ns"],
            ),
            (
                "base = \"apu2\"\n[costs]\nrx_packet_ns = -5\n",
                &["`costs.rx_packet_ns`", "-5", "0 to 1000000"],
            ),
            (
                "base = \"apu2\"\n[costs]\nrx_packet_ns = 2000000\n",
                &["`costs.rx_packet_ns`", "0 to 1000000"],
            ),
            (
                "base = \"apu2\"\n[costs]\nrx_packet_ns = 5.5\n",
                &["`costs.rx_packet_ns`", "integer"],
            ),
            ("base = \"apu2\"\ncosts = 5\n", &["`costs` must be a table"]),
            (
                "base = \"apu2\"\nclock = 5\n",
                &["unknown key `clock`", "base, name"],
            ),
            ("base = = \"apu2\"\n", &["not valid TOML"]),
        ];
        for (text, words) in cases {
            let e = parse(text, "f").unwrap_err();
            for w in words {
                assert!(e.contains(w), "{text:?}: {e:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn a_file_sets_or_clears_the_variance() {
        let p = parse(
            "base = \"p4-xeon-2004\"\n[variance]\ncost_cv_permille = 250\ntick_hz = 100\n\
             tick_ns = 4000\n",
            "v",
        )
        .unwrap();
        assert_eq!(p.variance.cost_cv_permille, 250);
        assert_eq!(p.variance.tick_hz, 100);
        assert_eq!(p.variance.tick_ns, Nanos(4000));
        // The parameters the table leaves out are the base's.
        let b = HostProfile::P4_XEON_2004.variance;
        assert_eq!(p.variance.wake_max_ns, b.wake_max_ns);
        let p = parse("base = \"apu2\"\nvariance = \"none\"\n", "n").unwrap();
        assert!(p.variance.is_none());
        for (text, words) in [
            (
                "variance = 3\n",
                &["`variance` must be \"none\"", "tick_hz"][..],
            ),
            (
                "[variance]\ntick = 3\n",
                &["`variance.tick`", "allowed"][..],
            ),
            (
                "[variance]\ntick_hz = -3\n",
                &["`variance.tick_hz`", "non-negative"][..],
            ),
            (
                "[variance]\ntick_hz = 100\ntick_ns = 10000000\n",
                &["tick period"][..],
            ),
        ] {
            let e = parse(&format!("base = \"apu2\"\n{text}"), "f").unwrap_err();
            for w in words {
                assert!(e.contains(w), "{text:?}: {e:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn a_missing_file_names_the_field_and_the_path() {
        let e = load(
            "no-such-host.toml",
            Some(Path::new("/nowhere")),
            "hosts[0].profile",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("hosts[0].profile"), "{e}");
        assert!(e.contains("/nowhere/no-such-host.toml"), "{e}");
        assert!(e.contains("p4-xeon-2004"), "{e}");
    }

    #[test]
    fn file_paths_resolve_against_the_scenario_directory() {
        assert!(is_file("my-host.toml"));
        assert!(!is_file("apu2"));
        assert_eq!(
            resolve_path("h.toml", Some(Path::new("/a/b"))),
            PathBuf::from("/a/b/h.toml")
        );
        assert_eq!(
            resolve_path("/abs/h.toml", Some(Path::new("/a/b"))),
            PathBuf::from("/abs/h.toml")
        );
        assert_eq!(resolve_path("h.toml", None), PathBuf::from("h.toml"));
    }
}
