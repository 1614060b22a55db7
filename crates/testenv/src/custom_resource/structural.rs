//! Structural schemas, as apiextensions-apiserver's `ValidateStructural` defines them: every
//! field is specified (with a `type`) outside of the value validations (`allOf`, `anyOf`,
//! `oneOf`, `not`), which only restrict values and name no type, default, description or
//! `x-kubernetes-*` extension; `metadata` at the root restricts only `name` and `generateName`;
//! `additionalProperties` is not used at the root; embedded resources are objects.
//!
//! The two `x-kubernetes-int-or-string` patterns (`anyOf: [{type: integer}, {type: string}]`,
//! directly or as the first `allOf` clause) are exempt from the nested-type rule.
//!
//! The causes are sorted by their text, as kube-apiserver sorts them. A schema that cannot be
//! read as a structural schema at all (see [`conversion_error`]) is not checked here; its
//! fields are refused by the OpenAPI rules instead.

use serde_json::{Map, Value, json};

use crate::validation::field::FieldError;

/// Where a schema sits in the structure: its `type` rules differ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The keys that restrict values without shaping the structure.
const VALUE_VALIDATION: [&str; 20] = [
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
];

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

fn text<'a>(s: &'a Value, key: &str) -> &'a str {
    s.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn properties(s: &Value) -> Option<&Map<String, Value>> {
    s.get("properties").and_then(Value::as_object)
}

fn clauses<'a>(s: &'a Value, key: &str) -> &'a [Value] {
    s.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The schema of `items`, when it is one schema (not a list of them).
fn items(s: &Value) -> Option<&Value> {
    s.get("items").filter(|i| i.is_object())
}

/// Whether a key is set to something other than its zero value (Go's zero: `""`, `false`,
/// `null`, an empty list or map).
fn set(s: &Value, key: &str) -> bool {
    match s.get(key) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(t)) => !t.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty() || key == "externalDocs",
        Some(_) => true,
    }
}

/// Why kube-apiserver cannot read `schema` as a structural schema (then it skips these checks):
/// fields it does not support anywhere in the schema, `x-kubernetes-preserve-unknown-fields:
/// false`, or `items` given as a list.
pub(crate) fn conversion_error(schema: &Value) -> Option<String> {
    let unsupported = [
        ("id", "id"),
        ("$schema", "schema"),
        ("$ref", "$ref"),
        ("patternProperties", "patternProperties"),
        ("dependencies", "dependencies"),
        ("additionalItems", "additionalItems"),
        ("definitions", "definitions"),
    ];
    for (key, name) in unsupported {
        let present = match key {
            "additionalItems" => schema.get(key).is_some_and(|v| !v.is_null()),
            _ => set(schema, key),
        };
        if present {
            return Some(format!("OpenAPIV3Schema '{name}' is not supported"));
        }
    }
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(false)) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    if schema.get("items").is_some_and(Value::is_array) {
        return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into());
    }
    let mut nested: Vec<&Value> = Vec::new();
    nested.extend(items(schema));
    nested.extend(properties(schema).into_iter().flat_map(Map::values));
    nested.extend(schema.get("additionalProperties").filter(|a| a.is_object()));
    nested.extend(schema.get("not").filter(|n| n.is_object()));
    for k in ["allOf", "anyOf", "oneOf"] {
        nested.extend(clauses(schema, k));
    }
    nested.into_iter().find_map(conversion_error)
}

/// The causes that make `schema` (an `openAPIV3Schema` at `path`) non-structural, sorted.
pub(crate) fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    invariants(schema, Level::Root, path, &mut errs);
    completeness(schema, path, &mut errs);
    errs.sort_by(|a, b| {
        format!("{}: {}", a.field, a.message).cmp(&format!("{}: {}", b.field, b.message))
    });
    errs
}

fn int_or_string_any_of(any_of: &[Value]) -> bool {
    any_of == [json!({"type": "integer"}), json!({"type": "string"})]
}

