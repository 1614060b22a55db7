//! The HTTP side of resource requests, as kube-apiserver's `endpoints` package: the
//! [`installer`] routes a request to its target and verb, and each verb has its handler module
//! under [`handlers`]. Handlers decode and check the request, then act through the registry
//! ([`crate::registry`]): the generic store and the per-kind rules.

pub(crate) mod handlers;
pub(crate) mod installer;

pub(crate) use installer::{Target, handle, split_api_path};
