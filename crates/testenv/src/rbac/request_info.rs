//! The attributes an authorizer decides on, parsed from a request's URL as kube-apiserver's
//! `RequestInfoFactory` does (before routing: a path that names no served resource still has
//! attributes).

use http::Method;

use crate::review::UserInfo;
use crate::server::Request;

/// What a request does, as an authorizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributes {
    /// The user making the request.
    pub(crate) user: UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; for a
    /// non-resource request the lower-case HTTP method.
    pub(crate) verb: String,
    /// Whether the request is for a resource (else for a non-resource `path`).
    pub(crate) resource_request: bool,
    pub(crate) namespace: String,
    pub(crate) api_group: String,
    pub(crate) resource: String,
    pub(crate) subresource: String,
    pub(crate) name: String,
    /// The URL path (for non-resource requests).
    pub(crate) path: String,
}

impl Attributes {
    /// A resource request.
    pub(crate) fn resource(
        user: UserInfo,
        verb: &str,
        namespace: &str,
        api_group: &str,
        resource: &str,
        subresource: &str,
        name: &str,
    ) -> Self {
        Self {
            user,
            verb: verb.into(),
            resource_request: true,
            namespace: namespace.into(),
            api_group: api_group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            name: name.into(),
            path: String::new(),
        }
    }

    /// A non-resource request.
    pub(crate) fn non_resource(user: UserInfo, verb: &str, path: &str) -> Self {
        Self {
            user,
            verb: verb.into(),
            resource_request: false,
            namespace: String::new(),
            api_group: String::new(),
            resource: String::new(),
            subresource: String::new(),
            name: String::new(),
            path: path.into(),
        }
    }
}

/// The subresources of a namespace that stay part of the namespace's own path
/// (`/api/v1/namespaces/<name>/status`).
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The name a field selector requires (`metadata.name=x` or `metadata.name==x`), as
/// `RequiresExactMatch("metadata.name")`.
fn exact_name(selector: &str) -> Option<&str> {
    selector.split(',').find_map(|term| {
        let (field, value) = term
            .split_once("==")
            .or_else(|| term.split_once('=').filter(|(f, _)| !f.ends_with('!')))?;
        (field.trim() == "metadata.name").then(|| value.trim())
    })
}

/// The attributes of `req` made by `user`.
pub(crate) fn attributes(req: &Request, user: UserInfo) -> Attributes {
    let path = req.path.as_str();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let method_verb = || req.method.as_str().to_ascii_lowercase();
    let non_resource = || Attributes::non_resource(user.clone(), &method_verb(), path);
    if parts.len() < 3 {
        return non_resource();
    }
    let (group, mut rest) = match parts[0] {
        "api" => ("", &parts[1..]),
        "apis" if parts.len() >= 4 => (parts[1], &parts[2..]),
        _ => return non_resource(),
    };
    // `rest` starts with the version.
    rest = &rest[1..];
    let mut verb = match req.method {
        Method::POST => "create",
        Method::GET | Method::HEAD => "get",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    }
    .to_owned();
    // The deprecated `/watch/` prefix.
    if rest.first() == Some(&"watch") && rest.len() >= 2 {
        verb = "watch".into();
        rest = &rest[1..];
    }
    let mut namespace = "";
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = rest[1];
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    let resource = rest.first().copied().unwrap_or_default();
    let mut name = rest.get(1).copied().unwrap_or_default().to_owned();
    let subresource = if rest.len() >= 3 && verb != "watch" {
        rest[2]
    } else {
        ""
    };
    if name.is_empty() && verb == "get" {
        verb = if matches!(req.param("watch"), Some("true" | "1")) {
            "watch".into()
        } else {
            "list".into()
        };
        if let Some(n) = req.param("fieldSelector").and_then(exact_name)
            && !n.contains('/')
            && n != "."
            && n != ".."
        {
            name = n.to_owned();
        }
    }
    if name.is_empty() && verb == "delete" {
        verb = "deletecollection".into();
    }
    Attributes::resource(user, &verb, namespace, group, resource, subresource, &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, uri: &str) -> Request {
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        Request {
            method,
            path: path.into(),
            query: crate::server::parse_query(query),
            headers: http::HeaderMap::new(),
            body: bytes::Bytes::new(),
            warnings: parking_lot::Mutex::new(Vec::new()),
            user: UserInfo::new("u"),
        }
    }

    fn attrs(method: Method, uri: &str) -> (String, String, String, String, String, String) {
        let a = attributes(&request(method, uri), UserInfo::new("u"));
        assert!(a.resource_request, "{uri}");
        (
            a.verb,
            a.namespace,
            a.api_group,
            a.resource,
            a.subresource,
            a.name,
        )
    }

    fn t(
        v: &str,
        ns: &str,
        g: &str,
        r: &str,
        s: &str,
        n: &str,
    ) -> (String, String, String, String, String, String) {
        (v.into(), ns.into(), g.into(), r.into(), s.into(), n.into())
    }

    #[test]
    fn resource_paths_should_give_kube_apiserver_attributes() {
        assert_eq!(
            attrs(Method::GET, "/api/v1/pods"),
            t("list", "", "", "pods", "", "")
        );
        assert_eq!(
            attrs(Method::GET, "/api/v1/namespaces/a/pods?watch=true"),
            t("watch", "a", "", "pods", "", "")
        );
        assert_eq!(
            attrs(Method::GET, "/api/v1/namespaces/a/pods/p/log"),
            t("get", "a", "", "pods", "log", "p")
        );
        assert_eq!(
            attrs(Method::POST, "/api/v1/namespaces/a/pods/p/eviction"),
            t("create", "a", "", "pods", "eviction", "p")
        );
        assert_eq!(
            attrs(Method::DELETE, "/apis/apps/v1/namespaces/a/deployments"),
            t("deletecollection", "a", "apps", "deployments", "", "")
        );
        assert_eq!(
            attrs(
                Method::PUT,
                "/apis/apps/v1/namespaces/a/deployments/d/scale"
            ),
            t("update", "a", "apps", "deployments", "scale", "d")
        );
        // A namespace is its own namespace; `status` and `finalize` stay its subresources.
        assert_eq!(
            attrs(Method::GET, "/api/v1/namespaces/a"),
            t("get", "a", "", "namespaces", "", "a")
        );
        assert_eq!(
            attrs(Method::PUT, "/api/v1/namespaces/a/finalize"),
            t("update", "a", "", "namespaces", "finalize", "a")
        );
        // A list for one name by field selector is authorized for that name.
        assert_eq!(
            attrs(
                Method::GET,
                "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dc"
            ),
            t("list", "a", "", "configmaps", "", "c")
        );
        assert_eq!(
            attrs(
                Method::GET,
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/view"
            ),
            t(
                "get",
                "",
                "rbac.authorization.k8s.io",
                "clusterroles",
                "",
                "view"
            )
        );
    }

    #[test]
    fn discovery_paths_should_be_non_resource_requests() {
        for path in [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps",
            "/apis/apps/v1",
            "/version",
            "/",
        ] {
            let a = attributes(&request(Method::GET, path), UserInfo::new("u"));
            assert!(!a.resource_request, "{path}");
            assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", path));
        }
    }
}
