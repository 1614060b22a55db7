//! The authentication and authorization review APIs: `authentication.k8s.io/v1`
//! `tokenreviews` and `selfsubjectreviews`, `authorization.k8s.io/v1` `subjectaccessreviews`,
//! `selfsubjectaccessreviews` and (namespaced) `localsubjectaccessreviews`, answered from a
//! configurable [`Reviews`] policy (known tokens and allow rules), the ServiceAccount tokens
//! the server issued, and the RBAC objects it stores (see [`crate::rbac`]).
//!
//! All are create-only, as on kube-apiserver: a `POST` answers `201` with the review and its
//! `status` filled in; nothing is stored.

use std::collections::HashMap;
use std::sync::Arc;

use http::{Method, Response};
use serde_json::{Value, json};

use crate::body::Body;
use crate::server::{Request, Shared, error_response, json_response};
use crate::status::ApiError;

/// The collection path of `TokenReview`s.
const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
/// The collection path of `SubjectAccessReview`s.
const SUBJECT_ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
/// The collection path of `SelfSubjectAccessReview`s.
const SELF_SUBJECT_ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
/// The collection path of `SelfSubjectReview`s.
const SELF_SUBJECT_REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// The user a token stands for, as a `TokenReview` reports it.
///
/// ```
/// use kcr_testenv::UserInfo;
/// let alice = UserInfo::new("alice").groups(["monitoring"]);
/// assert_eq!(alice.groups, ["monitoring"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct UserInfo {
    /// `status.user.username`.
    pub name: String,
    /// `status.user.uid` (empty: left out).
    pub uid: String,
    /// `status.user.groups`.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user with this name, no uid and no groups.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            uid: String::new(),
            groups: Vec::new(),
        }
    }

    /// Sets the uid.
    pub fn uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = uid.into();
        self
    }

    /// Sets the groups.
    pub fn groups<S: Into<String>>(mut self, groups: impl IntoIterator<Item = S>) -> Self {
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }
}

/// Who an [`AccessRule`] applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    User(String),
    Group(String),
}

/// What an [`AccessRule`] allows.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Nothing,
    NonResource(Vec<String>),
    Resource {
        api_groups: Vec<String>,
        resources: Vec<String>,
        namespaces: Option<Vec<String>>,
    },
}

/// One rule that allows a `SubjectAccessReview`, in the spirit of an RBAC rule bound to a user or
/// a group: a review is allowed when some rule matches its subject, its verb and its resource
/// (or non-resource URL); every other review is denied. `*` matches any verb, API group or
/// resource; a URL ending in `*` matches by prefix.
///
/// ```
/// use kcr_testenv::AccessRule;
/// // May scrape /metrics.
/// let scrape = AccessRule::user("prometheus").verbs(["get"]).non_resource_urls(["/metrics"]);
/// // Members of `readers` may read deployments (and their status) in `default`.
/// let read = AccessRule::group("readers")
///     .verbs(["get", "list", "watch"])
///     .resources("apps", ["deployments", "deployments/status"])
///     .namespaces(["default"]);
/// # let _ = (scrape, read);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct AccessRule {
    subject: Subject,
    verbs: Vec<String>,
    target: Target,
}

fn strings<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Vec<String> {
    items.into_iter().map(Into::into).collect()
}

impl AccessRule {
    /// A rule for the user with this name (it allows nothing until given verbs and a target).
    pub fn user(name: impl Into<String>) -> Self {
        Self {
            subject: Subject::User(name.into()),
            verbs: Vec::new(),
            target: Target::Nothing,
        }
    }

    /// A rule for every member of this group.
    pub fn group(name: impl Into<String>) -> Self {
        Self {
            subject: Subject::Group(name.into()),
            verbs: Vec::new(),
            target: Target::Nothing,
        }
    }

    /// The verbs allowed (`get`, `list`, `create`, ... or `*`).
    pub fn verbs<S: Into<String>>(mut self, verbs: impl IntoIterator<Item = S>) -> Self {
        self.verbs = strings(verbs);
        self
    }

    /// Allows these non-resource URLs (`/metrics`, `/healthz`, `/debug/*`, `*`).
    pub fn non_resource_urls<S: Into<String>>(mut self, urls: impl IntoIterator<Item = S>) -> Self {
        self.target = Target::NonResource(strings(urls));
        self
    }

