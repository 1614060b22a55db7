//! The `ValidatingAdmissionPolicy` admission plugin: ValidatingAdmissionPolicies
//! (`admissionregistration.k8s.io/v1`) applied through their ValidatingAdmissionPolicyBindings,
//! their CEL expressions evaluated with the `cel` crate (the CEL crate kcr-testenv already uses
//! for shard selectors; maintained, with macros, optionals and the strings, lists and math
//! extensions).
//!
//! For a create or an update, every binding (in name order) whose policy exists is considered: the
//! policy's `matchConstraints` and the binding's `matchResources` must both match the request
//! (`resourceRules` by operation, group, version, resource or subresource and scope,
//! `excludeResourceRules`,
//! `namespaceSelector` on the namespace's labels, `objectSelector` on the object's), then
//! every `matchCondition` must hold. With a `paramKind`, the binding's `paramRef` chooses the
//! params (by name, or by selector, in the binding's namespace, the request's or cluster-wide):
//! the validations run once per param, and no param is a denial unless
//! `parameterNotFoundAction` is `Allow`. The variables `object`, `oldObject` (null on a create),
//! `request`, `params`, `namespaceObject` and `variables` (the policy's `variables`, in order)
//! are bound.
//!
//! A validation that is false fails with its `messageExpression`'s value, else its `message`,
//! else `failed expression: <expression>`; an expression that cannot be compiled or evaluated
//! fails (`expression '<e>' resulted in error: ...`) unless `failurePolicy` is `Ignore`. The
//! binding's `validationActions` decide what a failure does: `Deny` refuses the request with
//! the validation's `reason` (default `Invalid`, `422`; `Forbidden` `403`, `Unauthorized`
//! `401`, `RequestEntityTooLarge` `413`) and the message `ValidatingAdmissionPolicy '<p>' with
//! binding '<b>' denied request: <message>` (the first denial); `Warn` adds the `Warning`
//! `Validation failed for ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>`;
//! `Audit` goes to the audit log, which kcr-testenv does not keep.
//!
//! The expressions run in [`cel_library`](crate::cel_library)'s environment (with Kubernetes'
//! list, regex and sets functions). Not ported: Kubernetes' `quantity`, `url`, `ip`, `cidr`,
//! `authorizer` and `format` libraries, the type checking of expressions against the matched
//! kinds (the policy's `status.typeChecking`), cost limits, and evaluation on deletes and
//! connects.

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::status::{ApiError, ApiResult};

/// The plugin.
pub(super) struct ValidatingAdmissionPolicy;

const GROUP: &str = "admissionregistration.k8s.io";

use crate::cel_library::ENV;

/// Whether a label selector (`matchLabels`, `matchExpressions`) matches `labels`; no selector
/// matches everything.
fn selector_matches(selector: Option<&Value>, labels: &Map<String, Value>) -> bool {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return true;
    };
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let match_labels = selector.get("matchLabels").and_then(Value::as_object);
    if match_labels
        .into_iter()
        .flatten()
        .any(|(k, v)| label(k) != v.as_str())
    {
        return false;
    }
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    expressions.into_iter().flatten().all(|e| {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        match e.get("operator").and_then(Value::as_str) {
            Some("In") => label(key).is_some_and(|v| values.contains(&v)),
            Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
            Some("Exists") => label(key).is_some(),
            Some("DoesNotExist") => label(key).is_none(),
            _ => false,
        }
    })
}

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn listed(list: &[&str], value: &str) -> bool {
    list.iter().any(|l| *l == "*" || *l == value)
}

/// Whether a `resources` entry of a rule names the resource (and subresource) written.
fn resource_listed(r: &str, plural: &str, sub: Option<&str>) -> bool {
    let (res, res_sub) = r.split_once('/').map_or((r, None), |(a, b)| (a, Some(b)));
    let resource_ok = res == "*" || res == plural;
    match (res_sub, sub) {
        (None, None) => resource_ok,
        (Some(s), Some(sub)) => resource_ok && (s == "*" || s == sub),
        _ => false,
    }
}

