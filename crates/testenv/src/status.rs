//! `metav1.Status` error bodies, as the Kubernetes API server sends them.

use serde_json::{Value, json};

/// An API error: becomes a `metav1.Status` body with the matching HTTP status code.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
    /// Seconds for a `Retry-After` header (and `details.retryAfterSeconds`).
    pub(crate) retry_after: Option<u32>,
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    fn qualified(group: &str, resource: &str) -> String {
        if group.is_empty() {
            resource.to_owned()
        } else {
            format!("{resource}.{group}")
        }
    }

    pub(crate) fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", Self::qualified(group, resource)),
        )
        .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    pub(crate) fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    pub(crate) fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!(
                "{} \"{name}\" already exists",
                Self::qualified(group, resource)
            ),
        )
        .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    pub(crate) fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                Self::qualified(group, resource)
            ),
        )
        .with_details(json!({"name": name, "group": group, "kind": resource}))
    }

    pub(crate) fn modified(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// `422 Invalid` with one cause per `(field, message)`.
    pub(crate) fn invalid(
        group: &str,
        kind: &str,
        name: &str,
        causes: &[(&str, &str, String)],
    ) -> Self {
        // The message aggregates the errors as Go's `ErrorList.ToAggregate` does: each distinct
        // text once (the causes keep every error).
        let mut text: Vec<String> = Vec::new();
        for (f, _, m) in causes {
            let line = format!("{f}: {m}");
            if !text.contains(&line) {
                text.push(line);
            }
        }
        let gk = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let message = if text.len() == 1 {
            format!("{gk} \"{name}\" is invalid: {}", text[0])
        } else {
            format!("{gk} \"{name}\" is invalid: [{}]", text.join(", "))
        };
        let causes: Vec<Value> = causes
            .iter()
            .map(|(field, reason, message)| {
                json!({"reason": reason, "message": message, "field": field})
            })
            .collect();
        Self::new(422, "Invalid", message)
            .with_details(json!({"name": name, "group": group, "kind": kind, "causes": causes}))
    }

    pub(crate) fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    pub(crate) fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub(crate) fn too_large_resource_version(requested: u64, current: u64) -> Self {
        Self::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        )
        .with_details(json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1
        }))
    }

    pub(crate) fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub(crate) fn entity_too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// The `reason` Kubernetes uses for a bare HTTP status code.
    pub(crate) fn for_status(code: u16, message: impl Into<String>) -> Self {
        let reason = match code {
            400 => "BadRequest",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "NotFound",
            405 => "MethodNotAllowed",
            409 => "Conflict",
            410 => "Expired",
            413 => "RequestEntityTooLarge",
            415 => "UnsupportedMediaType",
            422 => "Invalid",
            429 => "TooManyRequests",
            500 => "InternalError",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            _ => "Unknown",
        };
        Self::new(code, reason, message)
    }

    /// The `metav1.Status` object.
    pub(crate) fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        // A Status without a reason (kube-apiserver's answer to some internal errors) omits it.
        if self.reason.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.remove("reason");
        }
        let mut details = self.details.clone();
        if let Some(secs) = self.retry_after {
            let d = details.get_or_insert_with(|| json!({}));
            if let Some(map) = d.as_object_mut() {
                map.insert("retryAfterSeconds".into(), json!(secs));
            }
        }
        if let Some(map) = status.as_object_mut() {
            if let Some(mut d) = details {
                // kube-apiserver omits an empty `details.group` and `details.name` (`omitempty`).
                if let Some(details) = d.as_object_mut() {
                    for key in ["group", "name"] {
                        if details.get(key).and_then(Value::as_str) == Some("") {
                            details.remove(key);
                        }
                    }
                    // And the empty `field` of a cause on the whole object.
                    for cause in details
                        .get_mut("causes")
                        .and_then(Value::as_array_mut)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_object_mut)
                    {
                        if cause.get("field").and_then(Value::as_str) == Some("") {
                            cause.remove("field");
                        }
                    }
                }
                map.insert("details".into(), d);
            }
            // kube-apiserver leaves out a reason it has none for (an internal error with a
            // message of its own).
            if self.reason.is_empty() {
                map.remove("reason");
            }
        }
        status
    }
}

/// `Result` of a request handler.
pub(crate) type ApiResult<T> = std::result::Result<T, ApiError>;
