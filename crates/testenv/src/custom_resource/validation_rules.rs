//! The validation rules of a custom resource's schema (`x-kubernetes-validations`), evaluated
//! with CEL on every create and update (main resource and `status`), as apiextensions-apiserver
//! does:
//!
//! - every node of the schema (the root, `properties`, `additionalProperties`, `items`, and the
//!   rules of its `allOf` clauses) whose value is present and not `null` runs its rules with
//!   `self` bound to the value; at the root (and at an `x-kubernetes-embedded-resource`) `self`
//!   holds `apiVersion`, `kind` and `metadata` too;
//! - a rule that names `oldSelf` (a transition rule) runs only on an update, when the node has
//!   an old value: a map's old value is the old map's entry of the same key, a list's item the
//!   old item with the same keys in an `x-kubernetes-list-type: map` list (items of other lists
//!   have none); with `optionalOldSelf: true` it also runs without one, `oldSelf` being an
//!   optional (`optional.none()`, or `optional.of(old)`);
//! - a rule that does not hold fails with its `messageExpression`'s value (a non-empty string
//!   of one line, else ignored), else its `message`, else `failed rule: <rule>`; its `reason`
//!   decides the cause (`FieldValueInvalid` by default, `FieldValueForbidden`,
//!   `FieldValueRequired`, `FieldValueDuplicate`), its `fieldPath` the field named (relative to
//!   the node); an `Invalid` or `Duplicate` cause shows the value of a scalar node and no value
//!   for an object or a list (`spec: Invalid value: region is immutable`,
//!   `spec.size: Invalid value: 1: size may only grow`);
//! - a rule that cannot be evaluated fails with `Invalid value: "<type>": <error> evaluating
//!   rule: <rule or message>` (`no such key: x`, `'no such overload': call arguments did not
//!   match ...`);
//! - ratcheting (CRDValidationRatcheting, on since v1.30): on an update, a rule without
//!   `oldSelf` that fails on a node equal to its old value (or, for a node without an old
//!   value, whose nearest ancestor with one is equal to it) does not refuse the write; the
//!   update is answered with a warning (`<field>: <message>`) instead.
//!
//! The rules are not run when the schema validation found a blocking error (a wrong type,
//! an unsupported enum value, a missing required field, a value too long or lists too many):
//! one cause `<nil>: Invalid value: "null": some validation rules were not checked ...` is
//! added instead.
//!
//! Not emulated: cost limits and estimates (a CRD whose rules kube-apiserver estimates too
//! costly is accepted), `format`-typed strings as CEL timestamps, durations or bytes, and the
//! type checking of rules beyond what [`compile_errors`] checks (result types, overloads).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::validation::field::{FieldError, show};

use crate::cel_library::ENV;

const SELF: &str = "self";
const OLD_SELF: &str = "oldSelf";

/// The cause added instead of the rules' when the schema validation found a blocking error.
const NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// Whether a schema has any validation rule.
pub(crate) fn has_rules(s: &Value) -> bool {
    let Some(m) = s.as_object() else {
        return false;
    };
    if m.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .is_some_and(|l| !l.is_empty())
    {
        return true;
    }
    m.get("items").is_some_and(has_rules)
        || m.get("additionalProperties").is_some_and(has_rules)
        || m.get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.values().any(has_rules))
        || m.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(has_rules))
}

/// Whether schema-validation errors keep the rules from running (`hasBlockingErr`).
fn blocking(errs: &[FieldError]) -> bool {
    errs.iter().any(|e| {
        matches!(
            e.reason,
            "FieldValueNotSupported"
                | "FieldValueRequired"
                | "FieldValueTooLong"
                | "FieldValueTooMany"
                | "FieldValueTypeInvalid"
        )
    })
}

/// The causes of the rules of `schema` (a version's `openAPIV3Schema`) on `new`, the object as
/// it will be stored; `old`: the stored object on an update. `schema_errors`: what the schema
/// validation found (a blocking error stops the rules).
pub(crate) fn validate(
    schema: &Value,
    new: &Value,
    old: Option<&Value>,
    schema_errors: &[FieldError],
) -> Vec<FieldError> {
    if !has_rules(schema) {
        return Vec::new();
    }
    if blocking(schema_errors) {
        return vec![FieldError {
            field: "<nil>".into(),
            reason: "FieldValueInvalid",
            message: format!("Invalid value: \"null\": {NOT_CHECKED}"),
        }];
    }
    run_all(schema, new, old).errs
}

/// What the rules of `schema` say about an update of `old` to `new`: the causes that refuse
/// it, and the warnings of the failures ratcheting lets through (`<field>: <message>`).
#[derive(Default)]
struct Out {
    errs: Vec<FieldError>,
    warnings: Vec<String>,
}

fn run_all(schema: &Value, new: &Value, old: Option<&Value>) -> Out {
    let mut out = Out::default();
    let ratchet = old.is_some_and(|o| o == new);
    walk(schema, new, old, "", ratchet, &mut out);
    out
}

