//! The `MutatingAdmissionPolicy` admission plugin: MutatingAdmissionPolicies
//! (`admissionregistration.k8s.io/v1`) applied through their MutatingAdmissionPolicyBindings,
//! as kube-apiserver's `plugin/policy/mutating` does, with the matching of
//! [`validating_admission_policy`](super::validating_admission_policy) (`matchConstraints`,
//! the binding's `matchResources`, namespace and object selectors, `paramKind`/`paramRef`,
//! `matchConditions`, `variables`).
//!
//! Policies are taken in name order, each with its bindings in name order, each binding once
//! per param. A matching invocation runs the policy's `mutations` in order on the object as
//! the previous ones left it:
//!
//! - `ApplyConfiguration`: the expression builds `Object{...}` (nested `Object.spec{...}`,
//!   `Object.metadata{...}`...: each type name must be its field path from `Object`, else
//!   `type mismatch: unexpected type name ...`); the result is merged into the object as
//!   structured-merge-diff merges an apply configuration (list maps by their keys, sets by
//!   value), owned by no field manager; a configuration that sets an atomic struct, map or list
//!   fails (`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays,
//!   maps or structs: <paths>`);
//! - `JSONPatch`: the expression builds a list of `JSONPatch{op, path, from, value}`, applied
//!   as evanphx/json-patch v4 applies RFC 6902 (with its error texts, e.g. `JSON Patch: add
//!   operation does not apply: doc is missing path: "/data/injected": missing value`); a
//!   failed `test` leaves the object as it was; the patched object is decoded strictly into
//!   its kind (a field it lacks: `500 Internal error occurred: strict decoding error: ...`,
//!   whatever the failure policy).
//!
//! A new object is seen before the storage gives it its uid and creation time. After each
//! mutation the object gets its kind's defaults again. When a pass applied a mutation, the
//! invocations with `reinvocationPolicy: IfNeeded` that ran and still match run once more.
//! Params are collected as kube-apiserver's `CollectParams` does (no `paramRef`: one `null`
//! param). Failures (a mutation, a match condition, a binding that cannot be configured) of a
//! policy whose `failurePolicy` is `Ignore` are dropped; the others refuse the request with
//! `403`, each failure a cause (`policy '<p>' with binding '<b>' denied request: <error>`), the
//! first one the message and the reason (`Invalid`; `Forbidden` for `failed to configure
//! binding: ...`).
//!
//! CEL: the `cel` crate parses `Object{...}` and `JSONPatch{...}` as struct literals and
//! constructs any struct type registered with its environment; this plugin registers, per
//! policy, a schema-less struct type for every `Object...` and `JSONPatch` type name its
//! expressions use (kube-apiserver's `dynamic.ObjectType`, which allows any field), so the
//! literals evaluate to named structs whose fields become the JSON of the patch. Not ported:
//! type checking of expressions against the kind's schema (an unknown field of a typed kind is
//! found when the configuration is typed, not when the policy is created), cost limits, the
//! CEL libraries [`cel_library`](crate::cel_library) lacks, the `authorizer` variable, JSON
//! patch array keys of the form `{'k':'v'}`, and mutations on deletes and connects.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use super::validating_admission_policy::{cel_value, labels_of, resources_match, selector_matches};
use super::{Attributes, Plugin};
use crate::status::{ApiError, ApiResult};

/// The plugin.
pub(super) struct MutatingAdmissionPolicy;

const GROUP: &str = "admissionregistration.k8s.io";

/// A struct type that allows any field, as kube-apiserver's `dynamic.ObjectType`.
struct ObjectType(cel::common::types::Type);

impl cel::StructType for ObjectType {
    fn get_type(&self) -> &cel::common::types::Type {
        &self.0
    }

    fn new_value<'b, 'v>(
        &self,
        fields: std::collections::BTreeMap<String, cel::common::value::CowVal<'b, 'v>>,
    ) -> Result<Box<dyn cel::common::value::Val + 'v>, cel::ExecutionError> {
        let mut s = cel::common::types::CelStruct::new(self.0.name().to_owned());
        for (k, v) in fields {
            s.add_field_value(k, v);
        }
        Ok(Box::new(s))
    }
}

/// The struct type names an expression constructs (`Object`, `Object.spec`, `JSONPatch`):
/// dotted identifiers followed by `{`, outside string literals.
fn struct_names(expression: &str, out: &mut BTreeSet<String>) {
    let chars: Vec<char> = expression.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            i += if triple { 3 } else { 1 };
            while i < chars.len() {
                if chars[i] == '\\' {
                    i += 2;
                    continue;
                }
                if chars[i] == c
                    && (!triple || (chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c)))
                {
                    i += if triple { 3 } else { 1 };
                    break;
                }
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if chars.get(j) == Some(&'{')
                && (name == "JSONPatch" || name == "Object" || name.starts_with("Object."))
            {
                out.insert(name);
            }
            continue;
        }
        i += 1;
    }
}