/// Whether a `resourceRules` entry matches the `operation` on `a`'s resource.
fn rule_matches(rule: &Value, a: &Attributes<'_>, name: &str, operation: &str) -> bool {
    let ops = strings(rule.get("operations"));
    let resources = strings(rule.get("resources"));
    let names = strings(rule.get("resourceNames"));
    let scope = rule.get("scope").and_then(Value::as_str).unwrap_or("*");
    listed(&ops, operation)
        && listed(&strings(rule.get("apiGroups")), &a.def.group)
        && listed(&strings(rule.get("apiVersions")), &a.def.version)
        && resources
            .iter()
            .any(|r| resource_listed(r, &a.def.plural, a.subresource))
        && (names.is_empty() || names.contains(&name))
        && match scope {
            "Namespaced" => a.def.namespaced,
            "Cluster" => !a.def.namespaced,
            _ => true,
        }
}

/// The labels of an object.
fn labels_of(v: &Value) -> Map<String, Value> {
    v.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Whether a `matchConstraints` / `matchResources` matches the request.
fn resources_match(
    m: Option<&Value>,
    a: &Attributes<'_>,
    obj: &Value,
    namespace: Option<&Value>,
    require_rules: bool,
    operation: &str,
) -> bool {
    let Some(m) = m.filter(|m| !m.is_null()) else {
        return !require_rules;
    };
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let rules = m.get("resourceRules").and_then(Value::as_array);
    let has_rules = rules.is_some_and(|r| !r.is_empty());
    if (has_rules || require_rules)
        && !rules
            .into_iter()
            .flatten()
            .any(|r| rule_matches(r, a, name, operation))
    {
        return false;
    }
    let excluded = m.get("excludeResourceRules").and_then(Value::as_array);
    if excluded
        .into_iter()
        .flatten()
        .any(|r| rule_matches(r, a, name, operation))
    {
        return false;
    }
    // A cluster-scoped object other than a Namespace is not selected by namespace.
    let namespace_labels = if a.is_core("Namespace") {
        Some(labels_of(obj))
    } else {
        namespace.map(labels_of)
    };
    if let Some(labels) = namespace_labels
        && !selector_matches(m.get("namespaceSelector"), &labels)
    {
        return false;
    }
    selector_matches(m.get("objectSelector"), &labels_of(obj))
}

/// A CEL value from JSON.
fn cel_value(v: &Value) -> cel::Value {
    cel::to_value(v).unwrap_or(cel::Value::Null)
}

/// The outcome of one expression.
enum Outcome {
    Value(cel::Value),
    Error(String),
}

fn evaluate(expression: &str, ctx: &cel::Context<'_, '_>) -> Outcome {
    let program = match ENV.compile(expression) {
        Ok(p) => p,
        Err(e) => return Outcome::Error(format!("compilation failed: {e}")),
    };
    match program.execute(ctx) {
        Ok(v) => Outcome::Value(v),
        Err(e) => Outcome::Error(e.to_string()),
    }
}

/// A failed validation: its message and reason.
struct Failure {
    message: String,
    reason: String,
}

/// The params a binding gives its policy; `Err` with the message of a missing param.
fn params_of(a: &Attributes<'_>, policy: &Value, binding: &Value) -> Result<Vec<Value>, String> {
    let Some(kind) = policy.pointer("/spec/paramKind").filter(|k| !k.is_null()) else {
        return Ok(vec![Value::Null]);
    };
    let Some(param_ref) = binding.pointer("/spec/paramRef").filter(|r| !r.is_null()) else {
        return Err(
            "failed to configure binding: paramRef must be set when paramKind is set".into(),
        );
    };
    let api_version = kind
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind_name = kind.get("kind").and_then(Value::as_str).unwrap_or_default();
    let Some(def) = a
        .store
        .defs()
        .iter()
        .find(|d| d.group == group && d.version == version && d.kind == kind_name)
        .cloned()
    else {
        return Err(format!(
            "failed to configure binding: paramKind {api_version}, Kind={kind_name} is not served"
        ));
    };
    let namespace = if def.namespaced {
        Some(
            param_ref
                .get("namespace")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or(a.namespace)
                .to_owned(),
        )
    } else {
        None
    };
    let mut found = Vec::new();
    if let Some(name) = param_ref
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        let key = crate::store::object_key(namespace.as_deref(), name);
        found.extend(a.store.get(&def.storage, &key).map(|s| (*s.value).clone()));
    } else {
        for key in a.store.keys(&def.storage, namespace.as_deref()) {
            if let Some(s) = a.store.get(&def.storage, &key)
                && selector_matches(param_ref.get("selector"), &labels_of(&s.value))
            {
                found.push((*s.value).clone());
            }
        }
    }
    if found.is_empty() {
        let action = param_ref
            .get("parameterNotFoundAction")
            .and_then(Value::as_str)
            .unwrap_or("Deny");
        if action == "Allow" {
            return Ok(Vec::new());
        }
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found)
}

