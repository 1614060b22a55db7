//! `serviceaccounts/<name>/token` (TokenRequest, `authentication.k8s.io/v1`): issues a bound
//! ServiceAccount token that kcr-testenv's authentication and `TokenReview` accept for that
//! ServiceAccount while it exists (same uid), the object it is bound to (`boundObjectRef`, a
//! Pod or Secret) exists, and the token has not expired.
//!
//! The token is a JWT-shaped string with kube-apiserver's claims (`iss`, `sub`, `aud`, `exp`,
//! `iat`, `nbf`, `jti`, `kubernetes.io`), so code that decodes its payload reads the same
//! values; its third part is a random nonce, not a signature: kcr-testenv verifies a token by
//! looking it up among those it issued, not by a signing key.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::meta::{self, meta_str};
use crate::review::UserInfo;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::object_key;

/// The audience of kube-apiserver itself (its `--api-audiences`, as a kind cluster sets it),
/// and the issuer of its tokens.
pub(crate) const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";
/// `spec.expirationSeconds` when a TokenRequest sets none.
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest expiration a TokenRequest may ask for (10 minutes).
const MIN_EXPIRATION_SECONDS: i64 = 600;
const SERVICE_ACCOUNTS: &str = "/serviceaccounts";
/// The credential-id `extra` key a ServiceAccount token's user carries.
const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";