/// The environments ([`cel_library`](crate::cel_library)'s libraries), by the struct types they
/// add.
static ENVS: LazyLock<Mutex<HashMap<BTreeSet<String>, Arc<cel::Env>>>> =
    LazyLock::new(Default::default);

fn env_for(names: BTreeSet<String>) -> Arc<cel::Env> {
    let mut envs = ENVS.lock();
    envs.entry(names)
        .or_insert_with_key(|names| {
            let mut env = cel::Env::stdlib();
            for ext in [
                cel::extensions::strings as fn(&mut cel::Env) -> _,
                cel::extensions::lists,
                cel::extensions::math,
                crate::cel_library::kubernetes,
            ] {
                let _ = env.add_extension(ext);
            }
            for n in names {
                let _ = env.add_type(ObjectType(cel::common::types::Type::new_struct(n.clone())));
            }
            Arc::new(env)
        })
        .clone()
}

/// An expression's value, or its error as kube-apiserver words it.
fn evaluate(
    env: &cel::Env,
    expression: &str,
    ctx: &cel::Context<'_, '_>,
) -> Result<cel::Value, String> {
    let program = env
        .compile(expression)
        .map_err(|e| format!("compilation failed: {e}"))?;
    program.execute(ctx).map_err(|e| {
        // cel-go's words for a missing key.
        let e = match e {
            cel::ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
            other => other.to_string(),
        };
        format!("expression '{expression}' resulted in error: {e}")
    })
}

/// JSON of a CEL value (as kube-apiserver's `ConvertToNative` to JSON values).
fn to_json(v: &cel::Value) -> Result<Value, String> {
    Ok(match v {
        cel::Value::Null => Value::Null,
        cel::Value::Bool(b) => Value::Bool(*b),
        cel::Value::Int(i) => json!(i),
        cel::Value::UInt(u) => json!(u),
        cel::Value::Float(f) => {
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                json!(*f as i64)
            } else {
                serde_json::Number::from_f64(*f)
                    .map(Value::Number)
                    .ok_or_else(|| format!("unsupported number {f}"))?
            }
        }
        cel::Value::String(s) => Value::String(s.to_string()),
        cel::Value::List(items) => {
            Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?)
        }
        cel::Value::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m.map.iter() {
                let cel::objects::Key::String(k) = k else {
                    return Err(format!("map key {k:?} is not a string"));
                };
                out.insert(k.to_string(), to_json(v)?);
            }
            Value::Object(out)
        }
        cel::Value::Struct(s) => {
            let mut out = Map::new();
            for (k, v) in s.field_values() {
                let v = cel::Value::try_from(v.as_ref()).map_err(|e| e.to_string())?;
                out.insert(k, to_json(&v)?);
            }
            Value::Object(out)
        }
        other => return Err(format!("unsupported value {other:?}")),
    })
}

/// kube-apiserver's check that every nested `Object...` literal is named by its field path.
fn type_check(v: &cel::Value, path: &mut Vec<String>, errors: &mut Vec<String>) {
    match v {
        cel::Value::Struct(s) => {
            let expected = path.join(".");
            if s.name() != expected {
                errors.push(format!(
                    "unexpected type name {:?}, expected {expected:?}, which matches field name path from root Object type",
                    s.name()
                ));
            }
            for (k, f) in s.field_values() {
                if let Ok(f) = cel::Value::try_from(f.as_ref()) {
                    path.push(k);
                    type_check(&f, path, errors);
                    path.pop();
                }
            }
        }
        cel::Value::List(items) => items.iter().for_each(|i| type_check(i, path, errors)),
        cel::Value::Map(m) => m.map.values().for_each(|i| type_check(i, path, errors)),
        _ => {}
    }
}

fn check_type_names(v: &cel::Value) -> Result<(), String> {
    let cel::Value::Struct(s) = v else {
        return Ok(());
    };
    let mut errors = Vec::new();
    type_check(v, &mut vec![s.name().to_owned()], &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("type mismatch: {}", errors.join("\n")))
    }
}

/// Why a JSON patch operation failed; a failed `test` is not an error.
enum PatchError {
    TestFailed,
    Failed(String),
}

fn decode_key(k: &str) -> String {
    k.replace("~1", "/").replace("~0", "~")
}

/// evanphx/json-patch v4's `findObject`: the container the path's last token is in, and that
/// token; `None` when a part of the way is missing.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let key = decode_key(part);
        cur = match cur {
            Value::Object(m) => m.get_mut(&key)?,
            Value::Array(a) => {
                let i: i64 = key.parse().ok()?;
                a.get_mut(usize::try_from(i).ok()?)?
            }
            _ => return None,
        };
        if !matches!(cur, Value::Object(_) | Value::Array(_)) {
            return None;
        }
    }
    Some((cur, decode_key(split[split.len() - 1])))
}

