//! `holdoff validate` lists every problem: one per host, generator, link or
//! application of the first validation stage that has any, the first of
//! them being the error a run raises. Table-driven over scenario edits.

use holdoff_core::api;
use holdoff_core::error::Error;

/// `n` one-NIC hosts, each fed by its own generator; `host_extra(i)` and
/// `link_rate(i)` edit host `i` and its link.
fn scenario(
    n: usize,
    host_extra: impl Fn(usize) -> String,
    link_rate: impl Fn(usize) -> String,
) -> String {
    let mut t = String::from("name = \"p\"\nduration_ms = 1\n");
    for i in 0..n {
        t += &format!(
            "[[hosts]]\nname = \"h{i}\"\nprofile = \"ideal\"\n{}\n\
             [[hosts.nics]]\nname = \"eth0\"\nchip = \"82546\"\n",
            host_extra(i)
        );
    }
    for i in 0..n {
        t += &format!("[[generators]]\nname = \"g{i}\"\nrate_pps = 1000\n");
    }
    for i in 0..n {
        t += &format!(
            "[[links]]\na = \"g{i}\"\nb = \"h{i}.eth0\"\nrate = \"{}\"\n",
            link_rate(i)
        );
    }
    t
}

fn fields(v: &[Error]) -> Vec<String> {
    v.iter()
        .map(|e| match e {
            Error::Config { field, .. } => field.clone(),
            other => format!("not a field error: {other}"),
        })
        .collect()
}

#[test]
fn every_problem_of_the_first_stage_is_listed() {
    let ok = |_| String::new();
    let gig = |_| "1G".to_string();
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        ("valid", scenario(3, ok, gig), vec![]),
        // Hosts 0 and 2 each have a bad field: both listed, host 1 not.
        (
            "two bad hosts",
            scenario(
                3,
                |i| {
                    if i == 1 {
                        String::new()
                    } else {
                        "cores = 0".into()
                    }
                },
                gig,
            ),
            vec!["hosts[0].cores", "hosts[2].cores"],
        ),
        // Links are checked only once the hosts are good: two bad rates.
        (
            "two bad links",
            scenario(3, ok, |i| if i == 1 { "1G".into() } else { "fast".into() }),
            vec!["links[0].rate", "links[2].rate"],
        ),
        // A bad host hides the bad link behind it (the link stage reads hosts).
        (
            "bad host and bad link",
            scenario(
                2,
                |i| {
                    if i == 0 {
                        "cores = 0".into()
                    } else {
                        String::new()
                    }
                },
                |i| {
                    if i == 1 {
                        "fast".into()
                    } else {
                        "1G".into()
                    }
                },
            ),
            vec!["hosts[0].cores"],
        ),
    ];
    for (name, text, want) in cases {
        let got = api::problems_toml_in(&text, None);
        assert_eq!(fields(&got), want, "{name}");
        // The first problem is the error validation raises.
        match api::validate_toml(&text) {
            Ok(()) => assert!(got.is_empty(), "{name}"),
            Err(e) => assert_eq!(e.to_string(), got[0].to_string(), "{name}"),
        }
    }
}

#[test]
fn unlinked_ports_are_named_together() {
    // Three hosts, no links: one problem naming the first port and all three.
    let mut text = scenario(3, |_| String::new(), |_| "1G".into());
    text.truncate(text.find("[[links]]").unwrap());
    let text = text.replacen("duration_ms = 1\n", "duration_ms = 1\nlinks = []\n", 1);
    let got = api::problems_toml_in(&text, None);
    assert_eq!(got.len(), 1);
    let msg = got[0].to_string();
    assert!(msg.contains("port \"h0.eth0\" has no link"), "{msg}");
    assert!(msg.contains("6 ports in all"), "{msg}");
}

#[test]
fn a_toml_error_comes_alone() {
    // A type error stops the parser: it is the one problem, whatever else
    // the file holds (here also no hosts).
    let got = api::problems_toml_in("name = \"x\"\nduration_ms = \"long\"\n", None);
    assert_eq!(got.len(), 1);
    assert_eq!(fields(&got), ["duration_ms"]);
}
