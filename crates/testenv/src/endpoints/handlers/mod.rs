//! One module per verb, as kube-apiserver's `endpoints/handlers`: [`get`], [`list`] (with the
//! list options that [`watch`] and [`delete`]'s `deletecollection` share), [`create`],
//! [`update`], [`patch`] (server-side apply included), [`delete`], [`watch`], and the `scale`
//! subresource ([`scale`]); [`rest`] holds what they share.

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod get;
pub(crate) mod list;
pub(crate) mod patch;
pub(crate) mod rest;
pub(crate) mod scale;
pub(crate) mod update;
pub(crate) mod watch;
