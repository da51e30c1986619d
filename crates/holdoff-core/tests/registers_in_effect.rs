//! Registers as the chip holds them, and warnings for configured values that
//! are not in effect (issue: report what is in effect).
//!
//! Expected values follow from the register maps: the I210 datasheet's
//! register summary lists EITR as the only interrupt-moderation register (no
//! RADV, TADV), so a configured RADV is dropped; an 82546 (8254x family) has
//! all five timers, so the same RADV is held and no warning is emitted
//! (RDTR is non-zero there, so RADV can act: 8254x SDM §13.4.30).

mod common;
use common::{summary, OneHost};

/// 100 kframes/s of 64-byte frames for 20 ms into one port of `chip` with
/// the `[hosts.nics.moderation]` body `moderation`.
fn scenario(chip: &'static str, moderation: &str) -> String {
    OneHost {
        profile: "xeon-modern",
        chip,
        pattern: "constant",
        rate_pps: 100_000.0,
        duration_ms: 20,
        seed: 1,
        moderation: moderation.into(),
        ..OneHost::default()
    }
    .toml()
}

#[test]
fn radv_on_i210_is_not_in_effect_and_warned_once() {
    let s = summary(&scenario(
        "i210",
        "kind = \"static\"\neitr_us = 125\nradv_1024ns = 64",
    ));
    let regs = &s["ports"][0]["registers"];
    // The chip has no RADV: null, not the configured 64.
    assert!(regs["radv_1024ns"].is_null(), "{regs}");
    // EITR holds the configured interval in its own unit [us].
    assert_eq!(regs["eitr_us"], serde_json::json!([125]));
    assert!(regs["itr_256ns"].is_null());
    let warnings = s["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        warnings[0]["field"],
        "hosts[0].nics[0].moderation.radv_1024ns"
    );
    let msg = warnings[0]["message"].as_str().unwrap();
    assert!(msg.contains("RADV") && msg.contains("i210"), "{msg}");
}

#[test]
fn radv_on_82546_is_held_without_warning() {
    let s = summary(&scenario(
        "82546",
        "kind = \"static\"\nitr_256ns = 488\nrdtr_1024ns = 8\nradv_1024ns = 64",
    ));
    let regs = &s["ports"][0]["registers"];
    assert_eq!(regs["radv_1024ns"], 64);
    assert_eq!(regs["rdtr_1024ns"], 8);
    assert_eq!(regs["itr_256ns"], 488);
    assert!(regs["eitr_us"].is_null());
    assert_eq!(s["warnings"].as_array().unwrap().len(), 0);
}

#[test]
fn e1000_timer_warning_names_the_module_parameter() {
    // e1000 5.x defaults: RxIntDelay 0, RxAbsIntDelay 128. With RDTR = 0 every
    // packet raises RXT0 at once, so RADV cannot act (8254x SDM §13.4.30);
    // the warning names the kind's own field, rx_abs_int_delay.
    let s = summary(&scenario("82546", "kind = \"e1000-5x\""));
    let fields: Vec<&str> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["hosts[0].nics[0].moderation.rx_abs_int_delay"]);
}
