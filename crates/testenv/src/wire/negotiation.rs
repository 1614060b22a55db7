//! Content negotiation: which media types a client may ask for (`Accept`, else `406`) and send
//! (`Content-Type`, else `415`), with kube-apiserver's messages.

use serde_json::json;

use crate::status::ApiError;

/// The media types served (kube-apiserver's serializers, in its order).
const SERVED: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// Whether an `Accept` header names something kcr-testenv can answer with (JSON; YAML and
/// protobuf clients also accept JSON from kcr-testenv's answers).
pub(crate) fn acceptable(accept: &str) -> bool {
    if accept.trim().is_empty() {
        return true;
    }
    accept.split(',').any(|range| {
        let media = range.split(';').next().unwrap_or_default().trim();
        media.is_empty()
            || media == "*/*"
            || media == "application/*"
            || SERVED.iter().any(|s| s.eq_ignore_ascii_case(media))
    })
}

/// `406 Not Acceptable`.
pub(crate) fn not_acceptable() -> ApiError {
    ApiError::new(
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
    )
    .with_details(json!({}))
}

/// `415 Unsupported Media Type` for a request body.
pub(crate) fn unsupported_media_type() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers_should_be_matched_by_media_type() {
        assert!(acceptable(""));
        assert!(acceptable("application/json"));
        assert!(acceptable(
            "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"
        ));
        assert!(acceptable("application/vnd.kubernetes.protobuf, */*"));
        assert!(acceptable("APPLICATION/YAML"));
        assert!(!acceptable("application/xml"));
        assert!(!acceptable("text/html, image/png"));
    }
}
