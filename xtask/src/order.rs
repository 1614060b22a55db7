//! The order in which the workspace's crates are published, computed from
//! the manifests (as `cargo metadata` reports them): every crate after the
//! workspace crates it depends on, ties broken by the `members` order.

use serde_json::Value;

/// A workspace package as far as publishing cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    /// Directory of the package relative to the workspace root.
    pub dir: String,
    pub publish: bool,
    /// Workspace packages it needs to build (normal and build dependencies;
    /// dev-dependencies are not part of a published crate's requirements).
    pub deps: Vec<String>,
}

/// Reads the workspace packages out of `cargo metadata --no-deps` JSON.
pub fn packages(metadata: &Value) -> Result<Vec<Package>, String> {
    let root = metadata["workspace_root"]
        .as_str()
        .ok_or("metadata lacks workspace_root")?;
    let list = metadata["packages"]
        .as_array()
        .ok_or("metadata lacks packages")?;
    let names: Vec<&str> = list.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut out = Vec::with_capacity(list.len());
    for p in list {
        let name = p["name"]
            .as_str()
            .ok_or("package without a name")?
            .to_string();
        let manifest = p["manifest_path"]
            .as_str()
            .ok_or("package without manifest_path")?;
        let dir = manifest
            .strip_prefix(root)
            .unwrap_or(manifest)
            .trim_start_matches('/')
            .trim_end_matches("Cargo.toml")
            .trim_end_matches('/')
            .to_string();
        // `publish: null` means any registry; `[]` means never.
        let publish = !p["publish"].as_array().is_some_and(|r| r.is_empty());
        let mut deps: Vec<String> = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(d))
            .map(str::to_string)
            .collect();
        deps.dedup();
        out.push(Package {
            name,
            dir,
            publish,
            deps,
        });
    }
    Ok(out)
}

/// Reads the `members = [...]` list of the root manifest, in order.
pub fn members(root_manifest: &str) -> Vec<String> {
    let Some(start) = root_manifest.find("members") else {
        return Vec::new();
    };
    let rest = &root_manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    rest[open + 1..close]
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The publishable packages in dependency order.
pub fn publish_order(packages: &[Package], members: &[String]) -> Result<Vec<String>, String> {
    let rank = |p: &Package| {
        members
            .iter()
            .position(|m| *m == p.dir)
            .unwrap_or(usize::MAX)
    };
    let mut pending: Vec<&Package> = packages.iter().filter(|p| p.publish).collect();
    pending.sort_by_key(|p| (rank(p), p.name.clone()));
    for p in &pending {
        for d in &p.deps {
            if packages.iter().any(|q| q.name == *d && !q.publish) {
                return Err(format!("{} depends on {d}, which is not published", p.name));
            }
        }
    }
    let mut order: Vec<String> = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|p| p.deps.iter().all(|d| order.contains(d)))
            .ok_or_else(|| {
                let names: Vec<&str> = pending.iter().map(|p| p.name.as_str()).collect();
                format!("dependency cycle among {}", names.join(", "))
            })?;
        order.push(pending.remove(ready).name.clone());
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg(name: &str, dir: &str, publish: bool, deps: &[&str]) -> Package {
        Package {
            name: name.into(),
            dir: dir.into(),
            publish,
            deps: deps.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn a_crate_comes_after_every_workspace_crate_it_depends_on() {
        let members: Vec<String> = ["crates/z", "crates/m", "crates/a", "examples"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pkgs = vec![
            pkg("top", "crates/z", true, &["mid", "base"]),
            pkg("mid", "crates/m", true, &["base"]),
            pkg("base", "crates/a", true, &[]),
            pkg("ex", "examples", false, &["top"]),
        ];
        assert_eq!(
            publish_order(&pkgs, &members).unwrap(),
            vec!["base", "mid", "top"]
        );
    }

    #[test]
    fn independent_crates_keep_the_members_order() {
        let members: Vec<String> = ["b", "a", "c"].iter().map(|s| s.to_string()).collect();
        let pkgs = vec![
            pkg("a", "a", true, &[]),
            pkg("b", "b", true, &[]),
            pkg("c", "c", true, &["a"]),
        ];
        assert_eq!(publish_order(&pkgs, &members).unwrap(), vec!["b", "a", "c"]);
    }

    #[test]
    fn cycles_and_unpublished_dependencies_are_refused() {
        let m: Vec<String> = vec![];
        let cyc = vec![pkg("a", "a", true, &["b"]), pkg("b", "b", true, &["a"])];
        assert!(publish_order(&cyc, &m).unwrap_err().contains("cycle"));
        let unpub = vec![pkg("a", "a", true, &["x"]), pkg("x", "x", false, &[])];
        assert!(
            publish_order(&unpub, &m)
                .unwrap_err()
                .contains("not published")
        );
    }

    #[test]
    fn members_are_read_in_order_from_the_root_manifest() {
        let text = "[workspace]\nresolver = \"3\"\nmembers = [\n    \"crates/metrics\",\n    \"xtask\",\n]\n";
        assert_eq!(members(text), vec!["crates/metrics", "xtask"]);
    }

    #[test]
    fn packages_are_read_from_cargo_metadata() {
        let meta: Value = serde_json::json!({
            "workspace_root": "/w",
            "packages": [
                {"name": "a", "manifest_path": "/w/crates/a/Cargo.toml", "publish": null,
                 "dependencies": [{"name": "b", "kind": null}, {"name": "c", "kind": "dev"}, {"name": "serde", "kind": null}]},
                {"name": "b", "manifest_path": "/w/crates/b/Cargo.toml", "publish": null, "dependencies": []},
                {"name": "c", "manifest_path": "/w/c/Cargo.toml", "publish": [], "dependencies": [{"name": "a", "kind": null}]}
            ]
        });
        let p = packages(&meta).unwrap();
        assert_eq!(p[0], pkg("a", "crates/a", true, &["b"]));
        assert_eq!(p[2], pkg("c", "c", false, &["a"]));
    }
}