fn atoi(key: &str) -> Result<i64, String> {
    key.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {key:?}: invalid syntax"))
}

fn invalid_index(i: i64) -> String {
    format!("Unable to access invalid index: {i}: invalid index referenced")
}

fn container_add(con: &mut Value, key: &str, val: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_owned(), val);
            Ok(())
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(val);
                return Ok(());
            }
            let mut i = atoi(key)
                .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
            let len = a.len() as i64 + 1;
            if i >= len || i < -len {
                return Err(invalid_index(i));
            }
            if i < 0 {
                i += len;
            }
            a.insert(i as usize, val);
            Ok(())
        }
        _ => Err("invalid state detected".into()),
    }
}

fn container_get(con: &Value, key: &str) -> Result<Option<Value>, String> {
    match con {
        Value::Object(m) => Ok(m.get(key).cloned()),
        Value::Array(a) => {
            let i = atoi(key)?;
            if i >= a.len() as i64 || i < 0 {
                return Err(invalid_index(i));
            }
            Ok(a.get(i as usize).cloned())
        }
        _ => Err("invalid state detected".into()),
    }
}

fn container_remove(con: &mut Value, key: &str) -> Result<(), String> {
    match con {
        Value::Object(m) => m
            .remove(key)
            .map(|_| ())
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: missing value")),
        Value::Array(a) => {
            let mut i = atoi(key)?;
            let len = a.len() as i64;
            if i >= len || i < -len {
                return Err(invalid_index(i));
            }
            if i < 0 {
                i += len;
            }
            a.remove(i as usize);
            Ok(())
        }
        _ => Err("invalid state detected".into()),
    }
}

/// Applies a JSON patch as evanphx/json-patch v4 does, with its error texts.
fn apply_json_patch(doc: &mut Value, ops: &[Value]) -> Result<(), PatchError> {
    let failed = PatchError::Failed;
    for op in ops {
        let text = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default();
        let path = text("path");
        let value = op.get("value").cloned();
        match text("op") {
            "add" => {
                let (con, key) = find_object(doc, path).ok_or_else(|| {
                    failed(format!(
                        "add operation does not apply: doc is missing path: \"{path}\": missing value"
                    ))
                })?;
                container_add(con, &key, value.unwrap_or(Value::Null))
                    .map_err(|e| failed(format!("error in add for path: '{path}': {e}")))?;
            }
            "remove" => {
                let (con, key) = find_object(doc, path).ok_or_else(|| {
                    failed(format!(
                        "remove operation does not apply: doc is missing path: \"{path}\": missing value"
                    ))
                })?;
                container_remove(con, &key)
                    .map_err(|e| failed(format!("error in remove for path: '{path}': {e}")))?;
            }
            "replace" => {
                let (con, key) = find_object(doc, path).ok_or_else(|| {
                    failed(format!(
                        "replace operation does not apply: doc is missing path: {path}: missing value"
                    ))
                })?;
                if container_get(con, &key).is_err() {
                    return Err(failed(format!(
                        "replace operation does not apply: doc is missing key: {path}: missing value"
                    )));
                }
                let val = value.unwrap_or(Value::Null);
                match con {
                    Value::Object(m) => {
                        m.insert(key, val);
                    }
                    Value::Array(a) => {
                        if let Some(slot) = key.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                            *slot = val;
                        }
                    }
                    _ => {}
                }
            }
            "move" | "copy" => {
                let kind = text("op");
                let from = text("from");
                let (con, key) = find_object(doc, from).ok_or_else(|| {
                    failed(format!(
                        "{kind} operation does not apply: doc is missing from path: {from}: missing value"
                    ))
                })?;
                let val = if kind == "move" {
                    let val = container_get(con, &key)
                        .map_err(|e| failed(format!("error in move for path: '{key}': {e}")))?;
                    container_remove(con, &key)
                        .map_err(|e| failed(format!("error in move for path: '{key}': {e}")))?;
                    val
                } else {
                    container_get(con, &key)
                        .map_err(|e| failed(format!("error in copy for from: '{from}': {e}")))?
                };
                let (con, key) = find_object(doc, path).ok_or_else(|| {
                    failed(format!(
                        "{kind} operation does not apply: doc is missing destination path: {path}: missing value"
                    ))
                })?;
                container_add(con, &key, val.unwrap_or(Value::Null)).map_err(|e| {
                    if kind == "move" {
                        failed(format!("error in move for path: '{path}': {e}"))
                    } else {
                        failed(format!("error while adding value during copy: {e}"))
                    }
                })?;
            }
            "test" => {
                let (con, key) = find_object(doc, path).ok_or_else(|| {
                    failed(format!(
                        "test operation does not apply: is missing path: {path}: missing value"
                    ))
                })?;
                let val = container_get(con, &key)
                    .map_err(|e| failed(format!("error in test for path: '{path}': {e}")))?;
                let expected = value.unwrap_or(Value::Null);
                if val.unwrap_or(Value::Null) != expected {
                    return Err(PatchError::TestFailed);
                }
            }
            other => return Err(failed(format!("Unexpected kind: {other}"))),
        }
    }
    Ok(())
}