/// The warnings kube-apiserver answers an update of `old` to `new` with for the rules that
/// fail on values ratcheting keeps (unchanged since `old`).
pub(crate) fn ratcheting_warnings(schema: &Value, new: &Value, old: &Value) -> Vec<String> {
    if !has_rules(schema) {
        return Vec::new();
    }
    run_all(schema, new, Some(old)).warnings
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// Go's `field.Path` of a node: `<nil>` for the root.
fn shown_path(path: &str) -> String {
    if path.is_empty() {
        "<nil>".into()
    } else {
        path.to_owned()
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn walk(
    s: &Value,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    parent_ratchet: bool,
    out: &mut Out,
) {
    if v.is_null() {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    let ratchet = match old {
        Some(o) => o == v,
        None => parent_ratchet,
    };
    let mut rules: Vec<&Value> = s
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    for clause in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        rules.extend(
            clause
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    }
    if !rules.is_empty() {
        let node = Node {
            schema: s,
            value: v,
            old,
            path,
        };
        for rule in rules {
            node.run(rule, ratchet, out);
        }
    }
    match v {
        Value::Object(m) => {
            let props = s.get("properties").and_then(Value::as_object);
            let additional = s.get("additionalProperties").filter(|a| a.is_object());
            for (k, cv) in m {
                let old_v = old.and_then(|o| o.get(k));
                if let Some(a) = additional {
                    let p = format!("{path}[{k}]");
                    walk(a, cv, old_v, &p, ratchet, out);
                }
                if let Some(ps) = props.and_then(|p| p.get(k)) {
                    walk(ps, cv, old_v, &child(path, k), ratchet, out);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = s.get("items").filter(|i| i.is_object()) else {
                return;
            };
            let set = text(s, "x-kubernetes-list-type") == "set";
            for (i, item) in items.iter().enumerate() {
                let old_item = old.and_then(|o| correlated_item(s, item, o));
                // An item of a set that was there before is unchanged (ratcheting correlates
                // set items by value), though rules have no old value for it.
                let kept = set
                    && old
                        .and_then(Value::as_array)
                        .is_some_and(|l| l.contains(item));
                let p = format!("{path}[{i}]");
                walk(item_schema, item, old_item, &p, ratchet || kept, out);
            }
        }
        _ => {}
    }
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

/// The old item of a `map` list with the same keys as `item`; none for other lists.
fn correlated_item<'a>(s: &Value, item: &Value, old: &'a Value) -> Option<&'a Value> {
    if text(s, "x-kubernetes-list-type") != "map" {
        return None;
    }
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if keys.is_empty() {
        return None;
    }
    old.as_array()?
        .iter()
        .find(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
}

/// A node of the object with rules to run.
struct Node<'a> {
    schema: &'a Value,
    value: &'a Value,
    old: Option<&'a Value>,
    path: &'a str,
}

/// `ruleErrorString`: the rule's message, else the rule.
fn rule_error_string(rule: &Value) -> String {
    let message = text(rule, "message").trim();
    if message.is_empty() {
        text(rule, "rule").trim().to_owned()
    } else {
        message.to_owned()
    }
}

impl Node<'_> {
    fn ty(&self) -> &str {
        text(self.schema, "type")
    }

    fn run(&self, rule: &Value, ratchet: bool, out: &mut Out) {
        let source = text(rule, "rule");
        if source.trim().is_empty() {
            return;
        }
        let type_value = Value::String(self.ty().to_owned());
        let program = match ENV.compile(source) {
            Ok(p) => p,
            Err(e) => {
                out.errs.push(FieldError::invalid(
                    shown_path(self.path),
                    &type_value,
                    &format!(
                        "rule compile error: compilation failed: {}",
                        cel_go_issues(&e)
                    ),
                ));
                return;
            }
        };
        let uses_old_self = program.references().has_variable(OLD_SELF);
        let optional_old_self = rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
        if uses_old_self && self.old.is_none() && !optional_old_self {
            return;
        }
        let self_value = to_cel(self.value, Some(self.schema));
        let old_value = self.old.map(|o| to_cel(o, Some(self.schema)));
        let mut ctx = cel::Context::with_env(ENV.clone());
        ctx.add_variable_from_value(SELF, self_value.clone());
        if let Some(o) = &old_value {
            ctx.add_variable_from_value(OLD_SELF, o.clone());
        }
        let result = if optional_old_self && uses_old_self {
            let mut inner = ctx.new_inner_scope();
            let optional = match old_value
                .clone()
                .map(Box::<dyn cel::common::value::Val>::try_from)
            {
                Some(Ok(b)) => cel::common::types::CelOptional::of(b),
                _ => cel::common::types::CelOptional::none(),
            };
            inner.add_variable_as_val(OLD_SELF, Box::new(optional));
            program.execute(&inner)
        } else {
            program.execute(&ctx)
        };
        let rule_string = rule_error_string(rule);
        match result {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => {
                let detail = message_expression(rule, &ctx).unwrap_or_else(|| {
                    let message = text(rule, "message").trim();
                    if message.is_empty() {
                        format!("failed rule: {rule_string}")
                    } else {
                        message.to_owned()
                    }
                });
                let mut field = self.path.to_owned();
                let field_path = text(rule, "fieldPath");
                if !field_path.is_empty() {
                    field = child(&field, &normalized_field_path(field_path, self.schema));
                }
                let failure = self.failure(shown_path(&field), rule, &detail);
                if !uses_old_self && ratchet {
                    // Ratcheted: the value did not change, the failure is only a warning.
                    out.warnings
                        .push(format!("{}: {}", failure.field, failure.message));
                } else {
                    out.errs.push(failure);
                }
            }
            Ok(_) => out.errs.push(FieldError::invalid(
                shown_path(self.path),
                &type_value,
                "rule compile error: cel expression must evaluate to a bool",
            )),
            Err(e) => {
                let message = match cel_go_error(&e) {
                    Some(err) if err == "no such overload" => format!(
                        "'{err}': call arguments did not match a supported operator, function or macro signature for rule: {rule_string}"
                    ),
                    Some(err) => format!("{err} evaluating rule: {rule_string}"),
                    None => format!("{e} evaluating rule: {rule_string}"),
                };
                out.errs.push(FieldError::invalid(
                    shown_path(self.path),
                    &type_value,
                    &message,
                ));
            }
        }
    }

    /// The cause of a rule that does not hold (`fieldErrorForReason`).
    fn failure(&self, field: String, rule: &Value, detail: &str) -> FieldError {
        let omit = matches!(self.ty(), "object" | "array")
            || matches!(self.value, Value::Object(_) | Value::Array(_));
        let value = if omit {
            None
        } else {
            Some(go_value(self.value))
        };
        match text(rule, "reason") {
            "FieldValueForbidden" => FieldError::forbidden(field, detail),
            "FieldValueRequired" => FieldError::required(field, detail),
            "FieldValueDuplicate" => FieldError {
                field,
                reason: "FieldValueDuplicate",
                message: match value {
                    Some(v) => format!("Duplicate value: {v}"),
                    None => "Duplicate value".into(),
                },
            },
            _ => FieldError {
                field,
                reason: "FieldValueInvalid",
                message: match value {
                    Some(v) => format!("Invalid value: {v}: {detail}"),
                    None => format!("Invalid value: {detail}"),
                },
            },
        }
    }
}

/// A scalar as Go's `field.Invalid` shows it: strings quoted, integers as they are, other
/// numbers (`float64` in the decoded object) as `%v` writes them (`2`, `1.5`, `1e+06`).
fn go_value(v: &Value) -> String {
    match v {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => go_float(n.as_f64().unwrap_or_default()),
        other => show(other),
    }
}

/// Go's `%v` of a `float64`: the shortest digits, in exponent form below 1e-4 and from 1e+06.
fn go_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or_default();
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A rule's `messageExpression` evaluated, when it gives a usable message.
fn message_expression(rule: &Value, ctx: &cel::Context<'_, '_>) -> Option<String> {
    let expression = text(rule, "messageExpression");
    if expression.trim().is_empty() {
        return None;
    }
    let program = ENV.compile(expression).ok()?;
    match program.execute(ctx).ok()? {
        cel::Value::String(s) => {
            let trimmed = s.trim();
            (!trimmed.is_empty() && !trimmed.contains('\n') && trimmed.len() <= 5000)
                .then(|| trimmed.to_owned())
        }
        _ => None,
    }
}

/// A rule's `fieldPath` (`.spec.a`, `['a.b']`, `.m['key']`) as the field path it names below
/// the node: properties as children, keys of an `additionalProperties` map in brackets.
fn normalized_field_path(field_path: &str, schema: &Value) -> String {
    let mut out = String::new();
    let mut s = schema;
    let mut rest = field_path;
    while !rest.is_empty() {
        let (name, next) = if let Some(r) = rest.strip_prefix("['") {
            match r.find("']") {
                Some(end) => (r[..end].replace("\\'", "'"), &r[end + 2..]),
                None => (r.to_owned(), ""),
            }
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            (r[..end].to_owned(), &r[end..])
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            (rest[..end].to_owned(), &rest[end..])
        };
        rest = next;
        if let Some(p) = s.get("properties").and_then(|p| p.get(&name)) {
            out = child(&out, &name);
            s = p;
        } else if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
            out = format!("{out}[{name}]");
            s = a;
        } else {
            out = child(&out, &name);
        }
    }
    out
}

/// Whether a rule's `fieldPath` names a field of the schema `s` (`ValidFieldPath`): `.name`
/// or `['name']` steps, each a property of an object with `properties` or any key of a map
/// (`additionalProperties`).
pub(crate) fn field_path_valid(field_path: &str, s: &Value) -> bool {
    let mut s = s;
    let mut rest = field_path;
    while !rest.is_empty() {
        let (name, next) = if let Some(r) = rest.strip_prefix("['") {
            match r.find("']") {
                Some(end) => (r[..end].replace("\\'", "'"), &r[end + 2..]),
                None => return false,
            }
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return false;
            }
            (r[..end].to_owned(), &r[end..])
        } else {
            return false;
        };
        rest = next;
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            match props.get(&name) {
                Some(p) => s = p,
                None => return false,
            }
        } else if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
            s = a;
        } else {
            return false;
        }
    }
    true
}

