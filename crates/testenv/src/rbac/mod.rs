//! Authentication of bearer tokens and RBAC authorization, as kube-apiserver does them with
//! `--authorization-mode=RBAC`.
//!
//! - [`authentication`]: who a request is (the admin, a user token, a ServiceAccount token).
//! - [`request_info`]: the attributes of a request (verb, API group, resource, subresource,
//!   namespace, name, or a non-resource path), parsed from its URL as kube-apiserver's
//!   `RequestInfoFactory` does.
//! - [`rule`]: whether one `PolicyRule` allows a request.
//! - [`authorizer`]: the union kube-apiserver runs (the `system:masters` group, then RBAC from
//!   the stored Roles, ClusterRoles and their bindings; kcr-testenv's
//!   [`AccessRule`](crate::AccessRule)s join in), and the `403 Forbidden` answer.
//! - [`escalation`]: no Role or binding may grant more than its writer holds.
//! - [`impersonation`]: `Impersonate-User` / `Impersonate-Group` (`kubectl --as`).

pub(crate) mod authentication;
pub(crate) mod authorizer;
pub(crate) mod escalation;
pub(crate) mod impersonation;
pub(crate) mod request_info;
pub(crate) mod rule;

pub(crate) use authentication::authenticate;
pub(crate) use authorizer::{authorize, forbidden};
pub(crate) use request_info::Attributes;
