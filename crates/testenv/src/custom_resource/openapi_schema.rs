//! The OpenAPI rules of a CRD's `openAPIV3Schema`, as apiextensions-apiserver's
//! `ValidateCustomResourceDefinitionOpenAPISchema` applies them to every schema in the tree:
//! known types only, no `id`, `$ref`, `definitions`, `patternProperties`, `dependencies`,
//! `additionalItems` or `uniqueItems`, `properties` and `additionalProperties` mutually
//! exclusive, no defaults in `metadata`, `kind` or `apiVersion` at the root, and the
//! `x-kubernetes-*` extensions consistent with the type (`x-kubernetes-list-type` on arrays,
//! `x-kubernetes-map-type` on objects, map keys that name scalar, required or defaulted item
//! properties).
//!
//! kube-apiserver walks `properties` in Go map order (random from run to run); here they are
//! walked sorted by name.

use serde_json::{Map, Value, json};

use crate::validation::field::FieldError;

/// The types a schema may name, as kube-apiserver lists them.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// What the walk knows about the place of a schema.
#[derive(Clone, Default)]
struct Context {
    /// Why a default is not allowed here (`None`: defaults are allowed).
    no_defaults: Option<&'static str>,
    /// Inside the `metadata`, `kind` or `apiVersion` of a resource (the root or an embedded one).
    inside_resource_meta: bool,
}

fn text<'a>(s: &'a Value, key: &str) -> &'a str {
    s.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn non_empty_map<'a>(s: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    s.get(key)
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
}

fn list<'a>(s: &'a Value, key: &str) -> &'a [Value] {
    s.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The causes of `schema`, the `openAPIV3Schema` at `path`.
pub(crate) fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk(schema, path, &Context::default(), true, &mut errs);
    // The rules are compiled only in a schema without other errors (their types come from it).
    if errs.is_empty() {
        errs.extend(super::validation_rules::schema_compile_errors(schema, path));
    }
    errs
}

