//! Release versions: parsing, bumping, and rewriting them in manifests.

use std::fmt;

/// A release version `MAJOR.MINOR.PATCH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    /// Parses `X.Y.Z` (three decimal numbers, nothing else).
    pub fn parse(s: &str) -> Result<Version, String> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        let [major, minor, patch] = parts.as_slice() else {
            return Err(format!("`{s}` is not a version of the form X.Y.Z"));
        };
        let num = |p: &str| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("`{s}` is not a version of the form X.Y.Z"));
            }
            p.parse::<u64>().map_err(|e| format!("`{s}`: {e}"))
        };
        Ok(Version {
            major: num(major)?,
            minor: num(minor)?,
            patch: num(patch)?,
        })
    }

    /// The version a release of `level` (`major`, `minor`, `patch` or an
    /// explicit `X.Y.Z`, which must be newer) gives.
    pub fn bumped(self, level: &str) -> Result<Version, String> {
        let next = match level {
            "major" => Version {
                major: self.major + 1,
                minor: 0,
                patch: 0,
            },
            "minor" => Version {
                major: self.major,
                minor: self.minor + 1,
                patch: 0,
            },
            "patch" => Version {
                patch: self.patch + 1,
                ..self
            },
            explicit => Version::parse(explicit)?,
        };
        if next <= self {
            return Err(format!("the new version {next} is not newer than {self}"));
        }
        Ok(next)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Reads `[workspace.package] version` from the root manifest's text.
pub fn workspace_version(manifest: &str) -> Result<Version, String> {
    let mut section = "";
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t;
        } else if section == "[workspace.package]"
            && let Some(v) = assignment(t, "version")
        {
            return Version::parse(v);
        }
    }
    Err("no `version` in [workspace.package]".to_string())
}

/// Returns the quoted value of `key = "value"`, if `line` is that assignment.
fn assignment<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line
        .strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    rest.strip_prefix('"')?.split('"').next()
}

/// Rewrites a manifest: `[workspace.package] version` and the `version` of
/// every dependency on one of the workspace's own packages (`names`) that
/// names a `path`, from `old` to `new`. Everything else is kept byte for byte.
pub fn bump_manifest(text: &str, names: &[String], old: Version, new: Version) -> String {
    let (old_q, new_q) = (format!("\"{old}\""), format!("\"{new}\""));
    let mut section = String::new();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.to_string();
        }
        let is_dep_section = section.ends_with("dependencies]");
        let rewritten = if section == "[workspace.package]" && assignment(t, "version").is_some() {
            Some(line.replacen(&old_q, &new_q, 1))
        } else if is_dep_section
            && names.iter().any(|n| dependency_line_of(t, n))
            && t.contains("path")
        {
            replace_inline_version(line, &old_q, &new_q)
        } else {
            None
        };
        out.push_str(rewritten.as_deref().unwrap_or(line));
    }
    out
}

fn dependency_line_of(line: &str, name: &str) -> bool {
    line.strip_prefix(name)
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

fn replace_inline_version(line: &str, old_q: &str, new_q: &str) -> Option<String> {
    let at = line.find("version")?;
    let (head, tail) = line.split_at(at);
    tail.contains(old_q)
        .then(|| format!("{head}{}", tail.replacen(old_q, new_q, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = r#"[workspace]
members = ["crates/a"]

[workspace.package]
version = "0.1.0"
edition = "2024"

[workspace.dependencies]
kcr-a = { path = "crates/a", version = "0.1.0", default-features = false }
kcr-ab = { path = "crates/ab", version = "0.1.0" }
serde = { version = "0.1.0" }
other = "0.1.0"
"#;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn levels_bump_the_right_part_and_reset_the_lower_ones() {
        assert_eq!(v("1.2.3").bumped("major").unwrap(), v("2.0.0"));
        assert_eq!(v("1.2.3").bumped("minor").unwrap(), v("1.3.0"));
        assert_eq!(v("1.2.3").bumped("patch").unwrap(), v("1.2.4"));
        assert_eq!(v("1.2.3").bumped("1.10.0").unwrap(), v("1.10.0"));
    }

    #[test]
    fn an_explicit_version_must_be_newer_and_well_formed() {
        assert!(v("1.2.3").bumped("1.2.3").is_err());
        assert!(v("1.2.3").bumped("1.0.9").is_err());
        assert!(v("1.2.3").bumped("1.3").is_err());
        assert!(v("1.2.3").bumped("1.3.x").is_err());
        assert!(Version::parse("01.+2.3").is_err());
    }

    #[test]
    fn the_workspace_version_is_read_from_workspace_package() {
        assert_eq!(workspace_version(ROOT).unwrap(), v("0.1.0"));
        assert!(workspace_version("[package]\nversion = \"1.0.0\"\n").is_err());
    }

    #[test]
    fn bumping_rewrites_the_workspace_and_intra_workspace_versions_only() {
        let names = vec!["kcr-a".to_string(), "kcr-ab".to_string()];
        let out = bump_manifest(ROOT, &names, v("0.1.0"), v("0.2.0"));
        assert!(out.contains("[workspace.package]\nversion = \"0.2.0\"\n"));
        assert!(out.contains(
            r#"kcr-a = { path = "crates/a", version = "0.2.0", default-features = false }"#
        ));
        assert!(out.contains(r#"kcr-ab = { path = "crates/ab", version = "0.2.0" }"#));
        assert!(
            out.contains(r#"serde = { version = "0.1.0" }"#),
            "third-party versions are untouched"
        );
        assert!(out.contains("other = \"0.1.0\""));
        assert_eq!(out.len(), ROOT.len());
    }

    #[test]
    fn bumping_a_crate_manifest_touches_only_path_dependencies_on_the_workspace() {
        let names = vec!["kcr-a".to_string()];
        let text = "[package]\nname = \"kcr-b\"\nversion = \"0.1.0\"\n\n[dependencies]\nkcr-a = { path = \"../a\", version = \"0.1.0\" }\n\n[dev-dependencies]\nkcr-a = { version = \"0.1.0\", path = \"../a\" }\n";
        let out = bump_manifest(text, &names, v("0.1.0"), v("1.0.0"));
        assert!(
            out.contains("name = \"kcr-b\"\nversion = \"0.1.0\""),
            "a [package] version is not workspace.package"
        );
        assert!(out.contains("kcr-a = { path = \"../a\", version = \"1.0.0\" }"));
        assert!(out.contains("kcr-a = { version = \"1.0.0\", path = \"../a\" }"));
    }
}
