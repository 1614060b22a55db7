//! Jobs, as kube-apiserver's `batch/v1` defaulting and Job strategy: `SetDefaults_Job` on every
//! write, the generated selector and template labels on create (`generateSelector`, unless
//! `manualSelector`), and `ValidateJob` / `ValidateJobUpdate`: the generated selector must stay
//! as generated, the selector must match the template, the restart policy is `OnFailure` or
//! `Never`; `completions` (but for Indexed Jobs scaled in tandem with `parallelism`),
//! `selector`, `completionMode` and the pod template cannot change (a suspended Job that never
//! started may change its template's scheduling directives).

use serde_json::{Map, Value, json};

use crate::defaults::json::{object, or_insert, or_insert_str};
use crate::defaults::pod;
use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;
use crate::validation::field::FieldError;
use crate::wire::go_internal;

const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
const LEGACY_JOB_NAME: &str = "job-name";

/// The Job strategy.
pub(crate) struct JobStrategy;

fn manual_selector(obj: &Map<String, Value>) -> bool {
    obj.get("spec")
        .and_then(|s| s.get("manualSelector"))
        .and_then(Value::as_bool)
        == Some(true)
}

fn meta<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `generateSelector`: the job-name and controller-uid labels on the template (those the user
/// did not set) and a selector on the controller uid.
fn generate_selector(obj: &mut Map<String, Value>) {
    let (name, uid) = (meta(obj, "name").to_owned(), meta(obj, "uid").to_owned());
    let Some(spec) = object(obj, "spec") else {
        return;
    };
    if let Some(template) = object(spec, "template")
        && let Some(template_meta) = object(template, "metadata")
        && let Some(labels) = object(template_meta, "labels")
    {
        for (key, value) in [
            (LEGACY_JOB_NAME, &name),
            (JOB_NAME, &name),
            (LEGACY_CONTROLLER_UID, &uid),
            (CONTROLLER_UID, &uid),
        ] {
            labels.entry(key).or_insert_with(|| json!(value));
        }
    }
    if let Some(selector) = object(spec, "selector")
        && let Some(match_labels) = object(selector, "matchLabels")
    {
        match_labels
            .entry(CONTROLLER_UID)
            .or_insert_with(|| json!(uid));
    }
}

impl Strategy for JobStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    /// `SetDefaults_Job` and the template's pod defaults.
    fn defaults(&self, obj: &mut Map<String, Value>) {
        let template_labels = obj.pointer_labels().filter(|l| !l.is_empty());
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        let unset = |s: &Map<String, Value>, k: &str| s.get(k).is_none_or(Value::is_null);
        if unset(spec, "completions") && unset(spec, "parallelism") {
            spec.insert("completions".into(), json!(1));
        }
        or_insert(spec, "parallelism", json!(1));
        let backoff = if unset(spec, "backoffLimitPerIndex") {
            json!(6)
        } else {
            json!(i32::MAX)
        };
        or_insert(spec, "backoffLimit", backoff);
        or_insert_str(spec, "completionMode", "NonIndexed");
        or_insert(spec, "suspend", json!(false));
        let replacement = if unset(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        or_insert_str(spec, "podReplacementPolicy", replacement);
        or_insert(spec, "manualSelector", json!(false));
        if let Some(template) = object(spec, "template") {
            pod::pod_template(template);
        }
        if let Some(labels) = template_labels {
            let m = crate::meta::metadata_mut(obj);
            if m.get("labels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
            {
                m.insert("labels".into(), Value::Object(labels));
            }
        }
    }

    /// The generated selector and labels (not owned by the writer), an empty status; the Job
    /// carries its template's labels when it has none of its own.
    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        if !manual_selector(obj) {
            generate_selector(obj);
        }
        obj.insert("status".into(), json!({}));
        if let Some(labels) = obj.pointer_labels().filter(|l| !l.is_empty()) {
            let m = crate::meta::metadata_mut(obj);
            if m.get("labels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
            {
                m.insert("labels".into(), Value::Object(labels));
            }
        }
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        // A new Job is validated with the selector its create generates.
        let mut obj = obj.clone();
        let generated = obj.pointer_selector().is_none() && !manual_selector(&obj);
        if generated && !meta(&obj, "uid").is_empty() {
            generate_selector(&mut obj);
        }
        validate_job(&obj)
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        job_update(old, new)
    }

    fn validate_status_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        super::job_status::validate(old, new)
    }

    fn validates_new_state_first(&self) -> bool {
        true
    }
}

/// Access to a Job's template labels and selector.
trait JobParts {
    fn pointer_labels(&self) -> Option<Map<String, Value>>;
    fn pointer_selector(&self) -> Option<&Value>;
}

impl JobParts for Map<String, Value> {
    fn pointer_labels(&self) -> Option<Map<String, Value>> {
        self.get("spec")?
            .pointer("/template/metadata/labels")?
            .as_object()
            .cloned()
    }

    fn pointer_selector(&self) -> Option<&Value> {
        self.get("spec")?.get("selector").filter(|s| !s.is_null())
    }
}

/// `ValidateJob`: the generated selector, then the spec.
fn validate_job(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels = obj.pointer_labels().unwrap_or_default();
    let selector = obj.pointer_selector();
    let uid = meta(obj, "uid");
    if !manual_selector(obj)
        && let Some(selector) = selector
        && !uid.is_empty()
    {
        for (key, value) in [
            (LEGACY_CONTROLLER_UID, uid),
            (LEGACY_JOB_NAME, meta(obj, "name")),
            (CONTROLLER_UID, uid),
            (JOB_NAME, meta(obj, "name")),
        ] {
            if labels.get(key).and_then(Value::as_str) != Some(value) {
                errs.push(FieldError::invalid(
                    "spec.template.metadata.labels",
                    &Value::Object(labels.clone()),
                    &format!("must have label {key} with value {value}"),
                ));
            }
        }
        let expected = json!({"matchLabels": {CONTROLLER_UID: uid}});
        let only_match_labels = selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if !only_match_labels || selector.get("matchLabels") != expected.get("matchLabels") {
            errs.push(FieldError::invalid(
                "spec.selector",
                selector,
                "`selector` not auto-generated",
            ));
        }
    }
    errs.extend(job_spec(obj));
    errs
}

/// `ValidateJobSpec`: [`job_spec_rules`], then a selector matching the template.
fn job_spec(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = job_spec_rules(obj.get("spec"), "spec");
    let labels = obj.pointer_labels().unwrap_or_default();
    let selector = obj.pointer_selector();
    match selector {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) => {
            let matches = sel
                .get("matchLabels")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .all(|(k, v)| labels.get(k) == Some(v));
            if !matches {
                errs.push(FieldError::invalid(
                    "spec.template.metadata.labels",
                    &Value::Object(labels.clone()),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
    errs
}

/// `validateJobSpec`, the rules a Job's spec and a CronJob's job template share, for the spec at
/// `path`: counts not negative, the completion mode, the pod template, then a restart policy of
/// `OnFailure` or `Never` (`Always`, which the pod defaults set when none is given, counts as
/// missing).
pub(crate) fn job_spec_rules(spec: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let get = |key: &str| spec.and_then(|s| s.get(key)).filter(|v| !v.is_null());
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        if let Some(n) = get(key).and_then(Value::as_i64)
            && n < 0
        {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
        if key == "maxFailedIndexes" && get(key).is_some() && get("backoffLimitPerIndex").is_none()
        {
            errs.push(FieldError::required(
                format!("{path}.backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    let mode = get("completionMode").and_then(Value::as_str);
    if let Some(mode) = mode {
        if !matches!(mode, "NonIndexed" | "Indexed") {
            errs.push(FieldError::not_supported(
                format!("{path}.completionMode"),
                &json!(mode),
                &["NonIndexed", "Indexed"],
            ));
        }
        if mode == "Indexed" && get("completions").is_none() {
            errs.push(FieldError::required(
                format!("{path}.completions"),
                "when completion mode is Indexed",
            ));
        }
    }
    if matches!(mode, None | Some("NonIndexed")) {
        for key in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(v) = get(key) {
                errs.push(FieldError::invalid(
                    format!("{path}.{key}"),
                    v,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    let failure_policy = get("podFailurePolicy").is_some();
    if let Some(policy) = get("podReplacementPolicy").and_then(Value::as_str) {
        let supported: &[&str] = if failure_policy {
            &["Failed"]
        } else {
            &["Failed", "TerminatingOrFailed"]
        };
        if !supported.contains(&policy) {
            errs.push(FieldError::not_supported(
                format!("{path}.podReplacementPolicy"),
                &json!(policy),
                supported,
            ));
        }
    }
    let template_spec = spec.and_then(|s| s.pointer("/template/spec"));
    let pod_path = format!("{path}.template.spec");
    errs.extend(crate::validation::core::pod_spec(template_spec, &pod_path));
    match template_spec
        .and_then(|t| t.get("restartPolicy"))
        .and_then(Value::as_str)
    {
        None | Some("" | "Always") => errs.push(FieldError::required(
            format!("{pod_path}.restartPolicy"),
            "valid values: \"OnFailure\", \"Never\"",
        )),
        Some("OnFailure") if failure_policy => errs.push(FieldError::invalid(
            format!("{pod_path}.restartPolicy"),
            &json!("OnFailure"),
            "only \"Never\" is supported when podFailurePolicy is specified",
        )),
        Some("OnFailure" | "Never") => {}
        Some(other) => errs.push(FieldError::not_supported(
            format!("{pod_path}.restartPolicy"),
            &json!(other),
            &["OnFailure", "Never"],
        )),
    }
    errs
}

/// `ValidateJobSpecUpdate`: the spec once more (its causes are listed twice, as
/// kube-apiserver validates it in `ValidateJob` and again here), then the immutable fields.
fn job_update(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = job_spec(new);
    let new_spec = new.get("spec");
    let old_spec = old.get("spec");
    let get = |s: Option<&Value>, k: &str| s.and_then(|s| s.get(k)).cloned().unwrap_or(Value::Null);
    let immutable = |errs: &mut Vec<FieldError>, key: &str| {
        let after = get(new_spec, key);
        if after != get(old_spec, key) {
            errs.push(FieldError::invalid(
                format!("spec.{key}"),
                &after,
                "field is immutable",
            ));
        }
    };
    let indexed = get(new_spec, "completionMode") == json!("Indexed");
    if !indexed {
        immutable(&mut errs, "completions");
    } else if get(new_spec, "completions") != get(old_spec, "completions")
        && get(new_spec, "completions") != get(new_spec, "parallelism")
    {
        errs.push(FieldError::invalid(
            "spec.completions",
            &get(new_spec, "completions"),
            "can only be modified in tandem with spec.parallelism",
        ));
    }
    immutable(&mut errs, "selector");
    // The pod template's spec; a suspended Job that never started may change its scheduling
    // directives.
    let mutable_scheduling = old_spec.and_then(|s| s.get("suspend")) == Some(&json!(true))
        && old.pointer("/status/startTime").is_none_or(Value::is_null);
    let new_pod = new_spec.and_then(|s| s.pointer("/template/spec")).cloned();
    let mut old_pod = old_spec.and_then(|s| s.pointer("/template/spec")).cloned();
    if mutable_scheduling
        && let (Some(Value::Object(o)), Some(Value::Object(n))) =
            (old_pod.as_mut(), new_pod.as_ref())
    {
        for key in ["nodeSelector", "affinity", "tolerations", "schedulingGates"] {
            match n.get(key) {
                Some(v) => o.insert(key.into(), v.clone()),
                None => o.remove(key),
            };
        }
    }
    let after = go_internal::pod_spec_json(new_pod.as_ref());
    if go_internal::pod_spec_json(old_pod.as_ref()) != after {
        errs.push(FieldError {
            field: "spec.template.spec".into(),
            reason: "FieldValueInvalid",
            message: format!("Invalid value: {after}: field is immutable"),
        });
    }
    immutable(&mut errs, "completionMode");
    for key in [
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
        "podReplacementPolicy",
    ] {
        immutable(&mut errs, key);
    }
    errs
}