/// A JSON value as CEL sees it under its schema: `number` fields are doubles even when
/// integral, `integer` fields ints.
fn to_cel(v: &Value, s: Option<&Value>) -> cel::Value {
    let ty = s.map(|s| text(s, "type")).unwrap_or_default();
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => {
            if ty == "number" {
                cel::Value::Float(n.as_f64().unwrap_or_default())
            } else if let Some(i) = n.as_i64() {
                cel::Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                cel::Value::UInt(u)
            } else {
                cel::Value::Float(n.as_f64().unwrap_or_default())
            }
        }
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.get("items"));
            cel::Value::List(Arc::new(
                items.iter().map(|i| to_cel(i, item_schema)).collect(),
            ))
        }
        Value::Object(m) => {
            let props = s.and_then(|s| s.get("properties"));
            let additional = s.and_then(|s| s.get("additionalProperties"));
            let map: std::collections::HashMap<cel::objects::Key, cel::Value> = m
                .iter()
                .map(|(k, v)| {
                    let sub = props.and_then(|p| p.get(k)).or(additional);
                    (cel::objects::Key::from(k.as_str()), to_cel(v, sub))
                })
                .collect();
            cel::Value::Map(cel::objects::Map { map: Arc::new(map) })
        }
    }
}

/// A CEL error as cel-go words it, when it has a counterpart.
fn cel_go_error(e: &cel::ExecutionError) -> Option<String> {
    use cel::ExecutionError as E;
    Some(match e {
        E::NoSuchKey(k) => format!("no such key: {k}"),
        E::NoSuchOverload(_)
        | E::UnsupportedBinaryOperator(..)
        | E::ValuesNotComparable(..)
        | E::UnexpectedType { .. }
        | E::UnsupportedTargetType { .. }
        | E::NotSupportedAsMethod { .. } => "no such overload".into(),
        E::DivisionByZero(_) => "division by zero".into(),
        E::RemainderByZero(_) => "modulus by zero".into(),
        E::Overflow(..) => "integer overflow".into(),
        E::UndeclaredReference(name) => format!("no such attribute(s): {name}"),
        _ => return None,
    })
}