    /// Allows these resources of an API group (`""` is the core group, `*` any group);
    /// a subresource is written `pods/log`, `*` matches every resource.
    pub fn resources<S: Into<String>>(
        mut self,
        api_group: impl Into<String>,
        resources: impl IntoIterator<Item = S>,
    ) -> Self {
        let namespaces = match self.target {
            Target::Resource { namespaces, .. } => namespaces,
            _ => None,
        };
        self.target = Target::Resource {
            api_groups: vec![api_group.into()],
            resources: strings(resources),
            namespaces,
        };
        self
    }

    /// Restricts a resource rule to these namespaces (default: every namespace and
    /// cluster-scoped requests). Call after [`AccessRule::resources`].
    pub fn namespaces<S: Into<String>>(mut self, namespaces: impl IntoIterator<Item = S>) -> Self {
        if let Target::Resource { namespaces: ns, .. } = &mut self.target {
            *ns = Some(strings(namespaces));
        }
        self
    }

    fn matches_subject(&self, user: &str, groups: &[String]) -> bool {
        match &self.subject {
            Subject::User(name) => name == user,
            Subject::Group(g) => groups.iter().any(|x| x == g),
        }
    }

    fn matches(&self, review: &AccessRequest) -> bool {
        if !self.matches_subject(&review.user, &review.groups) {
            return false;
        }
        if !self.verbs.iter().any(|v| v == "*" || *v == review.verb) {
            return false;
        }
        match (&self.target, &review.target) {
            (Target::NonResource(urls), RequestTarget::NonResource { path }) => {
                urls.iter().any(|u| match u.strip_suffix('*') {
                    Some(prefix) => path.starts_with(prefix),
                    None => u == path,
                })
            }
            (
                Target::Resource {
                    api_groups,
                    resources,
                    namespaces,
                },
                RequestTarget::Resource {
                    namespace,
                    group,
                    resource,
                    subresource,
                },
            ) => {
                let combined = if subresource.is_empty() {
                    resource.clone()
                } else {
                    format!("{resource}/{subresource}")
                };
                api_groups.iter().any(|g| g == "*" || g == group)
                    && resources.iter().any(|r| {
                        r == "*"
                            || *r == combined
                            || (!subresource.is_empty() && *r == format!("*/{subresource}"))
                    })
                    && namespaces
                        .as_ref()
                        .is_none_or(|ns| ns.iter().any(|n| n == namespace))
            }
            _ => false,
        }
    }
}

/// The tokens and rules the review APIs answer from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policy {
    pub(crate) tokens: HashMap<String, UserInfo>,
    pub(crate) rules: Vec<AccessRule>,
}

/// The policy behind `TokenReview` and `SubjectAccessReview`, changeable while the server runs.
/// Get one from [`TestEnv::reviews`](crate::TestEnv::reviews); the builder sets the initial
/// policy with [`TestEnvBuilder::user_token`](crate::TestEnvBuilder::user_token) and
/// [`TestEnvBuilder::allow`](crate::TestEnvBuilder::allow).
///
/// A client that sends one of these tokens is that user (see
/// [`TestEnv::client_for_user`](crate::TestEnv::client_for_user)); with
/// [`TestEnvBuilder::rbac`](crate::TestEnvBuilder::rbac) its requests are authorized as
/// `SubjectAccessReview`s are answered.
#[derive(Clone)]
pub struct Reviews {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Reviews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reviews").finish_non_exhaustive()
    }
}

impl Reviews {
    /// A `TokenReview` of `token` now authenticates `user`.
    pub fn add_token(&self, token: impl Into<String>, user: UserInfo) {
        self.shared.reviews.lock().tokens.insert(token.into(), user);
    }

    /// A `TokenReview` of `token` no longer authenticates.
    pub fn remove_token(&self, token: &str) {
        self.shared.reviews.lock().tokens.remove(token);
    }

    /// Adds an allow rule for `SubjectAccessReview`s.
    pub fn allow(&self, rule: AccessRule) {
        self.shared.reviews.lock().rules.push(rule);
    }

