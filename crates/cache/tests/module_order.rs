//! kcr-cache's modules import each other without cycles: each (outside its
//! tests) imports only modules listed before it here, the order the crate
//! doc gives. A module that imports a later one (the `Store` trait naming a
//! FIFO type, say) fails this test.

use std::collections::BTreeSet;
use std::path::Path;

/// Leaves first.
const ORDER: &[&str] = &[
    "error",
    "metrics",
    "selector",
    "synctrack",
    "key",
    "delta",
    "store",
    "index",
    "compact",
    "thread_safe_store",
    "indexed_store",
    "listers",
    "object_names",
    "fifo",
    "delta_fifo",
    "real_fifo",
    "mutation_cache",
];

/// The crate modules `source` names as `crate::<module>`, before its tests.
fn imports(source: &str) -> BTreeSet<String> {
    let code = source.split("\n#[cfg(test)]").next().unwrap_or_default();
    code.match_indices("crate::")
        .map(|(at, _)| {
            code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| ORDER.contains(&name.as_str()))
        .collect()
}

#[test]
fn every_module_should_import_only_modules_before_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for (position, module) in ORDER.iter().enumerate() {
        let source = std::fs::read_to_string(src.join(format!("{module}.rs")))
            .unwrap_or_else(|e| panic!("src/{module}.rs: {e}"));
        for import in imports(&source) {
            let at = ORDER
                .iter()
                .position(|m| *m == import)
                .unwrap_or(usize::MAX);
            assert!(
                at < position || import == *module,
                "src/{module}.rs imports crate::{import}, which comes after it"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, ORDER.len());
}

#[test]
fn every_module_of_the_crate_should_be_in_the_order() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        if let Some(module) = name.strip_suffix(".rs")
            && !["lib", "test_util"].contains(&module)
            && !ORDER.contains(&module)
        {
            missing.push(module.to_owned());
        }
    }
    assert!(missing.is_empty(), "not in ORDER: {missing:?}");
}