/// Parse errors as cel-go's `Issues.String()` writes them.
pub(crate) fn cel_go_issues(e: &cel::ParseErrors) -> String {
    e.to_string().replace("\n| ", "\n | ")
}

/// The errors of compiling a rule's `rule` and `messageExpression` at the CRD's `path`
/// (`...x-kubernetes-validations[i]`), as the CRD validation names them: syntax errors,
/// references to variables other than `self` and `oldSelf`, fields `self` does not have in
/// the schema `s` (`undefined field 'x'`), comparisons of operands whose types are known and
/// differ (`found no matching overload for '_==_' applied to '(int, string)'`), and a rule that
/// cannot be a bool (`cel expression must evaluate to a bool`).
pub(crate) fn compile_errors(rule: &Value, s: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let source = text(rule, "rule");
    if !source.trim().is_empty() {
        let (issue, not_bool) = match ENV.compile(source) {
            Err(e) => (Some(cel_go_issues(&e)), false),
            Ok(p) => (
                check::check(p.expression(), p.source_info(), s, source),
                check::not_bool(p.expression(), s),
            ),
        };
        if let Some(issue) = issue {
            errs.push(FieldError {
                field: format!("{path}.rule"),
                reason: "FieldValueInvalid",
                message: format!(
                    "Invalid value: {}: compilation failed: {issue}",
                    go_rule(rule)
                ),
            });
        } else if not_bool {
            errs.push(FieldError {
                field: format!("{path}.rule"),
                reason: "FieldValueInvalid",
                message: format!(
                    "Invalid value: {}: cel expression must evaluate to a bool",
                    go_rule(rule)
                ),
            });
        }
    }
    let expression = text(rule, "messageExpression");
    if !expression.trim().is_empty() {
        let issue = match ENV.compile(expression) {
            Err(e) => Some(cel_go_issues(&e)),
            Ok(p) => check::check(p.expression(), p.source_info(), s, expression),
        };
        if let Some(issue) = issue {
            errs.push(FieldError {
                field: format!("{path}.messageExpression"),
                reason: "FieldValueInvalid",
                message: format!(
                    "Invalid value: {}: messageExpression compilation failed: {issue}",
                    go_rule(rule)
                ),
            });
        }
    }
    errs
}

/// The compilation errors of every rule of `schema` (an `openAPIV3Schema` at `path`), after
/// the other causes of the CRD's schema, as the CRD validation lists them.
pub(crate) fn schema_compile_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk_schema(schema, path, true, None, &mut errs);
    errs
}

