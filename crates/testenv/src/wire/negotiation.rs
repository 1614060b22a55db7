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

/// `406 Not Acceptable`: the representations of a collection (which also streams watches), or
/// of one object (`item`).
pub(crate) fn not_acceptable(item: bool) -> ApiError {
    let streams = if item {
        ""
    } else {
        ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    };
    ApiError::new(
        406,
        "NotAcceptable",
        format!(
            "406: Not Acceptable\n\nAvailable representations: {}{streams}",
            SERVED.join(", ")
        ),
    )
    .with_details(json!({}))
}

/// Whether an `Accept` header asks only for conversions (`as=...`) the server does not know
/// (kube-apiserver converts to `Table`, `PartialObjectMetadata` and
/// `PartialObjectMetadataList`): then nothing it asks for can be served.
pub(crate) fn unknown_conversion(accept: &str) -> bool {
    let mut any = false;
    for range in accept.split(',') {
        let conversion = range
            .split(';')
            .skip(1)
            .find_map(|p| p.trim().strip_prefix("as="));
        match conversion {
            Some("Table" | "PartialObjectMetadata" | "PartialObjectMetadataList") | None => {
                return false;
            }
            Some(_) => any = true,
        }
    }
    any
}

/// `406` for a conversion the server does not know.
pub(crate) fn conversion_not_acceptable() -> ApiError {
    ApiError::new(
        406,
        "NotAcceptable",
        format!(
            "only the following media types are accepted: {}",
            SERVED.join(", ")
        ),
    )
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