/// The rules of the schema itself (kube-apiserver's OpenAPI v3 standard validator).
fn standard(s: &Value, path: &str, cx: &Context, errs: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    if !ty.is_empty() && !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            &json!(ty),
            &TYPES,
        ));
    }
    if let Some(reason) = cx.no_defaults
        && s.get("default").is_some_and(|d| !d.is_null())
    {
        errs.push(FieldError::forbidden(
            format!("{path}.default"),
            &format!("must not be set {reason}"),
        ));
    }
    if !text(s, "id").is_empty() {
        errs.push(FieldError::forbidden(
            format!("{path}.id"),
            "id is not supported",
        ));
    }
    if s.get("additionalItems").is_some_and(|a| !a.is_null()) {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalItems"),
            "additionalItems is not supported",
        ));
    }
    for key in ["patternProperties", "definitions"] {
        if non_empty_map(s, key).is_some() {
            errs.push(FieldError::forbidden(
                format!("{path}.{key}"),
                &format!("{key} is not supported"),
            ));
        }
    }
    if s.get("dependencies").is_some_and(|d| !d.is_null()) {
        errs.push(FieldError::forbidden(
            format!("{path}.dependencies"),
            "dependencies is not supported",
        ));
    }
    if s.get("$ref").is_some_and(|r| !r.is_null()) {
        errs.push(FieldError::forbidden(
            format!("{path}.$ref"),
            "$ref is not supported",
        ));
    }
    if ty == "null" {
        errs.push(FieldError::forbidden(
            format!("{path}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if s.get("items")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        errs.push(FieldError::forbidden(
            format!("{path}.items"),
            "items must be a schema object and not an array",
        ));
    }
    if cx.inside_resource_meta
        && s.get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true)
    {
        errs.push(FieldError::forbidden(
            format!("{path}.x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
}

fn walk(s: &Value, path: &str, cx: &Context, root: bool, errs: &mut Vec<FieldError>) {
    if !s.is_object() {
        return;
    }
    standard(s, path, cx, errs);
    if s.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let properties = non_empty_map(s, "properties");
    if let Some(additional) = s.get("additionalProperties").filter(|a| !a.is_null()) {
        if properties.is_some() && *additional != json!(true) {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let mut sub = cx.clone();
        if cx.inside_resource_meta {
            sub.no_defaults = Some("inside additionalProperties applying to object metadata");
        }
        walk(
            additional,
            &format!("{path}.additionalProperties"),
            &sub,
            false,
            errs,
        );
    }
    let embedded = s
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true);
    let mut names: Vec<&String> = properties.into_iter().flat_map(Map::keys).collect();
    names.sort();
    for name in names {
        let mut sub = cx.clone();
        if (root || embedded) && ["metadata", "kind", "apiVersion"].contains(&name.as_str()) {
            sub.inside_resource_meta = true;
            if root {
                sub.no_defaults = Some(match name.as_str() {
                    "metadata" => "in top-level metadata",
                    "kind" => "in top-level kind",
                    _ => "in top-level apiVersion",
                });
            }
        }
        if let Some(p) = properties.and_then(|ps| ps.get(name)) {
            walk(p, &format!("{path}.properties[{name}]"), &sub, false, errs);
        }
    }
    if let Some(n) = s.get("not") {
        walk(n, &format!("{path}.not"), cx, false, errs);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for (i, c) in list(s, key).iter().enumerate() {
            walk(c, &format!("{path}.{key}[{i}]"), cx, false, errs);
        }
    }
    match s.get("items") {
        Some(i @ Value::Object(_)) => walk(i, &format!("{path}.items"), cx, false, errs),
        Some(Value::Array(is)) => {
            for (i, item) in is.iter().enumerate() {
                walk(item, &format!("{path}.items[{i}]"), cx, false, errs);
            }
        }
        _ => {}
    }
    extensions(s, path, errs);
}

/// The `x-kubernetes-*` extensions of one schema.
fn extensions(s: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(false)) {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            &json!(false),
            "must be true or undefined",
        ));
    }
    let map_type = s.get("x-kubernetes-map-type").and_then(Value::as_str);
    if let Some(mt) = map_type {
        if ty != "object" {
            let detail = "must be object if x-kubernetes-map-type is specified";
            errs.push(type_error(path, ty, detail));
        }
        if mt != "atomic" && mt != "granular" {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-map-type"),
                &json!(mt),
                &["atomic", "granular"],
            ));
        }
    }
    let list_type = s.get("x-kubernetes-list-type").and_then(Value::as_str);
    let items = s.get("items").filter(|i| i.is_object());
    if let Some(lt) = list_type {
        if ty != "array" {
            let detail = "must be array if x-kubernetes-list-type is specified";
            errs.push(type_error(path, ty, detail));
        } else if lt == "set"
            && let Some(is) = items
        {
            let atomic = "must be atomic as item of a list with x-kubernetes-list-type=set";
            let item_type = text(is, "type");
            let inner_list = is.get("x-kubernetes-list-type").and_then(Value::as_str);
            if item_type == "array"
                && let Some(inner) = inner_list
                && inner != "atomic"
            {
                errs.push(FieldError::invalid(
                    format!("{path}.items.x-kubernetes-list-type"),
                    &json!(inner),
                    atomic,
                ));
            }
            if item_type == "object"
                && is.get("x-kubernetes-map-type").and_then(Value::as_str) != Some("atomic")
            {
                // kube-apiserver shows the items' list type here.
                errs.push(FieldError::invalid(
                    format!("{path}.items.x-kubernetes-map-type"),
                    &inner_list.map_or(Value::Null, |l| json!(l)),
                    atomic,
                ));
            }
        }
        if !["atomic", "set", "map"].contains(&lt) {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-list-type"),
                &json!(lt),
                &["atomic", "set", "map"],
            ));
        }
    }
    let keys = list(s, "x-kubernetes-list-map-keys");
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required(
                format!("{path}.x-kubernetes-list-type"),
                detail,
            )),
            Some("map") => {}
            Some(lt) => errs.push(FieldError::invalid(
                format!("{path}.x-kubernetes-list-type"),
                &json!(lt),
                detail,
            )),
        }
    }
    if list_type == Some("map") {
        map_list(s, keys, items, path, errs);
    }
    if let Some(is) = items
        && matches!(list_type, Some("set" | "map"))
    {
        let lt = list_type.unwrap_or_default();
        if is.get("nullable").and_then(Value::as_bool) == Some(true) {
            errs.push(FieldError::forbidden(
                format!("{path}.items.nullable"),
                &format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
            ));
        }
        if lt == "map" {
            let required = list(is, "required");
            for k in keys.iter().filter_map(Value::as_str) {
                let Some(p) = is.get("properties").and_then(|ps| ps.get(k)) else {
                    continue;
                };
                if !required.contains(&json!(k)) && p.get("default").is_none_or(Value::is_null) {
                    errs.push(FieldError::required(
                        format!("{path}.items.properties[{k}].default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if p.get("nullable").and_then(Value::as_bool) == Some(true) {
                    errs.push(FieldError::forbidden(
                        format!("{path}.items.properties[{k}].nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
    for (i, rule) in list(s, "x-kubernetes-validations").iter().enumerate() {
        validation_rule(
            s,
            rule,
            &format!("{path}.x-kubernetes-validations[{i}]"),
            errs,
        );
    }
}

fn type_error(path: &str, ty: &str, detail: &str) -> FieldError {
    if ty.is_empty() {
        FieldError::required(format!("{path}.type"), detail)
    } else {
        FieldError::invalid(format!("{path}.type"), &json!(ty), detail)
    }
}

/// `x-kubernetes-list-type: map`: keys, and object items whose key properties are scalars.
fn map_list(
    s: &Value,
    keys: &[Value],
    items: Option<&Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if keys.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    let Some(is) = items else {
        if s.get("items").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                format!("{path}.items"),
                "must have a schema if x-kubernetes-list-type is map",
            ));
        }
        return;
    };
    let item_type = text(is, "type");
    if item_type != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.items.type"),
            &json!(item_type),
            "must be object if parent array's x-kubernetes-list-type is map",
        ));
        return;
    }
    let all_keys = Value::Array(keys.to_vec());
    let mut seen: Vec<&str> = Vec::new();
    for k in keys.iter().filter_map(Value::as_str) {
        match is.get("properties").and_then(|ps| ps.get(k)) {
            Some(p) => {
                if matches!(text(p, "type"), "array" | "object") {
                    errs.push(FieldError::invalid(
                        format!("{path}.items.properties[{k}].type"),
                        &json!(item_type),
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    ));
                }
            }
            None => errs.push(FieldError::invalid(
                format!("{path}.x-kubernetes-list-map-keys"),
                &all_keys,
                "entries must all be names of item properties",
            )),
        }
        if seen.contains(&k) {
            errs.push(FieldError::invalid(
                format!("{path}.x-kubernetes-list-map-keys"),
                &all_keys,
                "must not contain duplicate entries",
            ));
        }
        seen.push(k);
    }
}

/// The parts of an `x-kubernetes-validations` rule checked without compiling it (CEL
/// expressions are not compiled here).
fn validation_rule(s: &Value, rule: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let raw_rule = text(rule, "rule");
    let message = text(rule, "message");
    let trimmed_rule = raw_rule.trim();
    let trimmed_message = message.trim();
    let has_newline = |s: &str| s.contains('\n') || s.contains('\r');
    if trimmed_rule.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.rule"),
            "rule is not specified",
        ));
    } else if !message.is_empty() && trimmed_message.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            &json!(message),
            "must be non-empty if specified",
        ));
    } else if has_newline(trimmed_message) {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            &json!(message),
            "must not contain line breaks",
        ));
    } else if has_newline(trimmed_rule) && trimmed_message.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    let expression = text(rule, "messageExpression");
    if !expression.is_empty() && expression.trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = rule.get("reason").and_then(Value::as_str) {
        let supported = [
            "FieldValueDuplicate",
            "FieldValueForbidden",
            "FieldValueInvalid",
            "FieldValueRequired",
        ];
        if !supported.contains(&reason) {
            errs.push(FieldError::not_supported(
                format!("{path}.reason"),
                &json!(reason),
                &supported,
            ));
        }
    }
    let field_path = text(rule, "fieldPath");
    if !field_path.is_empty() {
        if field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.fieldPath"),
                &json!(field_path),
                "fieldPath must be non-empty if specified",
            ));
        }
        if field_path.contains('\n') || field_path.contains('\r') {
            errs.push(FieldError::invalid(
                format!("{path}.fieldPath"),
                &json!(field_path),
                "fieldPath must not contain line breaks",
            ));
        }
        if !super::validation_rules::field_path_valid(field_path, s) {
            errs.push(FieldError::invalid(
                format!("{path}.fieldPath"),
                &json!(field_path),
                "fieldPath must be a valid path",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(schema: Value) -> Vec<String> {
        validate(&schema, "s")
            .into_iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect()
    }

    #[test]
    fn properties_and_additional_properties_should_be_mutually_exclusive() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            ]
        );
        // `additionalProperties: true` next to properties is allowed.
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}}, "additionalProperties": true}}});
        assert_eq!(causes(schema), Vec::<String>::new());
    }

    #[test]
    fn unsupported_keywords_should_be_forbidden() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "null",
            "$ref": "#/x", "uniqueItems": true}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[a].type: Unsupported value: \"null\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                "s.properties[a].$ref: Forbidden: $ref is not supported",
                "s.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative",
                "s.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            ]
        );
    }

    #[test]
    fn defaults_should_be_forbidden_in_top_level_metadata() {
        let schema = json!({"type": "object", "properties": {
            "metadata": {"type": "object", "default": {}},
            "spec": {"type": "object", "default": {}}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[metadata].default: Forbidden: must not be set in top-level metadata"
            ]
        );
    }

    #[test]
    fn list_and_map_types_should_fit_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "m": {"type": "string", "x-kubernetes-map-type": "granular"},
            "l": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "missing"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": false}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[l].x-kubernetes-list-map-keys: Invalid value: [\"name\",\"missing\"]: entries must all be names of item properties",
                "s.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                "s.properties[m].type: Invalid value: \"string\": must be object if x-kubernetes-map-type is specified",
                "s.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
            ]
        );
    }
}