/// `uncorrelatable`: the highest list above the node whose items have no old value (a list that
/// is not `x-kubernetes-list-type: map`), where transition rules are refused.
fn walk_schema(
    s: &Value,
    path: &str,
    resource_root: bool,
    uncorrelatable: Option<&str>,
    errs: &mut Vec<FieldError>,
) {
    if !s.is_object() {
        return;
    }
    let rules = s.get("x-kubernetes-validations").and_then(Value::as_array);
    if let Some(rules) = rules.filter(|r| !r.is_empty()) {
        let typed = if resource_root {
            with_type_and_object_meta(s)
        } else {
            s.clone()
        };
        for (i, rule) in rules.iter().enumerate() {
            let at = format!("{path}.x-kubernetes-validations[{i}]");
            errs.extend(compile_errors(rule, &typed, &at));
            let source = text(rule, "rule");
            let uses_old_self = ENV
                .compile(source)
                .is_ok_and(|p| p.references().has_variable(OLD_SELF));
            if uses_old_self {
                if let Some(list) = uncorrelatable {
                    errs.push(FieldError::invalid(
                        format!("{at}.rule"),
                        &Value::String(source.to_owned()),
                        &format!(
                            "oldSelf cannot be used on the uncorrelatable portion of the schema within {list}"
                        ),
                    ));
                }
            } else if let Some(optional) = rule.get("optionalOldSelf").filter(|o| o.is_boolean()) {
                errs.push(FieldError::invalid(
                    format!("{at}.optionalOldSelf"),
                    optional,
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
    }
    for (k, p) in s
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let embedded = flag(p, "x-kubernetes-embedded-resource");
        walk_schema(
            p,
            &format!("{path}.properties[{k}]"),
            embedded,
            uncorrelatable,
            errs,
        );
    }
    if let Some(i) = s.get("items") {
        let embedded = flag(i, "x-kubernetes-embedded-resource");
        let below = match uncorrelatable {
            Some(p) => Some(p),
            None if text(s, "x-kubernetes-list-type") != "map" => Some(path),
            None => None,
        };
        walk_schema(i, &format!("{path}.items"), embedded, below, errs);
    }
    if let Some(a) = s.get("additionalProperties") {
        let embedded = flag(a, "x-kubernetes-embedded-resource");
        walk_schema(
            a,
            &format!("{path}.additionalProperties"),
            embedded,
            uncorrelatable,
            errs,
        );
    }
}

/// The schema of a resource's root as its rules see it: `apiVersion`, `kind` and
/// `metadata.name` / `metadata.generateName` besides its own fields.
fn with_type_and_object_meta(s: &Value) -> Value {
    let mut s = s.clone();
    if let Some(m) = s.as_object_mut() {
        let props = m
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(props) = props.as_object_mut() {
            props.insert("apiVersion".into(), serde_json::json!({"type": "string"}));
            props.insert("kind".into(), serde_json::json!({"type": "string"}));
            props.insert(
                "metadata".into(),
                serde_json::json!({"type": "object", "properties": {
                    "name": {"type": "string"}, "generateName": {"type": "string"}}}),
            );
        }
    }
    s
}

/// A rule as Go's `%#v` writes the internal `apiextensions.ValidationRule` (pointers show an
/// address, which kcr-testenv cannot reproduce).
fn go_rule(rule: &Value) -> String {
    let q = |k: &str| Value::String(text(rule, k).to_owned()).to_string();
    let ptr = |k: &str, ty: &str| {
        if rule.get(k).is_some_and(|v| !v.is_null()) {
            format!("({ty})(0xc000000000)")
        } else {
            format!("({ty})(nil)")
        }
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        q("rule"),
        q("message"),
        q("messageExpression"),
        ptr("reason", "*apiextensions.FieldValueErrorReason"),
        q("fieldPath"),
        ptr("optionalOldSelf", "*bool"),
    )
}

mod check {
    //! A small part of cel-go's type checker: the variables an expression may name and the
    //! fields of `self` its schema declares.

    use cel::common::ast::{EntryExpr, Expr, IdedExpr, SourceInfo};
    use serde_json::Value;

    /// Identifiers that are not variables: type names and function namespaces.
    const BUILTIN: &[&str] = &[
        "self",
        "oldSelf",
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "bytes",
        "list",
        "map",
        "null_type",
        "type",
        "dyn",
        "optional",
        "math",
        "strings",
        "lists",
        "sets",
    ];

    /// The first issue of `expr` (`source`'s AST) where `self` has the schema `s`.
    pub(super) fn check(
        expr: &IdedExpr,
        info: &SourceInfo,
        s: &Value,
        source: &str,
    ) -> Option<String> {
        let mut scope: Vec<String> = Vec::new();
        let c = Checker { info, s, source };
        c.walk(expr, &mut scope)
    }

    struct Checker<'a> {
        info: &'a SourceInfo,
        s: &'a Value,
        source: &'a str,
    }

    /// What a selection is made on: a schema of `self`/`oldSelf`, or something unchecked.
    enum Ty<'a> {
        Schema(&'a Value),
        Unknown,
    }

    fn issue(source: &str, offset: Option<usize>, message: &str) -> String {
        let Some(offset) = offset else {
            return format!("ERROR: <input>:1:1: {message}");
        };
        // The parser's offsets count bytes; cel-go's columns count characters.
        let mut byte = offset.min(source.len());
        while !source.is_char_boundary(byte) {
            byte -= 1;
        }
        let before = &source[..byte];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count();
        let text = source[line_start..].lines().next().unwrap_or_default();
        format!(
            "ERROR: <input>:{line}:{}: {message}\n | {text}\n | {}^",
            col + 1,
            ".".repeat(col)
        )
    }

    fn object_fields(s: &Value) -> Option<&serde_json::Map<String, Value>> {
        if s.get("type").and_then(Value::as_str) != Some("object")
            || s.get("x-kubernetes-preserve-unknown-fields")
                .and_then(Value::as_bool)
                == Some(true)
        {
            return None;
        }
        s.get("properties").and_then(Value::as_object)
    }

    /// Whether `expr` certainly does not evaluate to a bool: a literal, a field of `self`, an
    /// arithmetic operator or `size()` at its top.
    pub(super) fn not_bool(expr: &IdedExpr, s: &Value) -> bool {
        use cel::common::ast::LiteralValue;
        match &expr.expr {
            Expr::Literal(LiteralValue::Boolean(_)) => false,
            Expr::Literal(_) | Expr::List(_) | Expr::Map(_) => true,
            Expr::Call(call) => matches!(
                call.func_name.as_str(),
                "_+_" | "_-_" | "_*_" | "_/_" | "_%_" | "-_" | "size"
            ),
            Expr::Ident(_) | Expr::Select(_) => match type_of(expr, s, &[]) {
                Ty::Schema(field) => {
                    let int_or_string = field
                        .get("x-kubernetes-int-or-string")
                        .and_then(Value::as_bool)
                        == Some(true);
                    let ty = field
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    !int_or_string && !ty.is_empty() && ty != "boolean"
                }
                Ty::Unknown => false,
            },
            _ => false,
        }
    }

    fn type_of<'a>(e: &IdedExpr, s: &'a Value, scope: &[String]) -> Ty<'a> {
        match &e.expr {
            Expr::Ident(name) if (name == "self" || name == "oldSelf") && !scope.contains(name) => {
                Ty::Schema(s)
            }
            Expr::Select(sel) if !sel.test => match type_of(&sel.operand, s, scope) {
                Ty::Schema(parent) => match object_fields(parent) {
                    Some(props) => props.get(&sel.field).map_or(Ty::Unknown, Ty::Schema),
                    None => Ty::Unknown,
                },
                Ty::Unknown => Ty::Unknown,
            },
            _ => Ty::Unknown,
        }
    }

    /// The CEL type of an operand when it is certain: a literal, or a scalar field of `self`.
    fn static_type(e: &IdedExpr, s: &Value, scope: &[String]) -> Option<&'static str> {
        use cel::common::ast::LiteralValue;
        match &e.expr {
            Expr::Literal(l) => Some(match l {
                LiteralValue::Int(_) => "int",
                LiteralValue::UInt(_) => "uint",
                LiteralValue::Double(_) => "double",
                LiteralValue::String(_) => "string",
                LiteralValue::Boolean(_) => "bool",
                LiteralValue::Bytes(_) => "bytes",
                LiteralValue::Null => return None,
            }),
            Expr::Ident(_) | Expr::Select(_) => match type_of(e, s, scope) {
                Ty::Schema(field) => {
                    let flag = |k: &str| field.get(k).and_then(Value::as_bool) == Some(true);
                    if flag("x-kubernetes-int-or-string") || flag("nullable") {
                        return None;
                    }
                    let format = field.get("format").and_then(Value::as_str).unwrap_or("");
                    match field.get("type").and_then(Value::as_str)? {
                        "integer" => Some("int"),
                        "number" => Some("double"),
                        "boolean" => Some("bool"),
                        "string" if !matches!(format, "date-time" | "duration" | "byte") => {
                            Some("string")
                        }
                        _ => None,
                    }
                }
                Ty::Unknown => None,
            },
            _ => None,
        }
    }

    impl Checker<'_> {
        /// An operator applied to operands of types it has no overload for.
        fn overload(
            &self,
            id: u64,
            function: &str,
            args: &[IdedExpr],
            scope: &[String],
        ) -> Option<String> {
            let relational = matches!(function, "_<_" | "_<=_" | "_>_" | "_>=_");
            let equality = matches!(function, "_==_" | "_!=_");
            if !(relational || equality) || args.len() != 2 {
                return None;
            }
            let a = static_type(&args[0], self.s, scope)?;
            let b = static_type(&args[1], self.s, scope)?;
            let numeric = |t: &str| matches!(t, "int" | "uint" | "double");
            // Equality of two numbers of different types is left alone.
            if a == b || (numeric(a) && numeric(b)) {
                return None;
            }
            Some(self.at(
                id,
                &format!("found no matching overload for '{function}' applied to '({a}, {b})'"),
            ))
        }

        fn at(&self, id: u64, message: &str) -> String {
            let offset = self.info.offset_for(id).map(|(start, _)| start as usize);
            issue(self.source, offset, message)
        }

        fn walk(&self, e: &IdedExpr, scope: &mut Vec<String>) -> Option<String> {
            match &e.expr {
                Expr::Ident(name) => {
                    let known = BUILTIN.contains(&name.as_str()) || scope.contains(name);
                    (!known).then(|| {
                        self.at(
                            e.id,
                            &format!("undeclared reference to '{name}' (in container '')"),
                        )
                    })
                }
                Expr::Select(sel) => {
                    if let Some(i) = self.walk(&sel.operand, scope) {
                        return Some(i);
                    }
                    if let Ty::Schema(parent) = type_of(&sel.operand, self.s, scope)
                        && let Some(props) = object_fields(parent)
                        && !props.contains_key(&sel.field)
                    {
                        return Some(self.at(e.id, &format!("undefined field '{}'", sel.field)));
                    }
                    None
                }
                Expr::Call(call) => {
                    if let Some(t) = &call.target
                        && let Some(i) = self.walk(t, scope)
                    {
                        return Some(i);
                    }
                    if let Some(i) = call.args.iter().find_map(|a| self.walk(a, scope)) {
                        return Some(i);
                    }
                    self.overload(e.id, &call.func_name, &call.args, scope)
                }
                Expr::List(list) => list.elements.iter().find_map(|a| self.walk(a, scope)),
                Expr::Map(map) => map.entries.iter().find_map(|entry| match &entry.expr {
                    EntryExpr::MapEntry(m) => self
                        .walk(&m.key, scope)
                        .or_else(|| self.walk(&m.value, scope)),
                    EntryExpr::StructField(f) => self.walk(&f.value, scope),
                }),
                Expr::Comprehension(c) => {
                    if let Some(i) = self.walk(&c.iter_range, scope) {
                        return Some(i);
                    }
                    if let Some(i) = self.walk(&c.accu_init, scope) {
                        return Some(i);
                    }
                    let before = scope.len();
                    scope.push(c.iter_var.clone());
                    scope.push(c.accu_var.clone());
                    scope.extend(c.iter_var2.clone());
                    let found = self
                        .walk(&c.loop_cond, scope)
                        .or_else(|| self.walk(&c.loop_step, scope))
                        .or_else(|| self.walk(&c.result, scope));
                    scope.truncate(before);
                    found
                }
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "self.region == oldSelf.region", "message": "region is immutable"}],
        "properties": {
            "region": {"type": "string"},
            "size": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "size may only grow"}]},
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]},
            "items": {"type": "array", "items": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "self.all(i, size(i) < 3)", "messageExpression": "'too long: ' + self.filter(i, size(i) >= 3)[0]"}]},
            "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.0", "reason": "FieldValueForbidden"}]},
            "nested": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.a < self.b", "fieldPath": ".a", "message": "a must be below b"}]}
        }}}})
    }

    fn causes(new: Value, old: Option<Value>) -> Vec<String> {
        validate(&schema(), &new, old.as_ref(), &[])
            .into_iter()
            .map(|e| format!("{} {}: {}", e.reason, e.field, e.message))
            .collect()
    }

    #[test]
    fn transition_rules_should_run_only_with_an_old_value() {
        let old = json!({"spec": {"region": "eu", "size": 2}});
        assert!(causes(json!({"spec": {"region": "us", "size": 1}}), None).is_empty());
        assert_eq!(
            causes(
                json!({"spec": {"region": "us", "size": 1}}),
                Some(old.clone())
            ),
            vec![
                "FieldValueInvalid spec: Invalid value: region is immutable",
                "FieldValueInvalid spec.size: Invalid value: 1: size may only grow",
            ]
        );
        assert!(causes(json!({"spec": {"region": "eu", "size": 3}}), Some(old)).is_empty());
    }

    #[test]
    fn failures_should_name_the_default_message_the_reason_and_the_field_path() {
        let got = causes(
            json!({"spec": {"name": "bob", "ratio": 2, "items": ["ab", "abcd"],
                "nested": {"a": 5, "b": 1}}}),
            None,
        );
        assert_eq!(
            got,
            vec![
                "FieldValueInvalid spec.items: Invalid value: too long: abcd",
                "FieldValueInvalid spec.name: Invalid value: \"bob\": failed rule: self.startsWith('a')",
                "FieldValueInvalid spec.nested.a: Invalid value: a must be below b",
                "FieldValueForbidden spec.ratio: Forbidden: failed rule: self < 1.0",
            ]
        );
    }

    #[test]
    fn unchanged_values_should_be_ratcheted() {
        let old = json!({"spec": {"name": "bob", "region": "eu"}});
        assert!(causes(old.clone(), Some(old.clone())).is_empty());
        assert_eq!(
            ratcheting_warnings(&schema(), &old, &old),
            vec!["spec.name: Invalid value: \"bob\": failed rule: self.startsWith('a')"]
        );
        assert_eq!(
            causes(json!({"spec": {"name": "carl", "region": "eu"}}), Some(old)),
            vec![
                "FieldValueInvalid spec.name: Invalid value: \"carl\": failed rule: self.startsWith('a')"
            ]
        );
    }

    #[test]
    fn floats_should_show_as_go_prints_them() {
        for (f, want) in [
            (2.0, "2"),
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456789.0, "1.23456789e+08"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ] {
            assert_eq!(go_float(f), want);
        }
        assert_eq!(go_value(&json!(3)), "3");
        assert_eq!(go_value(&json!("a")), "\"a\"");
    }

    #[test]
    fn set_items_kept_from_the_old_list_should_be_ratcheted() {
        let s = json!({"type": "object", "properties": {"l": {"type": "array",
            "x-kubernetes-list-type": "set", "items": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]}}}});
        let old = json!({"l": ["bob"]});
        assert!(validate(&s, &json!({"l": ["alice", "bob"]}), Some(&old), &[]).is_empty());
        let errs = validate(&s, &json!({"l": ["bob", "carl"]}), Some(&old), &[]);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "l[1]");
        // Without a list type the list changed, so its items are not ratcheted.
        let mut atomic = s.clone();
        atomic["properties"]["l"]
            .as_object_mut()
            .unwrap()
            .remove("x-kubernetes-list-type");
        assert_eq!(
            validate(&atomic, &json!({"l": ["bob", "alice"]}), Some(&old), &[]).len(),
            1
        );
    }

    #[test]
    fn evaluation_errors_should_read_as_cel_go_writes_them() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.a > 1"}]}}});
        let errs = validate(&s, &json!({"spec": {}}), None, &[]);
        assert_eq!(
            errs[0].message,
            "Invalid value: \"object\": no such key: a evaluating rule: self.a > 1"
        );
    }

    #[test]
    fn optional_old_self_should_run_on_create() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "oldSelf.hasValue() || self.a == 1", "optionalOldSelf": true, "message": "starts at 1"}]}}});
        let errs = validate(&s, &json!({"spec": {"a": 2}}), None, &[]);
        assert_eq!(errs[0].message, "Invalid value: starts at 1");
        let old = json!({"spec": {"a": 2}});
        assert!(validate(&s, &json!({"spec": {"a": 3}}), Some(&old), &[]).is_empty());
    }

    #[test]
    fn blocking_schema_errors_should_stop_the_rules() {
        let blocking = FieldError::required("spec.a", "");
        let errs = validate(
            &schema(),
            &json!({"spec": {"name": "x"}}),
            None,
            &[blocking],
        );
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "<nil>");
    }

    #[test]
    fn transition_rules_should_be_refused_below_lists_without_keys() {
        let s = json!({"type": "object", "properties": {"l": {"type": "array",
            "items": {"type": "object", "properties": {"a": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"},
                    {"rule": "self.a > 0", "optionalOldSelf": true}]}}}});
        let errs: Vec<String> = schema_compile_errors(&s, "s")
            .into_iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            vec![
                "s.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: \"self.a == oldSelf.a\": oldSelf cannot be used on the uncorrelatable portion of the schema within s.properties[l]",
                "s.properties[l].items.x-kubernetes-validations[1].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
            ]
        );
        let mut keyed = s.clone();
        keyed["properties"]["l"]["x-kubernetes-list-type"] = json!("map");
        keyed["properties"]["l"]["x-kubernetes-list-map-keys"] = json!(["a"]);
        assert_eq!(schema_compile_errors(&keyed, "s").len(), 1);
    }

    #[test]
    fn field_paths_should_name_fields_of_the_schema() {
        let s = json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
        for (p, ok) in [
            (".a.b", true),
            ("['a'].b", true),
            (".m.anything", true),
            (".a.c", false),
            ("a.b", false),
            (".a.b.c", false),
            ("", true),
        ] {
            assert_eq!(field_path_valid(p, &s), ok, "{p}");
        }
    }

    #[test]
    fn rules_that_do_not_compile_should_be_named() {
        let s = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let errs = compile_errors(&json!({"rule": "self.b == 1"}), &s, "p");
        assert_eq!(errs[0].field, "p.rule");
        assert!(
            errs[0]
                .message
                .contains("compilation failed: ERROR: <input>:1:5: undefined field 'b'"),
            "{}",
            errs[0].message
        );
        let errs = compile_errors(&json!({"rule": "self.a =="}), &s, "p");
        assert!(
            errs[0]
                .message
                .contains("compilation failed: ERROR: <input>:1:"),
            "{}",
            errs[0].message
        );
        let errs = compile_errors(&json!({"rule": "self.a == x"}), &s, "p");
        assert!(
            errs[0].message.contains("undeclared reference to 'x'"),
            "{}",
            errs[0].message
        );
        assert!(
            compile_errors(
                &json!({"rule": "self.all(k, k != 'b') && self.a == 1"}),
                &s,
                "p"
            )
            .is_empty()
        );
        for rule in ["self.a", "self.a + 1", "'x'", "size(self)"] {
            let errs = compile_errors(&json!({"rule": rule}), &s, "p");
            assert!(
                errs[0]
                    .message
                    .ends_with(": cel expression must evaluate to a bool"),
                "{rule}"
            );
        }
        assert!(compile_errors(&json!({"rule": "has(self.a)"}), &s, "p").is_empty());
        let errs = compile_errors(&json!({"rule": "self.a == 'x'"}), &s, "p");
        assert!(
            errs[0].message.ends_with(
                "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, string)'\n | self.a == 'x'\n | .......^"
            ),
            "{}",
            errs[0].message
        );
        assert!(compile_errors(&json!({"rule": "self.a < 1.5"}), &s, "p").is_empty());
        // Characters beyond ASCII before the issue: columns count characters, no panic.
        let errs = compile_errors(&json!({"rule": "'é' == 'é' && self.nope"}), &s, "p");
        assert!(
            errs[0]
                .message
                .contains("<input>:1:19: undefined field 'nope'"),
            "{}",
            errs[0].message
        );
    }
}