fn invariants(s: &Value, level: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    if ty == "array" && items(s).is_none() {
        errs.push(FieldError::required(
            format!("{path}.items"),
            "must be specified",
        ));
    }
    if let Some(i) = items(s) {
        invariants(i, Level::Item, &format!("{path}.items"), errs);
    }
    for (k, p) in properties(s).into_iter().flatten() {
        invariants(p, Level::Field, &format!("{path}.properties[{k}]"), errs);
    }
    let additional = s.get("additionalProperties").filter(|a| !a.is_null());
    if let Some(a) = additional {
        if level == Level::Root {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "must not be used at the root",
            ));
        }
        if a.is_object() {
            invariants(
                a,
                Level::Field,
                &format!("{path}.additionalProperties"),
                errs,
            );
        }
    }
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-embedded-resource"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = int_or_string_any_of(clauses(s, "anyOf"));
    let skip_first_all_of_any_of = clauses(s, "allOf")
        .first()
        .is_some_and(|c| int_or_string_any_of(clauses(c, "anyOf")));
    value_validation(s, skip_any_of, skip_first_all_of_any_of, path, errs);

    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if ty.is_empty() {
            FieldError::required(format!("{path}.type"), detail)
        } else {
            FieldError::invalid(format!("{path}.type"), &json!(ty), detail)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(format!("{path}.type"), detail));
    }
    if embedded && additional.is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            &json!(ty),
            "must be object at the root",
        ));
    }
    let check_metadata = level == Level::Root || embedded;
    for k in ["kind", "apiVersion"] {
        if let Some(p) = properties(s).and_then(|ps| ps.get(k))
            && check_metadata
            && text(p, "type") != "string"
        {
            errs.push(FieldError::invalid(
                format!("{path}.properties[{k}].type"),
                &json!(text(p, "type")),
                "must be string",
            ));
        }
    }
    if let Some(m) = properties(s).and_then(|ps| ps.get("metadata")) {
        metadata(
            m,
            check_metadata,
            level,
            &format!("{path}.properties[metadata]"),
            errs,
        );
    }
    if embedded && !preserve && properties(s).is_none_or(Map::is_empty) {
        errs.push(FieldError::required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `metadata` is an object; at the root it may restrict `name` and `generateName` only.
fn metadata(s: &Value, check: bool, level: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    if check && ty != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            &json!(ty),
            "must be object",
        ));
    }
    if level != Level::Root {
        return;
    }
    let Some(m) = s.as_object() else { return };
    let mut rest = m.clone();
    rest.remove("type");
    rest.remove("default");
    if let Some(Value::Object(props)) = rest.get("properties") {
        let named =
            props.contains_key("name") as usize + props.contains_key("generateName") as usize;
        if named > 0 && named == props.len() {
            rest.remove("properties");
        }
    }
    let rest = Value::Object(rest);
    let anything = rest
        .as_object()
        .into_iter()
        .flat_map(Map::keys)
        .any(|k| set(&rest, k) || VALUE_VALIDATION.contains(&k.as_str()) && !rest[k].is_null());
    if anything {
        errs.push(FieldError::forbidden(
            path,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

/// The value validations of a schema: their clauses are nested value validations; a `pattern`
/// is a valid regular expression.
fn value_validation(
    s: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (i, c) in clauses(s, "anyOf").iter().enumerate() {
            nested(c, false, &format!("{path}.anyOf[{i}]"), errs);
        }
    }
    for (i, c) in clauses(s, "allOf").iter().enumerate() {
        nested(
            c,
            skip_first_all_of_any_of && i == 0,
            &format!("{path}.allOf[{i}]"),
            errs,
        );
    }
    for (i, c) in clauses(s, "oneOf").iter().enumerate() {
        nested(c, false, &format!("{path}.oneOf[{i}]"), errs);
    }
    if let Some(n) = s.get("not").filter(|n| n.is_object()) {
        nested(n, false, &format!("{path}.not"), errs);
    }
    let pattern = text(s, "pattern");
    if !pattern.is_empty()
        && let Err(e) = regex::Regex::new(pattern)
    {
        errs.push(FieldError::invalid(
            format!("{path}.pattern"),
            &json!(pattern),
            &format!(
                "must be a valid regular expression, but isn't: {}",
                regex_error(&e)
            ),
        ));
    }
}

/// A regular expression error, on one line.
fn regex_error(e: &regex::Error) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A schema under `allOf`, `anyOf`, `oneOf` or `not`: it restricts values only.
fn nested(v: &Value, skip_any_of: bool, path: &str, errs: &mut Vec<FieldError>) {
    value_validation(v, skip_any_of, false, path, errs);
    if let Some(i) = items(v) {
        nested(i, false, &format!("{path}.items"), errs);
    }
    for (k, p) in properties(v).into_iter().flatten() {
        nested(p, false, &format!("{path}.properties[{k}]"), errs);
    }
    let forbidden =
        |key: &str, detail: &str| FieldError::forbidden(format!("{path}.{key}"), detail);
    if set(v, "type") {
        errs.push(forbidden("type", "must be empty to be structural"));
    }
    match v.get("additionalProperties") {
        Some(Value::Object(_)) | Some(Value::Bool(true)) => errs.push(forbidden(
            "additionalProperties",
            "must be undefined to be structural",
        )),
        _ => {}
    }
    if v.get("default").is_some_and(|d| !d.is_null()) {
        errs.push(forbidden("default", "must be undefined to be structural"));
    }
    for (key, detail) in [
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        ("externalDocs", "must be undefined to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
        (
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        ),
        ("x-kubernetes-validations", "must be empty to be structural"),
    ] {
        if set(v, key) {
            errs.push(forbidden(key, detail));
        }
    }
    if properties(v).is_some_and(|p| p.contains_key("metadata")) {
        errs.push(FieldError::forbidden(
            format!("{path}.properties[metadata]"),
            "must not be specified in a nested context",
        ));
    }
}

/// Every field a value validation of the root names is specified in the structure.
fn completeness(s: &Value, path: &str, errs: &mut Vec<FieldError>) {
    clauses_complete(s, Some(s), path, path, errs);
}

fn clauses_complete(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(n) = v.get("not").filter(|n| n.is_object()) {
        nested_complete(n, s, s_path, &format!("{v_path}.not"), errs);
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        for (i, c) in clauses(v, k).iter().enumerate() {
            nested_complete(c, s, s_path, &format!("{v_path}.{k}[{i}]"), errs);
        }
    }
}

fn nested_complete(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required(
            s_path,
            &format!("because it is defined in {v_path}"),
        ));
        return;
    };
    clauses_complete(v, Some(s), s_path, v_path, errs);
    if let Some(i) = items(v) {
        nested_complete(
            i,
            items(s),
            &format!("{s_path}.items"),
            &format!("{v_path}.items"),
            errs,
        );
    }
    for (k, p) in properties(v).into_iter().flatten() {
        let s_field = format!("{s_path}.properties[{k}]");
        let v_field = format!("{v_path}.properties[{k}]");
        match properties(s).and_then(|ps| ps.get(k)) {
            Some(sp) => nested_complete(p, Some(sp), &s_field, &v_field, errs),
            None => errs.push(FieldError::required(
                s_field,
                &format!("because it is defined in {v_field}"),
            )),
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
    fn a_structural_schema_should_have_no_causes() {
        let schema = json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
            "spec": {"type": "object", "properties": {
                "port": {"x-kubernetes-int-or-string": true,
                    "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "any": {"x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "list": {"type": "array", "items": {"type": "string"}}
            }, "anyOf": [{"required": ["port"]}, {"properties": {"port": {"minimum": 1}}}]}
        }});
        assert_eq!(causes(schema), Vec::<String>::new());
    }

    #[test]
    fn missing_types_should_be_named_by_level() {
        let schema = json!({"properties": {"spec": {"properties": {"a": {}}},
            "list": {"type": "array", "items": {}}, "bare": {"type": "array"}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[bare].items: Required value: must be specified",
                "s.properties[list].items.type: Required value: must not be empty for specified array items",
                "s.properties[spec].properties[a].type: Required value: must not be empty for specified object fields",
                "s.properties[spec].type: Required value: must not be empty for specified object fields",
                "s.type: Required value: must not be empty at the root",
            ]
        );
    }

    #[test]
    fn value_validations_should_name_no_type_and_no_new_fields() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
            "anyOf": [{"type": "object", "description": "d",
                "properties": {"b": {"x-kubernetes-list-type": "set"}}}]});
        assert_eq!(
            causes(schema),
            vec![
                "s.anyOf[0].description: Forbidden: must be empty to be structural",
                "s.anyOf[0].properties[b].x-kubernetes-list-type: Forbidden: must be undefined to be structural",
                "s.anyOf[0].type: Forbidden: must be empty to be structural",
                "s.properties[b]: Required value: because it is defined in s.anyOf[0].properties[b]",
            ]
        );
    }

    #[test]
    fn metadata_at_the_root_should_restrict_only_name_and_generate_name() {
        let ok = json!({"type": "object", "properties": {"metadata": {"type": "object",
            "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}}});
        assert_eq!(causes(ok), Vec::<String>::new());
        let labels = json!({"type": "object", "properties": {"metadata": {"type": "object",
            "properties": {"labels": {"type": "object"}}}}});
        assert_eq!(
            causes(labels),
            vec![
                "s.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            ]
        );
        let string = json!({"type": "object", "properties": {"metadata": {"type": "string"},
            "kind": {"type": "integer"}}});
        assert_eq!(
            causes(string),
            vec![
                "s.properties[kind].type: Invalid value: \"integer\": must be string",
                "s.properties[metadata].type: Invalid value: \"string\": must be object",
            ]
        );
    }

    #[test]
    fn int_or_string_should_be_exclusive_with_other_extensions() {
        let schema = json!({"type": "object", "properties": {"p": {
            "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            ]
        );
        // Any other anyOf naming types is not structural.
        let schema = json!({"type": "object", "properties": {"p": {
            "x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "boolean"}]}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.properties[p].anyOf[0].type: Forbidden: must be empty to be structural",
                "s.properties[p].anyOf[1].type: Forbidden: must be empty to be structural",
            ]
        );
    }

    #[test]
    fn additional_properties_and_embedded_resources_should_follow_their_rules() {
        let schema = json!({"type": "object", "additionalProperties": {"type": "string"},
            "properties": {"e": {"x-kubernetes-embedded-resource": true}}});
        assert_eq!(
            causes(schema),
            vec![
                "s.additionalProperties: Forbidden: must not be used at the root",
                "s.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                "s.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true",
            ]
        );
    }

    #[test]
    fn unsupported_fields_should_keep_a_schema_from_being_read() {
        assert_eq!(conversion_error(&json!({"type": "object"})), None);
        assert_eq!(
            conversion_error(&json!({"properties": {"a": {"$ref": "#/x"}}})).as_deref(),
            Some("OpenAPIV3Schema '$ref' is not supported")
        );
        assert!(
            conversion_error(&json!({"x-kubernetes-preserve-unknown-fields": false})).is_some()
        );
    }
}
