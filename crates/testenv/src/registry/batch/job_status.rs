//! A Job's status update rules (`ValidateJobStatusUpdate` with the options kube-apiserver v1.36's
//! Job status strategy derives from the old and new Job: most rules apply only when the fields
//! they read changed, so a status that became inconsistent after a spec change can still be
//! fixed by the Job controller).

use serde_json::{Map, Value};

use crate::validation::field::FieldError;

fn status<'a>(job: &'a Value, key: &str) -> Option<&'a Value> {
    job.get("status")
        .and_then(|s| s.get(key))
        .filter(|v| !v.is_null())
}

fn count(job: &Value, key: &str) -> i64 {
    status(job, key).and_then(Value::as_i64).unwrap_or(0)
}

fn condition_true(job: &Value, kind: &str) -> bool {
    status(job, "conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            c.get("type").and_then(Value::as_str) == Some(kind)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
}

fn complete(job: &Value) -> bool {
    condition_true(job, "Complete")
}

fn failed(job: &Value) -> bool {
    condition_true(job, "Failed")
}

fn finished(job: &Value) -> bool {
    complete(job) || failed(job)
}

fn uncounted(job: &Value) -> (Vec<Value>, Vec<Value>) {
    let list = |k: &str| {
        status(job, "uncountedTerminatedPods")
            .and_then(|u| u.get(k))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    (list("succeeded"), list("failed"))
}

/// A condition error whose value is left out (`field.OmitValueType`).
fn conditions_error(detail: &str) -> FieldError {
    FieldError {
        field: "status.conditions".into(),
        reason: "FieldValueInvalid",
        message: format!("Invalid value: {detail}"),
    }
}

/// The errors of a write of `new` over `old` through `jobs/status`.
pub(crate) fn validate(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let new_value = Value::Object(new.clone());
    let new = &new_value;
    let changed = |k: &str| status(old, k) != status(new, k);
    let indexed = new.pointer("/spec/completionMode").and_then(Value::as_str) == Some("Indexed");
    let finished_changed = finished(old) != finished(new);
    let complete_changed = complete(old) != complete(new);
    let failed_changed = failed(old) != failed(new);
    let failure_target_changed =
        condition_true(old, "FailureTarget") != condition_true(new, "FailureTarget");
    let active_changed = changed("active");
    let start_changed = changed("startTime");
    let completion_changed = changed("completionTime");
    let suspended_with_zero = new.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
        && new.pointer("/spec/completions").and_then(Value::as_i64) == Some(0);
    let mut errs = Vec::new();
    // validateJobStatus
    for k in ["active", "succeeded", "failed"] {
        let v = count(new, k);
        if v < 0 {
            errs.push(FieldError::invalid(
                format!("status.{k}"),
                &Value::from(v),
                "must be greater than or equal to 0",
            ));
        }
    }
    for k in ["ready", "terminating"] {
        if let Some(v) = status(new, k).and_then(Value::as_i64)
            && v < 0
        {
            errs.push(FieldError::invalid(
                format!("status.{k}"),
                &Value::from(v),
                "must be greater than or equal to 0",
            ));
        }
    }
    let (succeeded_uids, failed_uids) = uncounted(new);
    let mut seen = std::collections::BTreeSet::new();
    for (list, name) in [(&succeeded_uids, "succeeded"), (&failed_uids, "failed")] {
        for (i, uid) in list.iter().enumerate() {
            let field = format!("status.uncountedTerminatedPods.{name}[{i}]");
            let text = uid.as_str().unwrap_or_default();
            if text.is_empty() {
                errs.push(FieldError::invalid(field, uid, "must not be empty"));
            } else if !seen.insert(text.to_owned()) {
                errs.push(FieldError::duplicate(field, uid));
            }
        }
    }
    if (complete_changed || failed_changed) && complete(new) && failed(new) {
        errs.push(conditions_error(
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if (complete_changed || failure_target_changed)
        && complete(new)
        && condition_true(new, "FailureTarget")
    {
        errs.push(conditions_error(
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    let completion_time = status(new, "completionTime");
    if (complete_changed || completion_changed)
        && !complete(new)
        && let Some(t) = completion_time
    {
        errs.push(FieldError::invalid(
            "status.completionTime",
            t,
            "cannot set completionTime when there is no Complete=True condition",
        ));
    }
    if (complete_changed || completion_changed) && complete(new) && completion_time.is_none() {
        errs.push(FieldError::required(
            "status.completionTime",
            "completionTime is required for Complete jobs",
        ));
    }
    if (start_changed || completion_changed)
        && let (Some(c), Some(s)) = (
            completion_time.and_then(Value::as_str),
            status(new, "startTime").and_then(Value::as_str),
        )
        && c < s
    {
        errs.push(FieldError::invalid(
            "status.completionTime",
            &Value::from(c),
            "completionTime cannot be set before startTime",
        ));
    }
    if failed_changed && failed(new) && !condition_true(new, "FailureTarget") {
        errs.push(conditions_error(
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if complete_changed && complete(new) && !condition_true(new, "SuccessCriteriaMet") {
        errs.push(conditions_error(
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    let is_finished = finished(new);
    if (finished_changed || active_changed) && is_finished && count(new, "active") > 0 {
        errs.push(FieldError::invalid(
            "status.active",
            &Value::from(count(new, "active")),
            "active>0 is invalid for finished job",
        ));
    }
    if (finished_changed || changed("terminating")) && is_finished && count(new, "terminating") > 0
    {
        errs.push(FieldError::invalid(
            "status.terminating",
            &Value::from(count(new, "terminating")),
            "terminating>0 is invalid for finished job",
        ));
    }
    if (finished_changed || start_changed)
        && !suspended_with_zero
        && is_finished
        && status(new, "startTime").is_none()
    {
        errs.push(FieldError::required(
            "status.startTime",
            "startTime is required for finished job",
        ));
    }
    if (finished_changed || changed("uncountedTerminatedPods"))
        && is_finished
        && (!succeeded_uids.is_empty() || !failed_uids.is_empty())
    {
        errs.push(FieldError {
            field: "status.uncountedTerminatedPods".into(),
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {{\"Succeeded\":{},\"Failed\":{}}}: uncountedTerminatedPods needs to be empty for finished job",
                Value::Array(succeeded_uids),
                Value::Array(failed_uids)
            ),
        });
    }
    if (changed("ready") || active_changed)
        && let Some(ready) = status(new, "ready").and_then(Value::as_i64)
        && ready > count(new, "active")
    {
        errs.push(FieldError::invalid(
            "status.ready",
            &Value::from(ready),
            "cannot set more ready pods than active",
        ));
    }
    // ValidateJobStatusUpdate's transition rules.
    let completions = new.pointer("/spec/completions");
    let parallelism = new.pointer("/spec/parallelism");
    if (!indexed || completions != parallelism) && count(new, "succeeded") < count(old, "succeeded")
    {
        errs.push(FieldError::invalid(
            "status.succeeded",
            &Value::from(count(new, "succeeded")),
            "cannot decrease the succeeded counter",
        ));
    }
    if count(new, "failed") < count(old, "failed") {
        errs.push(FieldError::invalid(
            "status.failed",
            &Value::from(count(new, "failed")),
            "cannot decrease the failed counter",
        ));
    }
    for kind in ["Failed", "Complete", "FailureTarget"] {
        if condition_true(old, kind) && !condition_true(new, kind) {
            errs.push(conditions_error(&format!(
                "cannot disable the terminal {kind}=True condition"
            )));
        }
    }
    if let (Some(n), Some(o)) = (completion_time, status(old, "completionTime"))
        && n != o
    {
        errs.push(FieldError::invalid(
            "status.completionTime",
            n,
            "field is immutable",
        ));
    }
    if start_changed
        && status(old, "startTime").is_some()
        && new.pointer("/spec/suspend").and_then(Value::as_bool) != Some(true)
    {
        errs.push(FieldError::required(
            "status.startTime",
            "startTime cannot be removed for unsuspended job",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn job(status: Value) -> Value {
        json!({"spec": {"completions": 1, "parallelism": 1}, "status": status})
    }

    fn fields(old: &Value, new: &Value) -> Vec<String> {
        validate(old, new.as_object().unwrap())
            .into_iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect()
    }

    #[test]
    fn the_recorded_status_errors_should_be_found_in_order() {
        let old = job(json!({"ready": 0, "terminating": 0, "uncountedTerminatedPods": {}}));
        assert_eq!(
            fields(
                &old,
                &job(json!({"active": -1, "ready": 0, "terminating": 0}))
            ),
            vec![
                "status.active: Invalid value: -1: must be greater than or equal to 0",
                "status.ready: Invalid value: 0: cannot set more ready pods than active"
            ]
        );
        let complete =
            job(json!({"ready": 0, "conditions": [{"type": "Complete", "status": "True"}]}));
        assert_eq!(
            fields(&old, &complete),
            vec![
                "status.completionTime: Required value: completionTime is required for Complete jobs",
                "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
                "status.startTime: Required value: startTime is required for finished job"
            ]
        );
        assert!(fields(&old, &job(json!({"ready": 0, "succeeded": 1}))).is_empty());
    }

    #[test]
    fn terminal_conditions_and_counters_should_not_go_back() {
        let old = job(json!({"failed": 2, "startTime": "2030-01-01T00:00:00Z",
            "conditions": [{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}));
        let new = job(json!({"failed": 1, "startTime": "2030-01-01T00:00:00Z"}));
        assert_eq!(
            fields(&old, &new),
            vec![
                "status.failed: Invalid value: 1: cannot decrease the failed counter",
                "status.conditions: Invalid value: cannot disable the terminal Failed=True condition",
                "status.conditions: Invalid value: cannot disable the terminal FailureTarget=True condition"
            ]
        );
    }

    #[test]
    fn a_failed_condition_should_need_the_failure_target() {
        let old = job(json!({"startTime": "2030-01-01T00:00:00Z"}));
        let new = job(json!({"startTime": "2030-01-01T00:00:00Z",
            "conditions": [{"type": "Failed", "status": "True"}]}));
        assert_eq!(
            fields(&old, &new),
            vec![
                "status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"
            ]
        );
    }
}