/// What a request shows the policies.
struct Request<'r> {
    a: &'r Attributes<'r>,
    old: Option<&'r Value>,
    request: Value,
    namespace: Option<Value>,
    /// An error that ends admission at once, whatever the failure policy (kube-apiserver's
    /// status errors from a mutation: a patched object its kind cannot decode).
    fatal: std::cell::RefCell<Option<ApiError>>,
}

/// One policy through one binding with one param.
struct Invocation {
    policy_name: String,
    binding_name: String,
    policy: Arc<Value>,
    param: Value,
}

impl Invocation {
    fn spec(&self, k: &str) -> Option<&Value> {
        self.policy.get("spec").and_then(|s| s.get(k))
    }

    /// What tells the invocation from the others: its policy, binding and param.
    fn key(&self) -> (String, String, Value, Value) {
        let meta = |k: &str| self.param.pointer(&format!("/metadata/{k}")).cloned();
        (
            self.policy_name.clone(),
            self.binding_name.clone(),
            meta("namespace").unwrap_or(Value::Null),
            meta("name").unwrap_or(Value::Null),
        )
    }

    fn ignores_failures(&self) -> bool {
        self.spec("failurePolicy").and_then(Value::as_str) == Some("Ignore")
    }

    fn reinvoked(&self) -> bool {
        self.spec("reinvocationPolicy").and_then(Value::as_str) == Some("IfNeeded")
    }