/// One issued token.
#[derive(Debug, Clone)]
pub(crate) struct IssuedToken {
    namespace: String,
    name: String,
    uid: String,
    audiences: Vec<String>,
    /// Seconds since the Unix epoch.
    expires: u64,
    jti: String,
    /// The object the token is bound to (storage, key, uid): the token is valid while it exists.
    bound: Option<(&'static str, String, String)>,
}

/// The tokens issued so far, by token.
pub(crate) type IssuedTokens = HashMap<String, IssuedToken>;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Base64url without padding (JWT segments).
fn base64url(data: &[u8]) -> String {
    crate::tls::base64(data)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

/// The user a ServiceAccount is.
pub(crate) fn service_account_user(namespace: &str, name: &str, uid: &str) -> UserInfo {
    UserInfo::new(format!("system:serviceaccount:{namespace}:{name}"))
        .uid(uid)
        .groups([
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".to_owned(),
        ])
}

/// The ServiceAccount user of a token issued here that is still valid for one of `audiences`,
/// and the audiences it is valid for.
fn valid(
    shared: &Shared,
    token: &str,
    audiences: &[String],
) -> Option<(UserInfo, Vec<String>, String)> {
    let issued = shared.issued_tokens.lock().get(token).cloned()?;
    if issued.expires <= now_secs() {
        return None;
    }
    let matching: Vec<String> = issued
        .audiences
        .iter()
        .filter(|a| audiences.contains(a))
        .cloned()
        .collect();
    if matching.is_empty() {
        return None;
    }
    let store = shared.store.lock();
    let sa = store.get(
        SERVICE_ACCOUNTS,
        &object_key(Some(&issued.namespace), &issued.name),
    )?;
    if meta_str(&sa.value, "uid") != Some(issued.uid.as_str()) {
        return None;
    }
    if let Some((storage, key, uid)) = &issued.bound
        && store
            .get(storage, key)
            .is_none_or(|o| meta_str(&o.value, "uid") != Some(uid.as_str()))
    {
        return None;
    }
    Some((
        service_account_user(&issued.namespace, &issued.name, &issued.uid),
        matching,
        issued.jti,
    ))
}

/// Authenticates a request's token as a ServiceAccount (for kube-apiserver's own audience).
pub(crate) fn authenticate(shared: &Shared, token: &str) -> Option<UserInfo> {
    valid(shared, token, &[API_AUDIENCE.to_owned()]).map(|(user, _, _)| user)
}

/// The `status` of a `TokenReview` of a ServiceAccount token (`None`: not one issued here).
pub(crate) fn review(shared: &Shared, token: &str, audiences: &[String]) -> Option<Value> {
    let wanted = if audiences.is_empty() {
        vec![API_AUDIENCE.to_owned()]
    } else {
        audiences.to_vec()
    };
    let (user, matching, jti) = valid(shared, token, &wanted)?;
    Some(json!({
        "authenticated": true,
        "user": {
            "username": user.name,
            "uid": user.uid,
            "groups": user.groups,
            "extra": {CREDENTIAL_ID: [format!("JTI={jti}")]},
        },
        "audiences": matching,
    }))
}

fn invalid(name: &str, field: &str, message: String) -> ApiError {
    ApiError::invalid(
        "authentication.k8s.io",
        "TokenRequest",
        name,
        &[(field, "FieldValueInvalid", message)],
    )
}

/// Issues a token for the ServiceAccount `namespace/name` (the TokenRequest `request`, as JSON)
/// and returns the TokenRequest with its `status`.
pub(crate) fn issue(
    shared: &Shared,
    namespace: &str,
    name: &str,
    request: &Value,
) -> ApiResult<Value> {
    if let Some(n) = meta_str(request, "name").filter(|n| !n.is_empty() && *n != name) {
        return Err(invalid(
            name,
            "metadata.name",
            format!("Invalid value: {n:?}: must match the service account name if specified"),
        ));
    }
    if let Some(ns) = meta_str(request, "namespace").filter(|n| !n.is_empty() && *n != namespace) {
        return Err(invalid(
            name,
            "metadata.namespace",
            format!("Invalid value: {ns:?}: must match the service account namespace if specified"),
        ));
    }
    let expiration = match request.pointer("/spec/expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION_SECONDS,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.expirationSeconds must be an integer"))?,
    };
    if expiration < MIN_EXPIRATION_SECONDS {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!("Invalid value: {expiration}: may not specify a duration less than 10 minutes"),
        ));
    }
    if expiration > 1 << 32 {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!(
                "Invalid value: {expiration}: may not specify a duration larger than 2^32 seconds"
            ),
        ));
    }
    let mut audiences: Vec<String> = request
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences.push(API_AUDIENCE.to_owned());
    }
    let store = shared.store.lock();
    let sa = store
        .get(SERVICE_ACCOUNTS, &object_key(Some(namespace), name))
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let uid = meta_str(&sa.value, "uid").unwrap_or_default().to_owned();
    let mut bound_to = None;
    let mut claims_k8s = json!({
        "namespace": namespace,
        "serviceaccount": {"name": name, "uid": uid},
    });
    if let Some(bound) = request
        .pointer("/spec/boundObjectRef")
        .filter(|b| !b.is_null())
    {
        let kind = bound
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let api_version = bound
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let bound_name = bound
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (storage, claim) = match (api_version, kind) {
            ("v1", "Pod") => ("/pods", "pod"),
            ("v1", "Secret") => ("/secrets", "secret"),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token to object of type {}, Kind={kind}",
                    if api_version.is_empty() {
                        "/"
                    } else {
                        api_version
                    }
                )));
            }
        };
        let object = store
            .get(storage, &object_key(Some(namespace), bound_name))
            .ok_or_else(|| ApiError::not_found("", &storage[1..], bound_name))?;
        if claim == "pod" {
            let pod_sa = object
                .value
                .pointer("/spec/serviceAccountName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if pod_sa != name {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token for serviceaccount {name:?} to pod running with serviceaccount {pod_sa:?}"
                )));
            }
        }
        let actual = meta_str(&object.value, "uid").unwrap_or_default();
        if let Some(want) = bound
            .get("uid")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            && want != actual
        {
            return Err(ApiError::conflict(
                "",
                kind,
                bound_name,
                &format!(
                    "the UID in the bound object reference ({want}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                ),
            ));
        }
        claims_k8s[claim] = json!({"name": bound_name, "uid": actual});
        bound_to = Some((
            storage,
            object_key(Some(namespace), bound_name),
            actual.to_owned(),
        ));
    }
    drop(store);
    let now = now_secs();
    let expires = now + expiration.unsigned_abs();
    let jti = meta::new_uid();
    let claims = json!({
        "aud": audiences,
        "exp": expires,
        "iat": now,
        "iss": API_AUDIENCE,
        "jti": jti,
        "kubernetes.io": claims_k8s,
        "nbf": now,
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
    });
    let header = json!({"alg": "RS256", "kid": "kcr-testenv"});
    let nonce = format!("{}{}", meta::new_uid(), meta::new_uid());
    let token = format!(
        "{}.{}.{}",
        base64url(header.to_string().as_bytes()),
        base64url(claims.to_string().as_bytes()),
        base64url(nonce.as_bytes())
    );
    shared.issued_tokens.lock().insert(
        token.clone(),
        IssuedToken {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            uid,
            audiences: audiences.clone(),
            expires,
            jti,
            bound: bound_to,
        },
    );
    let mut out = request.clone();
    out["kind"] = json!("TokenRequest");
    out["apiVersion"] = json!("authentication.k8s.io/v1");
    if !out.get("metadata").is_some_and(Value::is_object) {
        out["metadata"] = json!({});
    }
    out["metadata"]["name"] = json!(name);
    out["metadata"]["namespace"] = json!(namespace);
    out["metadata"]["creationTimestamp"] = Value::Null;
    if !out.get("spec").is_some_and(Value::is_object) {
        out["spec"] = json!({});
    }
    out["spec"]["audiences"] = json!(audiences);
    out["spec"]["expirationSeconds"] = json!(expiration);
    if out["spec"].get("boundObjectRef").is_none() {
        out["spec"]["boundObjectRef"] = Value::Null;
    }
    out["status"] = json!({
        "token": token,
        "expirationTimestamp": meta::rfc3339(expires),
    });
    Ok(out)
}

/// `POST .../serviceaccounts/<name>/token`.
pub(crate) fn create(
    shared: &Shared,
    req: &Request,
    namespace: &str,
    name: &str,
) -> ApiResult<(u16, Bytes)> {
    let body: Value = if req.body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(&req.body).map_err(|e| {
            ApiError::bad_request(format!("the body is not a valid TokenRequest: {e}"))
        })?
    };
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body is not a valid TokenRequest",
        ));
    }
    let out = issue(shared, namespace, name, &body)?;
    Ok((
        201,
        Bytes::from(serde_json::to_vec(&out).unwrap_or_default()),
    ))
}