/// The failures of one policy for one param; `None` when its match conditions exclude the
/// request.
fn validate_with(
    policy: &Value,
    obj: &Value,
    old: Option<&Value>,
    request: &Value,
    namespace: Option<&Value>,
    params: &Value,
) -> Option<Vec<Failure>> {
    let spec = policy.get("spec")?;
    let ignore = spec.get("failurePolicy").and_then(Value::as_str) == Some("Ignore");
    let mut ctx = cel::Context::with_env(ENV.clone());
    ctx.add_variable_from_value("object", cel_value(obj));
    ctx.add_variable_from_value("oldObject", old.map_or(cel::Value::Null, cel_value));
    ctx.add_variable_from_value("request", cel_value(request));
    ctx.add_variable_from_value("params", cel_value(params));
    ctx.add_variable_from_value(
        "namespaceObject",
        namespace.map_or(cel::Value::Null, cel_value),
    );
    let mut variables = std::collections::HashMap::<String, cel::Value>::new();
    for v in spec
        .get("variables")
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
        let value = match evaluate(expression, &inner) {
            Outcome::Value(v) => v,
            Outcome::Error(_) => cel::Value::Null,
        };
        variables.insert(name.to_owned(), value);
    }
    ctx.add_variable_from_value("variables", variables);
    let mut failures = Vec::new();
    for c in spec
        .get("matchConditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let expression = c
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match evaluate(expression, &ctx) {
            Outcome::Value(cel::Value::Bool(true)) => {}
            Outcome::Value(cel::Value::Bool(false)) => return None,
            Outcome::Value(_) | Outcome::Error(_) if ignore => return None,
            Outcome::Value(other) => {
                failures.push(Failure {
                    message: format!(
                        "expression '{expression}' resulted in error: matchCondition must evaluate to a bool, got {other:?}"
                    ),
                    reason: "Invalid".into(),
                });
                return Some(failures);
            }
            Outcome::Error(e) => {
                failures.push(Failure {
                    message: format!("expression '{expression}' resulted in error: {e}"),
                    reason: "Invalid".into(),
                });
                return Some(failures);
            }
        }
    }
    for v in spec
        .get("validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let expression = v
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let reason = v
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("Invalid")
            .to_owned();
        match evaluate(expression, &ctx) {
            Outcome::Value(cel::Value::Bool(true)) => {}
            Outcome::Value(cel::Value::Bool(false)) => {
                let from_expression = v
                    .get("messageExpression")
                    .and_then(Value::as_str)
                    .and_then(|m| match evaluate(m, &ctx) {
                        Outcome::Value(cel::Value::String(s)) => {
                            Some(s.trim().to_owned()).filter(|s| !s.is_empty())
                        }
                        _ => None,
                    });
                let message = from_expression
                    .or_else(|| {
                        v.get("message")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .filter(|m| !m.is_empty())
                    })
                    .unwrap_or_else(|| format!("failed expression: {expression}"));
                failures.push(Failure { message, reason });
            }
            _ if ignore => {}
            Outcome::Value(other) => failures.push(Failure {
                message: format!(
                    "expression '{expression}' resulted in error: validation expression must evaluate to a bool, got {other:?}"
                ),
                reason: "Invalid".into(),
            }),
            Outcome::Error(e) => failures.push(Failure {
                message: format!("expression '{expression}' resulted in error: {e}"),
                reason: "Invalid".into(),
            }),
        }
    }
    Some(failures)
}

/// The HTTP status of a denial's reason.
fn code_of(reason: &str) -> (u16, &'static str) {
    match reason {
        "Unauthorized" => (401, "Unauthorized"),
        "Forbidden" => (403, "Forbidden"),
        "RequestEntityTooLarge" => (413, "RequestEntityTooLarge"),
        _ => (422, "Invalid"),
    }
}

impl Plugin for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn validate_create(&self, a: &Attributes<'_>, obj: &Map<String, Value>) -> ApiResult<()> {
        admit(a, &Value::Object(obj.clone()), None)
    }

    fn validate_update(&self, a: &Attributes<'_>, old: &Value, new: &Value) -> ApiResult<()> {
        admit(a, new, Some(old))
    }
}

