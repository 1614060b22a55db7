//! `pods/<name>/log`: the log a test set for a container with
//! [`TestEnv::set_pod_log`](crate::TestEnv::set_pod_log) (empty by default), as kubelet would
//! stream it through kube-apiserver. The container is chosen and checked as kube-apiserver does
//! (`container` may be left out only for a Pod with one container); `tailLines` and
//! `limitBytes` cut the text. `follow=true` answers with the log as it is and ends (no kubelet
//! keeps the stream open); `timestamps`, `sinceSeconds`, `sinceTime` and `previous` are accepted
//! and ignored.

use std::collections::HashMap;

use http::{HeaderValue, Response, header};
use serde_json::Value;

use crate::body::Body;
use crate::server::{Request, Shared, error_response, json_response};
use crate::status::ApiError;
use crate::store::object_key;

/// Logs by namespace, Pod and container.
pub(crate) type PodLogs = HashMap<(String, String, String), String>;

fn names(pod: &Value, field: &str) -> Vec<String> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `[a b]`, as Go prints a list of strings.
fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

/// The container a log request is for.
fn container(pod: &Value, pod_name: &str, requested: Option<&str>) -> Result<String, ApiError> {
    let containers = names(pod, "containers");
    let init = names(pod, "initContainers");
    let ephemeral = names(pod, "ephemeralContainers");
    match requested.filter(|c| !c.is_empty()) {
        None if containers.len() == 1 => Ok(containers[0].clone()),
        None => {
            let mut msg = format!(
                "a container name must be specified for pod {pod_name}, choose one of: {}",
                go_list(&containers)
            );
            if !init.is_empty() {
                msg.push_str(&format!(
                    " or one of the init containers: {}",
                    go_list(&init)
                ));
            }
            if !ephemeral.is_empty() {
                msg.push_str(&format!(
                    " or one of the ephemeral containers: {}",
                    go_list(&ephemeral)
                ));
            }
            Err(ApiError::bad_request(msg))
        }
        Some(c)
            if containers
                .iter()
                .chain(&init)
                .chain(&ephemeral)
                .any(|n| n == c) =>
        {
            Ok(c.to_owned())
        }
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {pod_name}"
        ))),
    }
}

fn number(req: &Request, name: &str) -> Result<Option<i64>, ApiError> {
    req.param(name)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid value for {name}: {s:?}")))
        })
        .transpose()
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    match trimmed.match_indices('\n').rev().nth(n - 1) {
        Some((i, _)) => &text[i + 1..],
        None => text,
    }
}

/// `GET .../pods/<name>/log`.
pub(crate) fn get(shared: &Shared, req: &Request, namespace: &str, name: &str) -> Response<Body> {
    let pod = shared
        .store
        .lock()
        .get("/pods", &object_key(Some(namespace), name))
        .map(|s| s.value.clone());
    let Some(pod) = pod else {
        return error_response(&ApiError::not_found("", "pods", name));
    };
    let result = container(&pod, name, req.param("container")).and_then(|c| {
        let tail_lines = number(req, "tailLines")?;
        let limit_bytes = number(req, "limitBytes")?;
        let mut causes = Vec::new();
        if tail_lines.is_some_and(|n| n < 0) {
            causes.push((
                "tailLines",
                "FieldValueInvalid",
                "Invalid value: must be greater than or equal to 0".to_owned(),
            ));
        }
        if limit_bytes.is_some_and(|n| n < 1) {
            causes.push((
                "limitBytes",
                "FieldValueInvalid",
                "Invalid value: must be greater than 0".to_owned(),
            ));
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid("", "PodLogOptions", "", &causes));
        }
        let logs = shared.pod_logs.lock();
        let text = logs
            .get(&(namespace.to_owned(), name.to_owned(), c))
            .map_or("", String::as_str);
        let mut text = match tail_lines {
            Some(n) => tail(text, usize::try_from(n).unwrap_or(0)),
            None => text,
        };
        if let Some(limit) = limit_bytes.and_then(|l| usize::try_from(l).ok())
            && text.len() > limit
        {
            let mut end = limit;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text = &text[..end];
        }
        Ok(text.to_owned())
    });
    match result {
        Ok(text) => {
            let mut resp = json_response(200, text);
            resp.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            resp
        }
        Err(e) => error_response(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_should_keep_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
        assert_eq!(tail("a\nb\n", 5), "a\nb\n");
        assert_eq!(tail("a\nb\n", 0), "");
    }
}
