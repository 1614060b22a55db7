//! The enumerated policies of a pod spec, as kube-apiserver's core validation checks them
//! after defaulting: restart and DNS policy, each container's pull policy, termination message
//! policy and port protocols (`422` `Unsupported value` with the supported values).

use serde_json::{Value, json};

use super::field::FieldError;

/// Port protocols, listed as kube-apiserver lists them (sorted).
pub(crate) const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// `value` at `field` is one of `supported` (`Required` when empty, as after defaulting only a
/// cleared value can be).
fn one_of(errs: &mut Vec<FieldError>, field: String, value: Option<&Value>, supported: &[&str]) {
    match value.and_then(Value::as_str) {
        None => {}
        Some("") => errs.push(FieldError::required(field, "")),
        Some(v) if supported.contains(&v) => {}
        Some(v) => errs.push(FieldError::not_supported(field, &json!(v), supported)),
    }
}

/// The policies of the pod spec `spec` at `path`.
pub(crate) fn validate(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(spec) = spec else {
        return errs;
    };
    for list in ["initContainers", "containers"] {
        for (i, c) in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{path}.{list}[{i}]");
            for (j, p) in c
                .get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                one_of(
                    &mut errs,
                    format!("{at}.ports[{j}].protocol"),
                    p.get("protocol"),
                    PROTOCOLS,
                );
            }
            match c.get("terminationMessagePolicy").and_then(Value::as_str) {
                None | Some("File" | "FallbackToLogsOnError") => {}
                Some(v) => errs.push(FieldError::invalid(
                    format!("{at}.terminationMessagePolicy"),
                    &json!(v),
                    "must be 'File' or 'FallbackToLogsOnError'",
                )),
            }
            one_of(
                &mut errs,
                format!("{at}.imagePullPolicy"),
                c.get("imagePullPolicy"),
                &["Always", "IfNotPresent", "Never"],
            );
        }
    }
    one_of(
        &mut errs,
        format!("{path}.restartPolicy"),
        spec.get("restartPolicy"),
        &["Always", "OnFailure", "Never"],
    );
    one_of(
        &mut errs,
        format!("{path}.dnsPolicy"),
        spec.get("dnsPolicy"),
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    );
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_policies_should_be_unsupported_values() {
        let spec = json!({
            "restartPolicy": "Sometimes",
            "dnsPolicy": "ClusterFirst",
            "containers": [{"name": "a", "imagePullPolicy": "Maybe",
                            "ports": [{"containerPort": 80, "protocol": "HTTP"}]}]
        });
        let errs = validate(Some(&spec), "spec");
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.containers[0].ports[0].protocol",
                "spec.containers[0].imagePullPolicy",
                "spec.restartPolicy"
            ]
        );
        assert_eq!(
            errs[2].message,
            "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""
        );
    }
}
