//! Unit tests of `[[at]]` paths (`scenario::config::at`).

use super::*;
use serde_json::json;

#[test]
fn paths_parse_as_the_sweep_syntax() {
    use Token::*;
    assert_eq!(
        parse_path("hosts[0].nics[*].moderation.enable_aim").unwrap(),
        vec![
            Key("hosts".into()),
            Index(0),
            Key("nics".into()),
            All,
            Key("moderation".into()),
            Key("enable_aim".into())
        ]
    );
    assert_eq!(
        parse_path("a[1][2]").unwrap(),
        vec![Key("a".into()), Index(1), Index(2)]
    );
    for bad in [
        "", ".a", "a.", "a..b", "a[", "a[]", "a[x]", "a[-1]", "0a", "a b", "a]",
    ] {
        let e = parse_path(bad).unwrap_err();
        assert!(e.contains("is not a field path"), "{bad}: {e}");
    }
}

#[test]
fn set_path_creates_names_and_refuses_missing_indices() {
    let mut d = json!({"hosts": [{"name": "a"}], "x": 1});
    set_path(&mut d, "hosts[0].tcp.delack_us", &json!(1000)).unwrap();
    assert_eq!(d["hosts"][0]["tcp"]["delack_us"], json!(1000));
    set_path(&mut d, "hosts[*].name", &json!("b")).unwrap();
    assert_eq!(d["hosts"][0]["name"], json!("b"));
    let e = set_path(&mut d, "hosts[1].name", &json!("c")).unwrap_err();
    assert!(
        e.contains("index 1 is out of range") && e.contains("1 element "),
        "{e}"
    );
    let e = set_path(&mut d, "x.y", &json!(1)).unwrap_err();
    assert!(e.contains("`x` is a number, not a table"), "{e}");
    let e = set_path(&mut d, "x[0]", &json!(1)).unwrap_err();
    assert!(e.contains("not a list"), "{e}");
    let e = set_path(&mut d, "gens[0].rate", &json!(1)).unwrap_err();
    assert!(e.contains("no `gens` list to index"), "{e}");
    // A whole table as the value.
    set_path(&mut d, "hosts[0].tcp", &json!({"rto_min_ms": 5})).unwrap();
    assert_eq!(d["hosts"][0]["tcp"], json!({"rto_min_ms": 5}));
}