    /// Removes every allow rule: every `SubjectAccessReview` is denied.
    pub fn clear_rules(&self) {
        self.shared.reviews.lock().rules.clear();
    }
}

/// Whether one of `rules` allows the request `a`.
pub(crate) fn access_rules_allow(rules: &[AccessRule], a: &crate::rbac::Attributes) -> bool {
    if rules.is_empty() {
        return false;
    }
    let request = AccessRequest {
        user: a.user.name.clone(),
        groups: a.user.groups.clone(),
        verb: a.verb.clone(),
        target: if a.resource_request {
            RequestTarget::Resource {
                namespace: a.namespace.clone(),
                group: a.api_group.clone(),
                resource: a.resource.clone(),
                subresource: a.subresource.clone(),
            }
        } else {
            RequestTarget::NonResource {
                path: a.path.clone(),
            }
        },
    };
    rules.iter().any(|r| r.matches(&request))
}

/// What a `SubjectAccessReview` asks about.
#[derive(Debug)]
enum RequestTarget {
    NonResource {
        path: String,
    },
    Resource {
        namespace: String,
        group: String,
        resource: String,
        subresource: String,
    },
}

#[derive(Debug)]
struct AccessRequest {
    user: String,
    groups: Vec<String>,
    verb: String,
    target: RequestTarget,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Which review a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Review {
    Token,
    SelfSubject,
    SubjectAccess,
    SelfSubjectAccess,
    LocalSubjectAccess,
}

impl Review {
    fn group_kind(self) -> (&'static str, &'static str) {
        match self {
            Review::Token => ("authentication.k8s.io", "TokenReview"),
            Review::SelfSubject => ("authentication.k8s.io", "SelfSubjectReview"),
            Review::SubjectAccess => ("authorization.k8s.io", "SubjectAccessReview"),
            Review::SelfSubjectAccess => ("authorization.k8s.io", "SelfSubjectAccessReview"),
            Review::LocalSubjectAccess => ("authorization.k8s.io", "LocalSubjectAccessReview"),
        }
    }
}

/// The review a path names (and the namespace of a `LocalSubjectAccessReview`); `Err` for a
/// path under a review collection that names nothing.
fn review_of(path: &str) -> Option<Result<(Review, Option<&str>), ()>> {
    for (prefix, review) in [
        (TOKEN_REVIEWS, Review::Token),
        (SELF_SUBJECT_REVIEWS, Review::SelfSubject),
        (SUBJECT_ACCESS_REVIEWS, Review::SubjectAccess),
        (SELF_SUBJECT_ACCESS_REVIEWS, Review::SelfSubjectAccess),
    ] {
        if path == prefix {
            return Some(Ok((review, None)));
        }
        // Reviews have no names, so `.../tokenreviews/<name>` is nothing (as on kube-apiserver).
        if path
            .strip_prefix(prefix)
            .is_some_and(|r| r.starts_with('/'))
        {
            return Some(Err(()));
        }
    }
    let rest = path.strip_prefix("/apis/authorization.k8s.io/v1/namespaces/")?;
    let (namespace, rest) = rest.split_once('/')?;
    match rest {
        "localsubjectaccessreviews" if !namespace.is_empty() => {
            Some(Ok((Review::LocalSubjectAccess, Some(namespace))))
        }
        r if r.starts_with("localsubjectaccessreviews/") => Some(Err(())),
        _ => None,
    }
}

/// Serves the review paths; `None` for any other path.
pub(crate) fn handle(shared: &Shared, req: &Request) -> Option<Response<Body>> {
    let path = req.path.trim_end_matches('/');
    let (review, namespace) = match review_of(path)? {
        Ok(found) => found,
        Err(()) => return Some(error_response(&ApiError::path_not_found())),
    };
    let (group, kind) = review.group_kind();
    if req.method != Method::POST {
        return Some(error_response(&ApiError::method_not_allowed()));
    }
    let plural = path.rsplit('/').next().unwrap_or_default();
    if let Some(f) = shared.faults.lock().take_failure("create", plural) {
        let mut e = ApiError::for_status(f.code(), "kcr-testenv: injected failure");
        e.retry_after = f.retry_after_seconds();
        return Some(error_response(&e));
    }
    let result = serde_json::from_slice::<Value>(&req.body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a valid {kind}: {e}")))
        .and_then(|body| {
            let api_version = format!("{group}/v1");
            let found_kind = str_at(&body, "/kind");
            let found_version = str_at(&body, "/apiVersion");
            if !body.is_object()
                || (!found_kind.is_empty() && found_kind != kind)
                || (!found_version.is_empty() && found_version != api_version)
            {
                return Err(ApiError::bad_request(format!(
                    "the body is not a {api_version} {kind} (got {found_version:?} {found_kind:?})"
                )));
            }
            let mut out = body;
            let status = match review {
                Review::Token => token_review(shared, &out)?,
                Review::SelfSubject => json!({"userInfo": user_info_json(&req.user)}),
                Review::SubjectAccess => subject_access_review(shared, &out, None)?,
                Review::SelfSubjectAccess => {
                    // The spec is the requester's, whatever the body says.
                    let spec = out
                        .get("spec")
                        .cloned()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    let mut full = json!({"spec": spec});
                    full["spec"]["user"] = json!(req.user.name);
                    full["spec"]["groups"] = json!(req.user.groups);
                    if !req.user.uid.is_empty() {
                        full["spec"]["uid"] = json!(req.user.uid);
                    }
                    subject_access_review(shared, &full, None)?
                }
                Review::LocalSubjectAccess => subject_access_review(shared, &out, namespace)?,
            };
            out["apiVersion"] = json!(api_version);
            out["kind"] = json!(kind);
            if !out.get("metadata").is_some_and(Value::is_object) {
                out["metadata"] = json!({});
            }
            out["metadata"]["creationTimestamp"] = Value::Null;
            if let (Review::LocalSubjectAccess, Some(ns)) = (review, namespace) {
                out["metadata"]["namespace"] = json!(ns);
            }
            out["status"] = status;
            Ok(out)
        });
    Some(match result {
        Ok(out) => json_response(201, crate::serializer::to_vec(&out)),
        Err(e) => error_response(&e),
    })
}

/// A `UserInfo` as the review APIs write it.
fn user_info_json(u: &UserInfo) -> Value {
    let mut user = json!({"username": u.name, "groups": u.groups});
    if !u.uid.is_empty() {
        user["uid"] = json!(u.uid);
    }
    user
}

fn token_review(shared: &Shared, body: &Value) -> Result<Value, ApiError> {
    let token = str_at(body, "/spec/token");
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences = body
        .pointer("/spec/audiences")
        .cloned()
        .unwrap_or_else(|| json!([]));
    let user = shared.reviews.lock().tokens.get(token).cloned();
    if let Some(u) = user {
        return Ok(
            json!({"authenticated": true, "user": user_info_json(&u), "audiences": audiences}),
        );
    }
    let wanted: Vec<String> = audiences
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok(
        crate::subresources::token::review(shared, token, &wanted).unwrap_or_else(
            || json!({"authenticated": false, "user": {}, "error": "invalid bearer token"}),
        ),
    )
}

/// The `status` of a (local, when `local_namespace` is set) `SubjectAccessReview`.
fn subject_access_review(
    shared: &Shared,
    body: &Value,
    local_namespace: Option<&str>,
) -> Result<Value, ApiError> {
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let user = str_at(&spec, "/user").to_owned();
    let groups: Vec<String> = spec
        .get("groups")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|g| g.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut causes = Vec::new();
    if user.is_empty() && groups.is_empty() {
        causes.push((
            "spec.[user,groups]",
            "FieldValueRequired",
            "at least one of user or group must be specified".to_owned(),
        ));
    }
    if let (Some(ns), Some(r)) = (local_namespace, resource) {
        let given = str_at(r, "/namespace");
        if !given.is_empty() && given != ns {
            return Err(ApiError::bad_request(format!(
                "spec.resourceAttributes.namespace must match namespace: {ns}"
            )));
        }
    }
    let (verb, target) = match (resource, non_resource) {
        (Some(r), None) => (
            str_at(r, "/verb"),
            RequestTarget::Resource {
                namespace: local_namespace
                    .map_or_else(|| str_at(r, "/namespace").to_owned(), str::to_owned),
                group: str_at(r, "/group").to_owned(),
                resource: str_at(r, "/resource").to_owned(),
                subresource: str_at(r, "/subresource").to_owned(),
            },
        ),
        (None, Some(n)) => (
            str_at(n, "/verb"),
            RequestTarget::NonResource {
                path: str_at(n, "/path").to_owned(),
            },
        ),
        _ => {
            causes.push((
                "spec.[resourceAttributes,nonResourceAttributes]",
                "FieldValueInvalid",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified"
                    .to_owned(),
            ));
            return Err(ApiError::invalid(
                "authorization.k8s.io",
                "SubjectAccessReview",
                "",
                &causes,
            ));
        }
    };
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            "authorization.k8s.io",
            "SubjectAccessReview",
            "",
            &causes,
        ));
    }
    let name = match (&target, resource) {
        (RequestTarget::Resource { .. }, Some(r)) => str_at(r, "/name").to_owned(),
        _ => String::new(),
    };
    let user = UserInfo::new(user)
        .uid(str_at(&spec, "/uid"))
        .groups(groups);
    let attributes = match target {
        RequestTarget::Resource {
            namespace,
            group,
            resource,
            subresource,
        } => crate::rbac::Attributes::resource(
            user,
            verb,
            &namespace,
            &group,
            &resource,
            &subresource,
            &name,
        ),
        RequestTarget::NonResource { path } => {
            crate::rbac::Attributes::non_resource(user, verb, &path)
        }
    };
    let decision = crate::rbac::authorize(shared, &attributes);
    let mut status = json!({"allowed": decision.allowed()});
    if !decision.reason().is_empty() {
        status["reason"] = json!(decision.reason());
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn non_resource(user: &str, groups: &[&str], verb: &str, path: &str) -> AccessRequest {
        AccessRequest {
            user: user.into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            verb: verb.into(),
            target: RequestTarget::NonResource { path: path.into() },
        }
    }

    fn resource(verb: &str, ns: &str, group: &str, res: &str, sub: &str) -> AccessRequest {
        AccessRequest {
            user: "u".into(),
            groups: vec![],
            verb: verb.into(),
            target: RequestTarget::Resource {
                namespace: ns.into(),
                group: group.into(),
                resource: res.into(),
                subresource: sub.into(),
            },
        }
    }

    #[test]
    fn a_non_resource_rule_should_match_its_subject_verb_and_url_only() {
        let rule = AccessRule::user("alice")
            .verbs(["get"])
            .non_resource_urls(["/metrics"]);
        assert!(rule.matches(&non_resource("alice", &[], "get", "/metrics")));
        assert!(!rule.matches(&non_resource("bob", &[], "get", "/metrics")));
        assert!(!rule.matches(&non_resource("alice", &[], "post", "/metrics")));
        assert!(!rule.matches(&non_resource("alice", &[], "get", "/metrics/x")));
        let prefix = AccessRule::group("ops")
            .verbs(["*"])
            .non_resource_urls(["/debug/*"]);
        assert!(prefix.matches(&non_resource("x", &["ops"], "get", "/debug/pprof")));
        assert!(!prefix.matches(&non_resource("x", &["dev"], "get", "/debug/pprof")));
    }

    #[test]
    fn a_resource_rule_should_match_group_resource_subresource_and_namespace() {
        let rule = AccessRule::user("u")
            .verbs(["get", "list"])
            .resources("apps", ["deployments", "*/scale"])
            .namespaces(["default"]);
        assert!(rule.matches(&resource("get", "default", "apps", "deployments", "")));
        assert!(rule.matches(&resource("get", "default", "apps", "deployments", "scale")));
        assert!(!rule.matches(&resource("get", "default", "apps", "deployments", "status")));
        assert!(!rule.matches(&resource("get", "other", "apps", "deployments", "")));
        assert!(!rule.matches(&resource("get", "default", "", "deployments", "")));
        assert!(!rule.matches(&resource("delete", "default", "apps", "deployments", "")));
        let nothing = AccessRule::user("u").verbs(["*"]);
        assert!(!nothing.matches(&resource("get", "default", "apps", "deployments", "")));
        assert!(!rule.matches(&non_resource("u", &[], "get", "/metrics")));
    }
}
