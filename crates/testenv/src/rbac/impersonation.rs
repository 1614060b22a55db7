//! User impersonation (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` headers;
//! `kubectl --as`), as kube-apiserver's impersonation filter does it: the requester must be
//! allowed to `impersonate` the user (`users`, or `serviceaccounts` in their namespace for a
//! ServiceAccount's name), each group (`groups`) and the uid (`uids`,
//! `authentication.k8s.io`); the request then runs as the impersonated user, who is in
//! `system:authenticated` (and, for a ServiceAccount, its `system:serviceaccounts` groups).

use http::HeaderMap;

use super::authentication::SYSTEM_AUTHENTICATED;
use super::authorizer::{authorize, forbidden};
use super::request_info::Attributes;
use crate::review::UserInfo;
use crate::server::Shared;
use crate::status::ApiError;

fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// The user a request runs as: `user`, or the one it impersonates when allowed to.
pub(crate) fn impersonate(
    shared: &Shared,
    user: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    let Some(name) = values(headers, "impersonate-user").first().copied() else {
        if !values(headers, "impersonate-group").is_empty() {
            return Err(ApiError::internal(
                "requested [{Kind:Group}] without impersonating a user",
            ));
        }
        return Ok(user);
    };
    let groups = values(headers, "impersonate-group");
    let uid = values(headers, "impersonate-uid").first().copied();
    let check = |verb_target: Attributes| -> Result<(), ApiError> {
        if !shared.options.rbac {
            return Ok(());
        }
        let decision = authorize(shared, &verb_target);
        if decision.allowed() {
            Ok(())
        } else {
            Err(forbidden(&verb_target, decision.reason()))
        }
    };
    let mut impersonated = UserInfo::new(name);
    match name
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((ns, sa)) => {
            check(Attributes::resource(
                user.clone(),
                "impersonate",
                ns,
                "",
                "serviceaccounts",
                "",
                sa,
            ))?;
            impersonated.groups = vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{ns}"),
            ];
        }
        None => check(Attributes::resource(
            user.clone(),
            "impersonate",
            "",
            "",
            "users",
            "",
            name,
        ))?,
    }
    for g in &groups {
        check(Attributes::resource(
            user.clone(),
            "impersonate",
            "",
            "",
            "groups",
            "",
            g,
        ))?;
        if !impersonated.groups.iter().any(|x| x == g) {
            impersonated.groups.push((*g).to_owned());
        }
    }
    if let Some(uid) = uid {
        check(Attributes::resource(
            user.clone(),
            "impersonate",
            "",
            "authentication.k8s.io",
            "uids",
            "",
            uid,
        ))?;
        impersonated.uid = uid.to_owned();
    }
    if name != "system:anonymous"
        && !impersonated
            .groups
            .iter()
            .any(|g| g == SYSTEM_AUTHENTICATED)
    {
        impersonated.groups.push(SYSTEM_AUTHENTICATED.to_owned());
    }
    Ok(impersonated)
}
