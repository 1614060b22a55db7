//! The name formats of apimachinery's `validation` package (RFC 1123 subdomains and labels,
//! RFC 1035 labels, qualified names, label values, config keys), with kube-apiserver's messages.

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_MSG: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

fn too_long(max: usize) -> String {
    format!("must be no more than {max} characters")
}

fn is_label_body(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// The problems of `s` as an RFC 1123 subdomain (object names).
pub(crate) fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(too_long(253));
    }
    if !s.split('.').all(is_label_body) {
        errs.push(SUBDOMAIN_MSG.to_owned());
    }
    errs
}

/// The problems of `s` as an RFC 1123 label (namespace and container names).
pub(crate) fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(too_long(63));
    }
    if !is_label_body(s) {
        errs.push(LABEL_MSG.to_owned());
    }
    errs
}

/// The problems of `s` as an RFC 1035 label (Service names).
pub(crate) fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(too_long(63));
    }
    if !is_label_body(s) || !s.as_bytes()[0].is_ascii_lowercase() {
        errs.push(DNS1035_MSG.to_owned());
    }
    errs
}

fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// The problems of `s` as a qualified name (`[prefix/]name`: label and annotation keys).
pub(crate) fn qualified_name(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                return vec!["prefix part must be non-empty".into()];
            }
            let prefix_errs = dns1123_subdomain(prefix);
            if !prefix_errs.is_empty() {
                return prefix_errs
                    .into_iter()
                    .map(|m| format!("prefix part {m}"))
                    .collect();
            }
            *name
        }
        _ => return vec![QUALIFIED_MSG.to_owned()],
    };
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else {
        if name.len() > 63 {
            // apimachinery words this one in bytes (the DNS name limits in characters).
            errs.push("name part must be no more than 63 bytes".to_owned());
        }
        if !is_name_part(name) {
            errs.push(NAME_PART_MSG.to_owned());
        }
    }
    errs
}

/// The problems of `s` as a label value.
pub(crate) fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(too_long(63));
    }
    if !s.is_empty() && !is_name_part(s) {
        errs.push(LABEL_VALUE_MSG.to_owned());
    }
    errs
}

/// The problems of `s` as a ConfigMap or Secret key.
pub(crate) fn config_map_key(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(too_long(253));
    }
    if s.is_empty()
        || !s
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        errs.push(CONFIG_KEY_MSG.to_owned());
    } else if s == "." {
        errs.push("must not be '.'".into());
    } else if s == ".." {
        errs.push("must not be '..'".into());
    } else if s.starts_with("..") {
        errs.push("must not start with '..'".into());
    }
    errs
}

/// Checks the `name` of entry `at` of a named list (containers, volumes): required, a DNS-1123
/// label, and unique among the names already `seen`.
pub(crate) fn check_entry_name<'a>(
    at: &str,
    entry: &'a serde_json::Value,
    seen: &mut std::collections::HashSet<&'a str>,
    errs: &mut Vec<super::field::FieldError>,
) {
    use super::field::FieldError;
    let name = entry
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        errs.push(FieldError::required(format!("{at}.name"), ""));
        return;
    }
    for msg in dns1123_label(name) {
        errs.push(FieldError::invalid(
            format!("{at}.name"),
            &serde_json::json!(name),
            &msg,
        ));
    }
    if !seen.insert(name) {
        errs.push(FieldError::duplicate(
            format!("{at}.name"),
            &serde_json::json!(name),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_should_follow_rfc_1123_and_qualified_name_rules() {
        assert!(dns1123_subdomain("a.b-c").is_empty());
        assert_eq!(dns1123_subdomain("Bad_Name").len(), 1);
        assert_eq!(dns1123_subdomain(&"a".repeat(254)), vec![too_long(253)]);
        assert!(dns1123_label("web-1").is_empty());
        assert!(!dns1123_label("a.b").is_empty());
        assert!(!dns1035_label("1abc").is_empty());
        assert!(qualified_name("example.com/my_name").is_empty());
        assert_eq!(qualified_name("bad key!"), vec![NAME_PART_MSG.to_owned()]);
        assert_eq!(qualified_name("a/b/c"), vec![QUALIFIED_MSG.to_owned()]);
        assert!(label_value("").is_empty());
        assert!(!label_value("-x").is_empty());
        assert!(config_map_key("KEY_name.1").is_empty());
        assert!(!config_map_key("bad key!").is_empty());
    }
}