/// Applies every binding to a create (`old` `None`) or an update.
fn admit(a: &Attributes<'_>, obj: &Value, old: Option<&Value>) -> ApiResult<()> {
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    {
        let bindings_storage = format!("{GROUP}/validatingadmissionpolicybindings");
        let binding_keys = a.store.keys(&bindings_storage, None);
        if binding_keys.is_empty() {
            return Ok(());
        }
        let namespace = (a.def.namespaced && !a.namespace.is_empty())
            .then(|| a.store.get("/namespaces", a.namespace))
            .flatten()
            .map(|s| (*s.value).clone());
        let request = json!({
            "kind": {"group": a.def.group, "version": a.def.version, "kind": a.def.kind},
            "resource": {"group": a.def.group, "version": a.def.version, "resource": a.def.plural},
            "name": a.name,
            "namespace": a.namespace,
            "subResource": a.subresource.unwrap_or_default(),
            "operation": operation,
            "dryRun": false,
        });
        let mut denial: Option<(String, String)> = None;
        for key in binding_keys {
            let Some(binding) = a.store.get(&bindings_storage, &key) else {
                continue;
            };
            let binding = &binding.value;
            let Some(policy_name) = binding.pointer("/spec/policyName").and_then(Value::as_str)
            else {
                continue;
            };
            let Some(policy) = a
                .store
                .get(&format!("{GROUP}/validatingadmissionpolicies"), policy_name)
            else {
                continue;
            };
            let policy = &policy.value;
            if !resources_match(
                policy.pointer("/spec/matchConstraints"),
                a,
                obj,
                namespace.as_ref(),
                true,
                operation,
            ) || !resources_match(
                binding.pointer("/spec/matchResources"),
                a,
                obj,
                namespace.as_ref(),
                false,
                operation,
            ) {
                continue;
            }
            let binding_name = binding
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let actions = strings(binding.pointer("/spec/validationActions"));
            let failures = match params_of(a, policy, binding) {
                Ok(params) => params
                    .iter()
                    .filter_map(|p| {
                        validate_with(policy, obj, old, &request, namespace.as_ref(), p)
                    })
                    .flatten()
                    .collect(),
                Err(message) => vec![Failure {
                    message,
                    reason: "Invalid".into(),
                }],
            };
            for f in failures {
                if actions.contains(&"Warn") {
                    a.warnings.lock().push(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {}",
                        f.message
                    ));
                }
                if actions.contains(&"Deny") && denial.is_none() {
                    denial = Some((
                        format!(
                            "ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}' denied request: {}",
                            f.message
                        ),
                        f.reason,
                    ));
                }
            }
        }
        let Some((message, reason)) = denial else {
            return Ok(());
        };
        let forbidden = a.forbidden(&message);
        let (code, reason) = code_of(&reason);
        let mut details = forbidden.details.clone().unwrap_or_else(|| json!({}));
        details["causes"] = json!([{"message": message}]);
        Err(ApiError::new(code, reason, forbidden.message).with_details(details))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_should_follow_labels() {
        let labels = json!({"app": "a", "tier": "web"});
        let labels = labels.as_object().unwrap();
        assert!(selector_matches(None, labels));
        assert!(selector_matches(Some(&json!({})), labels));
        assert!(selector_matches(
            Some(&json!({"matchLabels": {"app": "a"}})),
            labels
        ));
        assert!(!selector_matches(
            Some(&json!({"matchLabels": {"app": "b"}})),
            labels
        ));
        assert!(selector_matches(
            Some(
                &json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "db"]},
                                              {"key": "x", "operator": "DoesNotExist"}]})
            ),
            labels
        ));
    }

    #[test]
    fn expressions_should_see_the_object_and_variables() {
        let policy = json!({"spec": {
            "variables": [{"name": "keys", "expression": "has(object.data) ? object.data.size() : 0"}],
            "validations": [
                {"expression": "variables.keys <= 1", "messageExpression": "'too many keys: ' + string(variables.keys)"},
                {"expression": "object.metadata.?labels[?'owner'].hasValue()", "reason": "Forbidden"},
                {"expression": "object.nope.size() > 0"}
            ]
        }});
        let obj = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        let failures = validate_with(&policy, &obj, None, &json!({}), None, &Value::Null).unwrap();
        let messages: Vec<&str> = failures.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages[0], "too many keys: 2");
        assert_eq!(
            messages[1],
            "failed expression: object.metadata.?labels[?'owner'].hasValue()"
        );
        assert_eq!(failures[1].reason, "Forbidden");
        assert!(messages[2].starts_with("expression 'object.nope.size() > 0' resulted in error: "));
    }
}
