//! Validation of a custom resource against its version's `openAPIV3Schema`, with the causes
//! kube-apiserver's OpenAPI validator writes: `FieldValueTypeInvalid` (`spec.size in body must
//! be of type integer: "string"`), `FieldValueNotSupported` for `enum`, `FieldValueRequired`,
//! `FieldValueInvalid` for bounds, lengths and patterns, `FieldValueTooLong` /
//! `FieldValueTooMany` for `maxLength` / `maxItems`.
//!
//! `metadata`, `apiVersion` and `kind` at the root are left to the object-meta rules.

use serde_json::{Map, Value};

use crate::validation::field::FieldError;

/// The JSON type of a value as the validator names it.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 => "integer",
            _ => "number",
        },
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(want: &str, v: &Value) -> bool {
    let got = type_name(v);
    want == got || (want == "number" && got == "integer")
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn error(field: &str, reason: &'static str, message: String) -> FieldError {
    FieldError {
        field: field.to_owned(),
        reason,
        message,
    }
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Validates the object at the root of a resource.
pub(crate) fn validate(obj: &Map<String, Value>, schema: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut root = obj.clone();
    for k in ["metadata", "apiVersion", "kind"] {
        root.remove(k);
    }
    validate_at(&Value::Object(root), schema, "", &mut out);
    out
}

/// Validates a value that is not the root of a resource (a schema's default) found at `at`:
/// the messages name the paths inside the value (`body` for the value itself), the causes
/// their full field paths.
pub(crate) fn validate_value(value: &Value, schema: &Value, at: &str) -> Vec<FieldError> {
    let mut out = Vec::new();
    validate_at(value, schema, "", &mut out);
    for e in &mut out {
        e.field = if e.field.is_empty() {
            at.to_owned()
        } else {
            format!("{at}.{}", e.field)
        };
    }
    out
}

fn validate_at(value: &Value, schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    if value.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let shown = if path.is_empty() { "body" } else { path };
    if let Some(want) = schema.get("type").and_then(Value::as_str)
        && !type_matches(want, value)
        && schema
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            != Some(true)
    {
        let got = type_name(value);
        out.push(error(
            path,
            "FieldValueTypeInvalid",
            format!("Invalid value: \"{got}\": {shown} in body must be of type {want}: \"{got}\""),
        ));
        return;
    }
    match value {
        Value::Number(_) => numeric(value, schema, path, out),
        Value::String(s) => string(s, value, schema, path, out),
        Value::Array(items) => {
            let n = items.len() as u64;
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && n > max
            {
                out.push(error(
                    path,
                    "FieldValueTooMany",
                    format!("Too many: {n}: must have at most {max} items"),
                ));
            }
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && n < min
            {
                out.push(error(
                    path,
                    "FieldValueInvalid",
                    format!("Invalid value: {n}: {path} in body should have at least {min} items"),
                ));
            }
            if let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    validate_at(item, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::Object(map) => {
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for r in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(r) {
                        out.push(FieldError::required(child(path, r), ""));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, v) in map {
                let sub = properties.and_then(|p| p.get(key)).or(additional);
                if let Some(sub) = sub {
                    validate_at(v, sub, &child(path, key), out);
                }
            }
        }
        _ => {}
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        out.push(error(
            path,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {value}: supported values: {}",
                list.join(", ")
            ),
        ));
    }
}

fn numeric(value: &Value, schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    let Some(x) = number(value) else { return };
    let exclusive = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if let Some(min) = schema.get("minimum").and_then(number) {
        let (bad, how) = if exclusive("exclusiveMinimum") {
            (x <= min, "greater than")
        } else {
            (x < min, "greater than or equal to")
        };
        if bad {
            out.push(error(
                path,
                "FieldValueInvalid",
                format!(
                    "Invalid value: {value}: {path} in body should be {how} {}",
                    schema["minimum"]
                ),
            ));
        }
    }
    if let Some(max) = schema.get("maximum").and_then(number) {
        let (bad, how) = if exclusive("exclusiveMaximum") {
            (x >= max, "less than")
        } else {
            (x > max, "less than or equal to")
        };
        if bad {
            out.push(error(
                path,
                "FieldValueInvalid",
                format!(
                    "Invalid value: {value}: {path} in body should be {how} {}",
                    schema["maximum"]
                ),
            ));
        }
    }
    if let Some(m) = schema.get("multipleOf").and_then(number)
        && m > 0.0
        && (x / m).fract() != 0.0
    {
        out.push(error(
            path,
            "FieldValueInvalid",
            format!(
                "Invalid value: {value}: {path} in body should be a multiple of {}",
                schema["multipleOf"]
            ),
        ));
    }
}

fn string(s: &str, value: &Value, schema: &Value, path: &str, out: &mut Vec<FieldError>) {
    let len = s.chars().count() as u64;
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        out.push(error(
            path,
            "FieldValueTooLong",
            format!("Too long: may not be more than {max} bytes"),
        ));
    }
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        out.push(error(
            path,
            "FieldValueInvalid",
            format!("Invalid value: {value}: {path} in body should be at least {min} chars long"),
        ));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
        && let Ok(re) = regex::Regex::new(pattern)
        && !re.is_match(s)
    {
        out.push(error(
            path,
            "FieldValueInvalid",
            format!("Invalid value: {value}: {path} in body should match '{pattern}'"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["size"],
        "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 10},
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"}
        }}}})
    }

    fn causes(spec: Value) -> Vec<(String, &'static str, String)> {
        let obj = json!({"metadata": {"name": "w"}, "spec": spec});
        validate(obj.as_object().unwrap(), &schema())
            .into_iter()
            .map(|e| (e.field, e.reason, e.message))
            .collect()
    }

    #[test]
    fn causes_should_read_as_kube_apiserver_writes_them() {
        assert_eq!(
            causes(json!({"size": 3, "color": "red", "tags": ["a"]})),
            vec![]
        );
        assert_eq!(
            causes(json!({"size": "big"})),
            vec![(
                "spec.size".into(),
                "FieldValueTypeInvalid",
                "Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
                    .into()
            )]
        );
        assert_eq!(
            causes(json!({"size": 1, "color": "purple"})),
            vec![(
                "spec.color".into(),
                "FieldValueNotSupported",
                "Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\""
                    .into()
            )]
        );
        assert_eq!(
            causes(json!({"size": 0}))[0].2,
            "Invalid value: 0: spec.size in body should be greater than or equal to 1"
        );
        assert_eq!(
            causes(json!({"size": 11}))[0].2,
            "Invalid value: 11: spec.size in body should be less than or equal to 10"
        );
        assert_eq!(
            causes(json!({})),
            vec![(
                "spec.size".into(),
                "FieldValueRequired",
                "Required value".into()
            )]
        );
        assert_eq!(causes(json!({"size": 1, "tags": [1]}))[0].0, "spec.tags[0]");
        assert_eq!(
            causes(json!({"size": 1, "name": "ABCD"}))
                .into_iter()
                .map(|c| c.1)
                .collect::<Vec<_>>(),
            vec!["FieldValueTooLong", "FieldValueInvalid"]
        );
    }
}
