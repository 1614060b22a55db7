//! The README's "Getting started" section shows the `getting-started` example verbatim (so
//! the code a new user copies is the code compiled and tested here), with the commands that
//! go with it.

const README: &str = include_str!("../../README.md");
const GETTING_STARTED: &str = include_str!("../getting-started.rs");

fn section(title: &str) -> &'static str {
    let start = README
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("README has no {title:?} section"));
    let rest = &README[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

#[test]
fn the_readme_should_show_the_getting_started_example_verbatim() {
    let section = section("Getting started");
    assert!(
        section.contains(&format!("```rust\n{GETTING_STARTED}```")),
        "README's getting started differs from examples/getting-started.rs"
    );
}

#[test]
fn the_getting_started_section_should_choose_a_kubernetes_version_and_document_rust_log() {
    let section = section("Getting started");
    for needle in [
        "cargo new",
        "kcr = \"0.1\"",
        "k8s-openapi = { version = \"0.29\", features = [\"v1_33\"] }",
        "kcr-testenv = \"0.1\"",
        "cargo test",
        "RUST_LOG=info cargo run",
        "#[async_trait]",
    ] {
        assert!(section.contains(needle), "no {needle:?} in getting started");
    }
}

#[test]
fn the_readme_should_apply_the_crd_as_a_real_cluster_accepts_it() {
    // The printed CRD carries the approval annotation of its protected group (see foo.rs).
    let crd = kcr_examples::foo::Foo::crd_json().expect("crd");
    assert!(crd.contains("api-approved.kubernetes.io"));
    assert!(README.contains("--print-crd | kubectl apply -f -"));
}
