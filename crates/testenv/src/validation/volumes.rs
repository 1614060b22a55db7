//! The volumes of a pod spec, as kube-apiserver's `ValidateVolumes`: each has a unique DNS-label
//! name and exactly one volume source (a strategic merge that adds a second source to a volume
//! is refused).

use std::collections::HashSet;

use serde_json::Value;

use super::field::FieldError;
use super::names;
use crate::defaults::pod::VOLUME_SOURCES;

/// The volumes of the pod spec `spec` at `path`.
pub(crate) fn validate(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let volumes = spec
        .and_then(|s| s.get("volumes"))
        .and_then(Value::as_array);
    let mut seen = HashSet::new();
    for (i, v) in volumes.into_iter().flatten().enumerate() {
        let at = format!("{path}.volumes[{i}]");
        names::check_entry_name(&at, v, &mut seen, &mut errs);
        let sources: Vec<&str> = VOLUME_SOURCES
            .iter()
            .copied()
            .filter(|s| v.get(*s).is_some_and(|s| !s.is_null()))
            .collect();
        match sources.as_slice() {
            [] => errs.push(FieldError::required(at, "must specify a volume type")),
            [_] => {}
            [_, rest @ ..] => {
                for s in rest {
                    errs.push(FieldError::forbidden(
                        format!("{at}.{s}"),
                        "may not specify more than 1 volume type",
                    ));
                }
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_volume_should_have_exactly_one_source() {
        let spec = json!({"volumes": [
            {"name": "a", "emptyDir": {}},
            {"name": "b", "emptyDir": {}, "configMap": {"name": "x"}}
        ]});
        let errs = validate(Some(&spec), "spec");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.volumes[1].configMap");
        assert_eq!(
            errs[0].message,
            "Forbidden: may not specify more than 1 volume type"
        );
    }
}