    fn expressions(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for k in ["variables", "matchConditions"] {
            for v in self.spec(k).and_then(Value::as_array).into_iter().flatten() {
                out.extend(v.get("expression").and_then(Value::as_str));
            }
        }
        for m in self
            .spec("mutations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(
                m.pointer("/applyConfiguration/expression")
                    .and_then(Value::as_str),
            );
            out.extend(m.pointer("/jsonPatch/expression").and_then(Value::as_str));
        }
        out
    }

    /// Runs the invocation on `obj`: `false` when its match conditions exclude the request (or
    /// fail). Every failure is added to `errors` (the mutations after a failed one still run,
    /// as kube-apiserver's dispatcher goes on).
    fn run(&self, r: &Request<'_>, obj: &mut Map<String, Value>, errors: &mut Vec<String>) -> bool {
        let mut names = BTreeSet::new();
        for e in self.expressions() {
            struct_names(e, &mut names);
        }
        let env = env_for(names);
        let context = |obj: &Map<String, Value>| {
            let mut ctx = cel::Context::with_env(env.clone());
            ctx.add_variable_from_value("object", cel_value(&Value::Object(obj.clone())));
            ctx.add_variable_from_value("oldObject", r.old.map_or(cel::Value::Null, cel_value));
            ctx.add_variable_from_value("request", cel_value(&r.request));
            ctx.add_variable_from_value("params", cel_value(&self.param));
            ctx.add_variable_from_value(
                "namespaceObject",
                r.namespace.as_ref().map_or(cel::Value::Null, cel_value),
            );
            let mut variables = HashMap::<String, cel::Value>::new();
            for v in self
                .spec("variables")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = v.get("name").and_then(Value::as_str).unwrap_or_default();
                let expression = v
                    .get("expression")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let mut inner = ctx.new_inner_scope();
                inner.add_variable_from_value("variables", variables.clone());
                let value = evaluate(&env, expression, &inner).unwrap_or(cel::Value::Null);
                variables.insert(name.to_owned(), value);
            }
            ctx.add_variable_from_value("variables", variables);
            ctx
        };
        {
            let ctx = context(obj);
            for c in self
                .spec("matchConditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let expression = c
                    .get("expression")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match evaluate(&env, expression, &ctx) {
                    Ok(cel::Value::Bool(true)) => {}
                    Ok(cel::Value::Bool(false)) => return false,
                    Ok(other) => {
                        errors.push(format!(
                            "expression '{expression}' resulted in error: matchCondition must evaluate to a bool, got {other:?}"
                        ));
                        return false;
                    }
                    Err(e) => {
                        errors.push(e);
                        return false;
                    }
                }
            }
        }
        for m in self
            .spec("mutations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let ctx = context(obj);
            match self.mutate(r, &env, m, &ctx, obj) {
                // The patched object gets its kind's defaults, before the next mutation sees it.
                Ok(()) => crate::registry::rest::strategy_for(r.a.def).defaults(obj),
                Err(e) => errors.push(e),
            }
        }
        true
    }

    /// Applies one mutation to `obj`.
    fn mutate(
        &self,
        r: &Request<'_>,
        env: &cel::Env,
        m: &Value,
        ctx: &cel::Context<'_, '_>,
        obj: &mut Map<String, Value>,
    ) -> Result<(), String> {
        let (api_version, kind) = (obj.get("apiVersion").cloned(), obj.get("kind").cloned());
        match m.get("patchType").and_then(Value::as_str) {
            Some("ApplyConfiguration") => {
                let expression = m
                    .pointer("/applyConfiguration/expression")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let v = evaluate(env, expression, ctx)?;
                if !matches!(&v, cel::Value::Struct(s) if s.name() == "Object") {
                    return Err(
                        "unsupported return type from ApplyConfiguration expression: the expression must build an Object".into(),
                    );
                }
                check_type_names(&v)?;
                let mut config = match to_json(&v)? {
                    Value::Object(c) => c,
                    _ => Map::new(),
                };
                for (k, val) in [("apiVersion", api_version), ("kind", kind)] {
                    if let Some(val) = val {
                        config.insert(k.into(), val);
                    }
                }
                let config = Value::Object(config);
                apply_configuration(r, obj, &config)
            }
            Some("JSONPatch") => {
                let expression = m
                    .pointer("/jsonPatch/expression")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let v = evaluate(env, expression, ctx)?;
                let cel::Value::List(items) = &v else {
                    return Err(
                        "type mismatch: JSONPatchType.expression should evaluate to array".into(),
                    );
                };
                let mut ops = Vec::new();
                for item in items.iter() {
                    let cel::Value::Struct(s) = item else {
                        return Err("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch".into());
                    };
                    let field =
                        |k: &str| s.field_value(k).and_then(|f| cel::Value::try_from(f).ok());
                    let text = |k: &str| match field(k) {
                        Some(cel::Value::String(s)) => s.to_string(),
                        _ => String::new(),
                    };
                    let mut op = json!({"op": text("op"), "path": text("path")});
                    let from = text("from");
                    if !from.is_empty() {
                        op["from"] = Value::String(from);
                    }
                    if let Some(value) = field("value") {
                        if let cel::Value::Struct(_) = value {
                            check_type_names(&value)?;
                        }
                        op["value"] = to_json(&value).map_err(|e| {
                            format!("JSONPath valueExpression evaluated to a type that could not marshal to JSON: {e}")
                        })?;
                    }
                    ops.push(op);
                }
                let mut doc = Value::Object(obj.clone());
                match apply_json_patch(&mut doc, &ops) {
                    Ok(()) => {
                        if let Value::Object(mut d) = doc {
                            // The patched JSON is decoded strictly into the kind's type: a field
                            // it does not have, or a value of the wrong type, is a `500`.
                            let raw = serde_json::to_vec(&d).unwrap_or_default();
                            let strict = crate::validation::unknown_fields::decode(
                                r.a.def,
                                &mut d,
                                crate::validation::unknown_fields::FieldValidation::Strict,
                                &raw,
                            );
                            if let Err(e) = strict {
                                let prefix = format!("cannot be handled as a {}: ", r.a.def.kind);
                                let why = e
                                    .message
                                    .split_once(&prefix)
                                    .map_or(e.message.as_str(), |(_, w)| w)
                                    .to_owned();
                                *r.fatal.borrow_mut() = Some(
                                    ApiError::internal(format!("Internal error occurred: {why}"))
                                        .with_details(json!({"causes": [{"message": why}]})),
                                );
                                return Err(why);
                            }
                            *obj = d;
                        }
                        Ok(())
                    }
                    Err(PatchError::TestFailed) => Ok(()),
                    Err(PatchError::Failed(e)) => Err(format!("JSON Patch: {e}")),
                }
            }
            other => Err(format!("unsupported patchType {other:?}")),
        }
    }
}

/// Merges an apply configuration into `obj` as structured-merge-diff does, after typing it and
/// refusing atomic parts.
fn apply_configuration(
    r: &Request<'_>,
    obj: &mut Map<String, Value>,
    config: &Value,
) -> Result<(), String> {
    if let Value::Object(c) = config
        && let Err(e) = crate::managed_fields::typed_patch::check(r.a.def, c)
    {
        let errors = e
            .message
            .split_once("): ")
            .map_or(e.message.as_str(), |(_, m)| m);
        return Err(format!(
            "error applying patch: failed to convert patch object to typed object: {errors}"
        ));
    }
    let schema = crate::managed_fields::schema_for(r.a.store, r.a.def);
    let atomics = crate::managed_fields::atomic_paths(&schema, config);
    if !atomics.is_empty() {
        return Err(format!(
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            atomics.join(", ")
        ));
    }
    let live = Value::Object(std::mem::take(obj));
    if let Value::Object(merged) =
        crate::managed_fields::merge_configuration(&schema, &live, config)
    {
        *obj = merged;
    }
    Ok(())
}

