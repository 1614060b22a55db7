//! Who a request is: kube-apiserver's bearer-token authenticators (a static token file, the
//! ServiceAccount token authenticator) as kcr-testenv has them.
//!
//! - The admin token ([`TestEnvBuilder::token`](crate::TestEnvBuilder::token)), and any request
//!   without a token when none is configured, is the admin: a member of `system:masters`, which
//!   may do anything (as the `kubernetes-admin` of a kubeadm cluster).
//! - A token given to [`TestEnvBuilder::user_token`](crate::TestEnvBuilder::user_token) is its
//!   user; a token issued through `serviceaccounts/<name>/token` is
//!   `system:serviceaccount:<namespace>:<name>` while the ServiceAccount exists and the token
//!   has not expired. Every authenticated user is also in `system:authenticated`.
//! - Any other token gets `401` when an admin token is configured or RBAC is enforced; otherwise
//!   (no admin token, no RBAC) it is the admin, as kcr-testenv always answered such requests.

use http::{HeaderMap, header};

use super::authorizer::SYSTEM_MASTERS;
use crate::review::UserInfo;
use crate::server::Shared;
use crate::status::ApiError;

/// The admin's user name.
pub(crate) const ADMIN: &str = "kcr-testenv:admin";
/// The group of every authenticated user.
pub(crate) const SYSTEM_AUTHENTICATED: &str = "system:authenticated";

/// The admin user.
pub(crate) fn admin() -> UserInfo {
    UserInfo::new(ADMIN).groups([SYSTEM_MASTERS, SYSTEM_AUTHENTICATED])
}

/// The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive
/// (RFC 7235), as kube-apiserver accepts it.
pub(crate) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The user a bearer token stands for (the admin token, a user token, a ServiceAccount token);
/// `None` for an unknown token.
pub(crate) fn user_of_token(shared: &Shared, token: &str) -> Option<UserInfo> {
    if shared.options.token.as_deref() == Some(token) {
        return Some(admin());
    }
    if let Some(user) = shared.reviews.lock().tokens.get(token).cloned() {
        return Some(with_authenticated(user));
    }
    crate::subresources::token::authenticate(shared, token)
}

fn with_authenticated(mut user: UserInfo) -> UserInfo {
    if !user.groups.iter().any(|g| g == SYSTEM_AUTHENTICATED) {
        user.groups.push(SYSTEM_AUTHENTICATED.into());
    }
    user
}

/// Authenticates a request from its headers; `401 Unauthorized` when it cannot be.
pub(crate) fn authenticate(shared: &Shared, headers: &HeaderMap) -> Result<UserInfo, ApiError> {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let strict = shared.options.token.is_some() || shared.options.rbac;
    match presented {
        Some(token) => match user_of_token(shared, token) {
            Some(user) => Ok(user),
            None if strict => Err(ApiError::unauthorized()),
            None => Ok(admin()),
        },
        None if shared.options.token.is_some() => Err(ApiError::unauthorized()),
        None => Ok(admin()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_should_be_case_insensitive() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
    }
}
