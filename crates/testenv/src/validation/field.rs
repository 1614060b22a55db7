//! Field errors, as apimachinery's `field.Error` / `field.ErrorList`: each names the field path,
//! a reason (`FieldValueRequired`, `FieldValueInvalid`, ...) and a message, and a list of them
//! becomes one `422 Invalid` Status.

use serde_json::Value;

use crate::status::ApiError;

/// One invalid field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldError {
    pub(crate) field: String,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
}

/// How a value is shown in a message: strings quoted, numbers and booleans as they are,
/// anything else as JSON (Go's `%#v`-like rendering in `field.Invalid`).
pub(crate) fn show(value: &Value) -> String {
    value.to_string()
}

impl FieldError {
    /// `Required value` (with a detail when given).
    pub(crate) fn required(field: impl Into<String>, detail: &str) -> Self {
        Self {
            field: field.into(),
            reason: "FieldValueRequired",
            message: if detail.is_empty() {
                "Required value".into()
            } else {
                format!("Required value: {detail}")
            },
        }
    }

    /// `Invalid value: <value>: <detail>`.
    pub(crate) fn invalid(field: impl Into<String>, value: &Value, detail: &str) -> Self {
        Self {
            field: field.into(),
            reason: "FieldValueInvalid",
            message: if detail.is_empty() {
                format!("Invalid value: {}", show(value))
            } else {
                format!("Invalid value: {}: {detail}", show(value))
            },
        }
    }

    /// `Unsupported value: <value>: supported values: "a", "b"`.
    pub(crate) fn not_supported(
        field: impl Into<String>,
        value: &Value,
        supported: &[&str],
    ) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        Self {
            field: field.into(),
            reason: "FieldValueNotSupported",
            message: format!(
                "Unsupported value: {}: supported values: {}",
                show(value),
                list.join(", ")
            ),
        }
    }

    /// `Forbidden: <detail>`.
    pub(crate) fn forbidden(field: impl Into<String>, detail: &str) -> Self {
        Self {
            field: field.into(),
            reason: "FieldValueForbidden",
            message: format!("Forbidden: {detail}"),
        }
    }

    /// `Duplicate value: <value>`.
    pub(crate) fn duplicate(field: impl Into<String>, value: &Value) -> Self {
        Self {
            field: field.into(),
            reason: "FieldValueDuplicate",
            message: format!("Duplicate value: {}", show(value)),
        }
    }

    /// `Too long: may not be more than <max> bytes`.
    pub(crate) fn too_long(field: impl Into<String>, max: usize) -> Self {
        Self {
            field: field.into(),
            reason: "FieldValueTooLong",
            message: format!("Too long: may not be more than {max} bytes"),
        }
    }
}

/// The `422 Invalid` Status for `errors` on the object `group`/`kind` named `name`; `Ok` when
/// there are none.
pub(crate) fn check(
    group: &str,
    kind: &str,
    name: &str,
    errors: Vec<FieldError>,
) -> Result<(), ApiError> {
    if errors.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, &str, String)> = errors
        .iter()
        .map(|e| (e.field.as_str(), e.reason, e.message.clone()))
        .collect();
    Err(ApiError::invalid(group, kind, name, &causes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_should_read_as_kube_apiserver_writes_them() {
        assert_eq!(
            FieldError::not_supported("spec.type", &json!("Bogus"), &["ClusterIP", "NodePort"])
                .message,
            "Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"NodePort\""
        );
        assert_eq!(
            FieldError::invalid("x", &json!(70000), "must be between 1 and 65535, inclusive")
                .message,
            "Invalid value: 70000: must be between 1 and 65535, inclusive"
        );
        assert_eq!(FieldError::required("x", "").message, "Required value");
        assert_eq!(
            FieldError::duplicate("x", &json!("a")).message,
            "Duplicate value: \"a\""
        );
    }
}