impl Plugin for MutatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "MutatingAdmissionPolicy"
    }

    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        let changed = admit(a, obj, None)?;
        if changed {
            // The create handler validated the object before admission: the mutated one is
            // validated again, as kube-apiserver validates after mutating admission.
            crate::validation::on_create(a.def, obj)?;
        }
        Ok(())
    }

    fn admit_update(
        &self,
        a: &Attributes<'_>,
        old: &Value,
        obj: &mut Map<String, Value>,
    ) -> ApiResult<()> {
        admit(a, obj, Some(old)).map(|_| ())
    }
}

/// A failure of a policy: its message (`policy '<p>' with binding '<b>' denied request: ...`),
/// its reason (none for a configuration error) and whether the policy ignores it.
struct PolicyError {
    message: String,
    reason: Option<&'static str>,
    ignored: bool,
}

/// The params a binding gives its policy, as kube-apiserver's `CollectParams`: one `null` param
/// without `paramKind` or without `paramRef`; by name or selector in the namespace of the
/// `paramRef`, else the request's; none found is an error only with `Deny`.
fn collect_params(
    a: &Attributes<'_>,
    policy: &Value,
    binding: &Value,
) -> Result<Vec<Value>, String> {
    let Some(kind) = policy.pointer("/spec/paramKind").filter(|k| !k.is_null()) else {
        return Ok(vec![Value::Null]);
    };
    let Some(param_ref) = binding.pointer("/spec/paramRef").filter(|r| !r.is_null()) else {
        return Ok(vec![Value::Null]);
    };
    let text = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (api_version, kind_name) = (text(kind, "apiVersion"), text(kind, "kind"));
    let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
    let Some(def) = a
        .store
        .defs()
        .iter()
        .find(|d| d.group == group && d.version == version && d.kind == kind_name)
        .cloned()
    else {
        return Err(format!(
            "paramKind kind `&ParamKind{{APIVersion:{api_version},Kind:{kind_name},}}` not known"
        ));
    };
    let ref_namespace = text(param_ref, "namespace");
    let namespace = if def.namespaced {
        if !ref_namespace.is_empty() {
            Some(ref_namespace)
        } else if !a.namespace.is_empty() {
            Some(a.namespace.to_owned())
        } else {
            return Err(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                    .into(),
            );
        }
    } else if !ref_namespace.is_empty() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
        );
    } else {
        None
    };
    let name = text(param_ref, "name");
    let selector = param_ref.get("selector").filter(|s| !s.is_null());
    let mut found = Vec::new();
    if !name.is_empty() {
        if selector.is_some() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        let key = crate::store::object_key(namespace.as_deref(), &name);
        found.extend(a.store.get(&def.storage, &key).map(|s| (*s.value).clone()));
    } else if selector.is_some() {
        for key in a.store.keys(&def.storage, namespace.as_deref()) {
            if let Some(s) = a.store.get(&def.storage, &key)
                && selector_matches(selector, &labels_of(&s.value))
            {
                found.push((*s.value).clone());
            }
        }
    } else {
        return Err("one of name or selector must be provided".into());
    }
    if found.is_empty() && text(param_ref, "parameterNotFoundAction") == "Deny" {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found)
}

/// The invocations of every binding that matches the request, in policy then binding name
/// order, one per param; a binding whose params cannot be had adds its error to
/// `config_errors`.
fn invocations(
    a: &Attributes<'_>,
    r: &Request<'_>,
    obj: &Value,
    operation: &str,
    config_errors: &mut Vec<PolicyError>,
) -> Vec<Invocation> {
    let bindings_storage = format!("{GROUP}/mutatingadmissionpolicybindings");
    let mut bindings = Vec::new();
    for key in a.store.keys(&bindings_storage, None) {
        let Some(binding) = a.store.get(&bindings_storage, &key) else {
            continue;
        };
        let binding = binding.value.clone();
        let Some(policy_name) = binding
            .pointer("/spec/policyName")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        let Some(policy) = a
            .store
            .get(&format!("{GROUP}/mutatingadmissionpolicies"), &policy_name)
        else {
            continue;
        };
        let binding_name = binding
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        bindings.push((policy_name, binding_name, policy.value.clone(), binding));
    }
    bindings.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    let mut out = Vec::new();
    for (policy_name, binding_name, policy, binding) in bindings {
        if !resources_match(
            policy.pointer("/spec/matchConstraints"),
            a,
            obj,
            r.namespace.as_ref(),
            true,
            operation,
        ) || !resources_match(
            binding.pointer("/spec/matchResources"),
            a,
            obj,
            r.namespace.as_ref(),
            false,
            operation,
        ) {
            continue;
        }
        match collect_params(a, &policy, &binding) {
            Ok(params) => out.extend(params.into_iter().map(|param| Invocation {
                policy_name: policy_name.clone(),
                binding_name: binding_name.clone(),
                policy: policy.clone(),
                param,
            })),
            Err(e) => config_errors.push(PolicyError {
                message: format!(
                    "policy '{policy_name}' with binding '{binding_name}' denied request: failed to configure binding: {e}"
                ),
                reason: None,
                ignored: policy.pointer("/spec/failurePolicy").and_then(Value::as_str)
                    == Some("Ignore"),
            }),
        }
    }
    out
}

