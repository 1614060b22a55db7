//! Validation of a write's query options (`CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions`), as apimachinery's `ValidateCreateOptions` and friends: `dryRun` takes only
//! `All`, `fieldValidation` only `Ignore`, `Warn` or `Strict`, `propagationPolicy` only
//! `Foreground`, `Background` or `Orphan`.

use serde_json::{Value, json};

use super::field::{FieldError, check};
use crate::server::Request;
use crate::status::ApiResult;

/// The options kind of a verb, as named in the 422 body.
fn options_kind(verb: &str) -> &'static str {
    match verb {
        "create" => "CreateOptions",
        "update" => "UpdateOptions",
        "patch" => "PatchOptions",
        _ => "DeleteOptions",
    }
}

/// The `dryRun` rule (`ValidateDryRun`): only `All`.
fn dry_run(values: &[&str]) -> Option<FieldError> {
    values
        .iter()
        .any(|v| *v != "All")
        .then(|| FieldError::not_supported("dryRun", &json!(values), &["All"]))
}

/// `ValidateFieldManager`: at most 128 bytes, every character printable.
fn field_manager(manager: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if manager.len() > 128 {
        errors.push(FieldError::too_long("fieldManager", 128));
    }
    for (i, c) in manager.char_indices() {
        if !is_go_printable(c) {
            errors.push(FieldError {
                field: "fieldManager".into(),
                reason: "FieldValueInvalid",
                message: format!(
                    "Invalid value: {}: invalid character U+{:04X} (at position {i})",
                    crate::wire::go_strconv::go_quote(manager),
                    u32::from(c)
                ),
            });
        }
    }
    errors
}

/// Go's `unicode.IsPrint` for what a query parameter holds: no control characters, the ASCII
/// space printable.
fn is_go_printable(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace())
}

/// Validates the query options of a create, update or patch (`verb`; `apply`: a patch is a
/// server-side apply), as `ValidateCreateOptions`, `ValidateUpdateOptions` and
/// `ValidatePatchOptions` do, every error in one `422`.
pub(crate) fn validate(req: &Request, verb: &str, apply: bool) -> ApiResult<()> {
    let mut errors = Vec::new();
    if verb == "patch" {
        if !apply && req.param("force").is_some() {
            errors.push(FieldError::forbidden(
                "force",
                "may not be specified for non-apply patch",
            ));
        }
        if apply && req.param("fieldManager").is_none_or(str::is_empty) {
            errors.push(FieldError::required(
                "fieldManager",
                "is required for apply patch",
            ));
        }
    }
    if let Some(manager) = req.param("fieldManager") {
        errors.extend(field_manager(manager));
    }
    let values: Vec<&str> = req
        .query
        .iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v.as_str())
        .collect();
    errors.extend(dry_run(&values));
    if let Some(v) = req.param("fieldValidation")
        && !matches!(v, "" | "Ignore" | "Strict" | "Warn")
    {
        errors.push(FieldError::not_supported(
            "fieldValidation",
            &json!(v),
            &["", "Ignore", "Strict", "Warn"],
        ));
    }
    check("meta.k8s.io", options_kind(verb), "", errors)
}

/// Validates the DeleteOptions of a delete or deletecollection (`ValidateDeleteOptions`, in its
/// order): `orphanDependents` and `propagationPolicy` exclusive, the policy's values, `dryRun`.
pub(crate) fn validate_delete(options: &Value) -> ApiResult<()> {
    let mut errors = Vec::new();
    let policy = options.get("propagationPolicy").filter(|p| !p.is_null());
    if let Some(p) = policy {
        if options
            .get("orphanDependents")
            .is_some_and(|o| !o.is_null())
        {
            errors.push(FieldError::invalid(
                "propagationPolicy",
                p,
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if !matches!(p.as_str(), Some("Foreground" | "Background" | "Orphan")) {
            errors.push(FieldError::not_supported(
                "propagationPolicy",
                p,
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    }
    if let Some(values) = options.get("dryRun").and_then(Value::as_array) {
        let values: Vec<&str> = values
            .iter()
            .map(|v| v.as_str().unwrap_or_default())
            .collect();
        errors.extend(dry_run(&values));
    }
    check("meta.k8s.io", "DeleteOptions", "", errors)
}

/// The DeleteOptions with the propagation `orphanDependents: true` asks for made explicit.
pub(crate) fn with_policy(mut options: Value) -> Value {
    if options.get("propagationPolicy").is_none_or(Value::is_null)
        && options.get("orphanDependents") == Some(&Value::Bool(true))
        && let Some(map) = options.as_object_mut()
    {
        map.insert("propagationPolicy".into(), json!("Orphan"));
    }
    options
}

/// The `propagationPolicy` of DeleteOptions (after [`with_query_policy`]).
pub(crate) fn propagation_policy_of(options: &Value) -> Option<&str> {
    options.get("propagationPolicy").and_then(Value::as_str)
}
