//! Requests without credentials. kube-apiserver (anonymous authentication on, as by default)
//! serves them as the user `system:anonymous`, whom RBAC lets read only the health and version
//! endpoints: every other request is `403 Forbidden`. A request with a wrong token is `401`.

use http::Method;
use serde_json::json;

use crate::endpoints::split_api_path;
use crate::status::ApiError;

/// Paths `system:anonymous` may read (the `system:public-info-viewer` role).
fn public(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/"
    ) || ["/healthz/", "/livez/", "/readyz/"]
        .iter()
        .any(|p| path.starts_with(p))
}

/// The RBAC verb of a request.
fn verb(method: &Method, named: bool, watch: bool) -> &'static str {
    match (method.as_str(), named) {
        ("GET" | "HEAD", _) if watch => "watch",
        ("GET" | "HEAD", true) => "get",
        ("GET" | "HEAD", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "get",
    }
}

/// `None` when `system:anonymous` may make this request, else kube-apiserver's `403`.
pub(crate) fn forbidden(method: &Method, path: &str, watch: bool) -> Option<ApiError> {
    if public(path) {
        return None;
    }
    let user = "User \"system:anonymous\"";
    let resource = split_api_path(path).and_then(|(group, _version, rest)| {
        let (namespace, rest) = match rest.as_slice() {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(*ns), rest),
            rest => (None, rest),
        };
        let (plural, rest) = rest.split_first()?;
        Some((
            group,
            namespace,
            *plural,
            rest.first().copied(),
            rest.get(1).copied(),
        ))
    });
    let Some((group, namespace, plural, name, sub)) = resource else {
        let verb = method.as_str().to_ascii_lowercase();
        return Some(
            ApiError::new(
                403,
                "Forbidden",
                format!("forbidden: {user} cannot {verb} path \"{path}\""),
            )
            .with_details(json!({})),
        );
    };
    let verb = verb(method, name.is_some(), watch);
    let resource = match sub {
        Some(s) => format!("{plural}/{s}"),
        None => plural.to_owned(),
    };
    let qualified = if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    };
    let subject = match name {
        Some(n) => format!("{qualified} \"{n}\""),
        None => qualified,
    };
    let scope = match namespace {
        Some(ns) => format!(" in the namespace \"{ns}\""),
        None => " at the cluster scope".to_owned(),
    };
    let mut details = json!({"group": group, "kind": plural});
    if let Some(n) = name {
        details["name"] = json!(n);
    }
    if group.is_empty()
        && let Some(d) = details.as_object_mut()
    {
        d.remove("group");
    }
    Some(
        ApiError::new(
            403,
            "Forbidden",
            format!("{subject} is forbidden: {user} cannot {verb} resource \"{resource}\" in API group \"{group}\"{scope}"),
        )
        .with_details(details),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_requests_should_be_forbidden_as_rbac_words_it() {
        let e = forbidden(&Method::GET, "/api/v1/namespaces/ns/configmaps", false).unwrap();
        assert_eq!(
            e.message,
            "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"ns\""
        );
        assert_eq!(e.details, Some(json!({"kind": "configmaps"})));
        let e = forbidden(
            &Method::DELETE,
            "/apis/apps/v1/namespaces/ns/deployments/web",
            false,
        )
        .unwrap();
        assert_eq!(
            e.message,
            "deployments.apps \"web\" is forbidden: User \"system:anonymous\" cannot delete resource \"deployments\" in API group \"apps\" in the namespace \"ns\""
        );
        let e = forbidden(&Method::GET, "/api/v1/nodes", true).unwrap();
        assert!(
            e.message.ends_with(
                "cannot watch resource \"nodes\" in API group \"\" at the cluster scope"
            )
        );
        let e = forbidden(&Method::GET, "/apis", false).unwrap();
        assert_eq!(
            e.message,
            "forbidden: User \"system:anonymous\" cannot get path \"/apis\""
        );
        assert!(forbidden(&Method::GET, "/version", false).is_none());
        assert!(forbidden(&Method::GET, "/readyz/ping", false).is_none());
    }
}