/// Runs every matching policy on a create (`old` `None`) or an update; whether the object
/// changed.
fn admit(a: &Attributes<'_>, obj: &mut Map<String, Value>, old: Option<&Value>) -> ApiResult<bool> {
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    if a.store
        .keys(&format!("{GROUP}/mutatingadmissionpolicybindings"), None)
        .is_empty()
    {
        return Ok(false);
    }
    let namespace = (a.def.namespaced && !a.namespace.is_empty())
        .then(|| a.store.get("/namespaces", a.namespace))
        .flatten()
        .map(|s| (*s.value).clone());
    let r = Request {
        a,
        old,
        request: json!({
            "kind": {"group": a.def.group, "version": a.def.version, "kind": a.def.kind},
            "resource": {"group": a.def.group, "version": a.def.version, "resource": a.def.plural},
            "name": a.name,
            "namespace": a.namespace,
            "subResource": a.subresource.unwrap_or_default(),
            "operation": operation,
            "dryRun": false,
        }),
        namespace,
        fatal: Default::default(),
    };
    let mut errors = Vec::new();
    let first = invocations(a, &r, &Value::Object(obj.clone()), operation, &mut errors);
    // kube-apiserver's admission sees a new object before the storage gives it its uid and
    // creation time (which then replace whatever a mutation set).
    let mut system = Vec::new();
    if old.is_none()
        && let Some(Value::Object(meta)) = obj.get_mut("metadata")
    {
        for k in ["uid", "creationTimestamp"] {
            if let Some(v) = meta.remove(k) {
                system.push((k, v));
            }
        }
    }
    let original = obj.clone();
    let pass = |invocations: &[Invocation],
                obj: &mut Map<String, Value>,
                errors: &mut Vec<PolicyError>| {
        let mut dirty = false;
        let mut ran = Vec::new();
        for inv in invocations {
            let before = obj.clone();
            let mut failures = Vec::new();
            if r.fatal.borrow().is_some() {
                break;
            }
            let ran_mutations = inv.run(&r, obj, &mut failures);
            errors.extend(failures.into_iter().map(|e| PolicyError {
                message: format!(
                    "policy '{}' with binding '{}' denied request: {e}",
                    inv.policy_name, inv.binding_name
                ),
                reason: Some("Invalid"),
                ignored: inv.ignores_failures(),
            }));
            if !ran_mutations {
                continue;
            }
            // kube-apiserver marks the object dirty once a mutation applied, changed or not:
            // the policies to reinvoke then run again.
            dirty |= inv
                .spec("mutations")
                .and_then(Value::as_array)
                .is_some_and(|m| !m.is_empty());
            dirty |= *obj != before;
            ran.push(inv.key());
        }
        (dirty, ran)
    };
    let (dirty, ran) = pass(&first, obj, &mut errors);
    if dirty {
        // The reinvocation matches the object as it is now; of what matches, the invocations
        // that ran and ask for it run again.
        let again: Vec<Invocation> = invocations(
            a,
            &r,
            &Value::Object(obj.clone()),
            operation,
            &mut Vec::new(),
        )
        .into_iter()
        .filter(|i| i.reinvoked() && ran.contains(&i.key()))
        .collect();
        if !again.is_empty() {
            pass(&again, obj, &mut errors);
        }
    }
    if let Some(e) = r.fatal.borrow_mut().take() {
        return Err(e);
    }
    let changed = *obj != original;
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        for (k, v) in system {
            meta.insert(k.to_owned(), v);
        }
    }
    // As kube-apiserver's policy dispatcher: every failure the policy does not ignore is a
    // cause; the first one is the message and gives the reason (`Forbidden` for a
    // configuration error).
    let failures: Vec<PolicyError> = errors.into_iter().filter(|e| !e.ignored).collect();
    if let Some(first) = failures.first() {
        let mut details = json!({"name": a.name, "group": a.def.group, "kind": a.def.plural});
        if a.def.group.is_empty()
            && let Some(d) = details.as_object_mut()
        {
            d.remove("group");
        }
        let causes: Vec<Value> = failures
            .iter()
            .map(|f| json!({"message": f.message}))
            .collect();
        details["causes"] = Value::Array(causes);
        return Err(ApiError::new(
            403,
            first.reason.unwrap_or("Forbidden"),
            first.message.clone(),
        )
        .with_details(details));
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch_error(doc: Value, ops: Value) -> String {
        let mut doc = doc;
        match apply_json_patch(&mut doc, ops.as_array().unwrap()) {
            Err(PatchError::Failed(e)) => e,
            Err(PatchError::TestFailed) => "test failed".into(),
            Ok(()) => panic!("applied: {doc}"),
        }
    }

    #[test]
    fn json_patch_errors_should_read_as_evanphx_v4() {
        assert_eq!(
            patch_error(
                json!({}),
                json!([{"op": "add", "path": "/data/x", "value": 1}])
            ),
            "add operation does not apply: doc is missing path: \"/data/x\": missing value"
        );
        assert_eq!(
            patch_error(
                json!({"a": [1]}),
                json!([{"op": "add", "path": "/a/5", "value": 1}])
            ),
            "error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced"
        );
        assert_eq!(
            patch_error(
                json!({"a": [1]}),
                json!([{"op": "add", "path": "/a/x", "value": 1}])
            ),
            "error in add for path: '/a/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            patch_error(json!({"a": {}}), json!([{"op": "remove", "path": "/a/b"}])),
            "error in remove for path: '/a/b': Unable to remove nonexistent key: b: missing value"
        );
        assert_eq!(
            patch_error(
                json!({"a": [1]}),
                json!([{"op": "replace", "path": "/a/3", "value": 1}])
            ),
            "replace operation does not apply: doc is missing key: /a/3: missing value"
        );
        assert_eq!(
            patch_error(
                json!({}),
                json!([{"op": "move", "from": "/x/y", "path": "/z"}])
            ),
            "move operation does not apply: doc is missing from path: /x/y: missing value"
        );
        assert_eq!(
            patch_error(json!({}), json!([{"op": "nope", "path": "/z"}])),
            "Unexpected kind: nope"
        );
        assert_eq!(
            patch_error(
                json!({"a": 1}),
                json!([{"op": "test", "path": "/a", "value": 2}])
            ),
            "test failed"
        );
    }

    #[test]
    fn json_patch_should_apply_v4_semantics() {
        let mut doc = json!({"a": [1, 2], "m": {"k": "v"}});
        let ops = json!([
            {"op": "add", "path": "/a/-1", "value": 9},
            {"op": "replace", "path": "/m/new", "value": "set"},
            {"op": "copy", "from": "/m/k", "path": "/m/c"},
            {"op": "move", "from": "/m/k", "path": "/k~1slash"},
            {"op": "remove", "path": "/a/0"},
            {"op": "test", "path": "/m/absent", "value": null}
        ]);
        assert!(apply_json_patch(&mut doc, ops.as_array().unwrap()).is_ok());
        assert_eq!(
            doc,
            json!({"a": [2, 9], "m": {"new": "set", "c": "v"}, "k/slash": "v"})
        );
    }

    #[test]
    fn struct_names_should_skip_strings_and_other_identifiers() {
        let mut names = BTreeSet::new();
        struct_names(
            r#"Object{spec: Object.spec {x: "Object.fake{", y: {'a': 1}}} + [JSONPatch{op: 'add'}] + other{}"#,
            &mut names,
        );
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(names, ["JSONPatch", "Object", "Object.spec"]);
    }

    #[test]
    fn struct_literals_should_evaluate_to_named_structs() {
        let expression = "Object{spec: Object.spec{replicas: 2, list: [1, 2.0], m: {'k': 'v'}}}";
        let mut names = BTreeSet::new();
        struct_names(expression, &mut names);
        let env = env_for(names);
        let ctx = cel::Context::with_env(env.clone());
        let v = evaluate(&env, expression, &ctx).unwrap();
        assert!(check_type_names(&v).is_ok());
        assert_eq!(
            to_json(&v).unwrap(),
            json!({"spec": {"replicas": 2, "list": [1, 2], "m": {"k": "v"}}})
        );
        let unknown = evaluate(&env, "Other{}", &ctx).unwrap_err();
        assert!(
            unknown.starts_with("expression 'Other{}' resulted in error"),
            "{unknown}"
        );
    }

    #[test]
    fn atomic_paths_should_follow_the_schema() {
        let schema = crate::managed_fields::Schema::builtin("apps", "v1", "Deployment");
        let config = json!({"spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"spec": {"containers": [{"name": "c", "command": ["x"]}]}}}});
        assert_eq!(
            crate::managed_fields::atomic_paths(&schema, &config),
            [
                ".spec.selector",
                ".spec.template.spec.containers[0].command"
            ]
        );
    }
}
